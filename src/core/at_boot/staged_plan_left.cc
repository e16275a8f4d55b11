// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/at_boot/staged_plan_left.h"

#include <fmt/format.h>

#include "partalign/table/plan_check.h"

namespace partalign {
namespace {

bool At(const Partition& p, uint64_t start, uint64_t end) {
  return p.start_sector == start && p.end_sector() == end;
}

// Every partition the plan shrinks has its shrunk size at its old start: the shrinks were
// written (they run before any move).
bool ShrinksWritten(const Plan& plan, const PartitionTable& now) {
  const std::vector<PlannedShrink> shrinks = PlanShrinks(plan);
  if (shrinks.empty()) return false;
  for (const PlannedShrink& s : shrinks) {
    const Partition* p = now.Find(s.partition);
    const PlanAction* a = nullptr;
    for (const PlanAction& action : plan.actions) {
      if (action.partition == s.partition) a = &action;
    }
    if (p == nullptr || a == nullptr || p->start_sector != a->old_start_sector ||
        p->size_sectors != s.size_sectors) {
      return false;
    }
  }
  return true;
}

}  // namespace

Result<PlanLeft> StagedPlanLeft(const Plan& staged, const PartitionTable& now) {
  PlanLeft out{staged, 0, 0};
  for (const PlanAction& a : staged.actions) {
    if (a.kind == ActionKind::kTableOnly || a.kind == ActionKind::kMoveData) ++out.left;
  }
  if (now.fingerprint == staged.table_fingerprint) return out;
  if (ShrinksWritten(staged, now)) out.plan = PlanAfterShrinks(staged);
  out.left = 0;
  for (PlanAction& a : out.plan.actions) {
    if (a.kind != ActionKind::kTableOnly && a.kind != ActionKind::kMoveData) continue;
    const Partition* p = now.Find(a.partition);
    if (p == nullptr) {
      return MakeError(
          fmt::format("partition {} of the staged plan is not on the disk", a.partition));
    }
    if (At(*p, a.new_start_sector, a.new_end_sector)) {
      a = PlanAction{.partition = a.partition,
                     .old_start_sector = a.new_start_sector,
                     .old_end_sector = a.new_end_sector,
                     .new_start_sector = a.new_start_sector,
                     .new_end_sector = a.new_end_sector,
                     .kind = ActionKind::kNone,
                     .reason = "done by an earlier boot"};
      ++out.done;
      continue;
    }
    if (At(*p, a.old_start_sector, a.old_end_sector)) {
      ++out.left;
      continue;
    }
    return MakeError(fmt::format(
        "partition {} is at sectors {}-{}: neither where the staged plan found it ({}-{}) nor "
        "where it puts it ({}-{})",
        a.partition, p->start_sector, p->end_sector(), a.old_start_sector, a.old_end_sector,
        a.new_start_sector, a.new_end_sector));
  }
  out.plan.table_fingerprint = now.fingerprint;
  out.plan.disk.table_id = now.disk_id;
  return out;
}

}  // namespace partalign
