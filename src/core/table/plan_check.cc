// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/table/plan_check.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "partalign/layout/planner.h"
#include "partalign/util/checked_math.h"
#include "partalign/util/json_reader.h"
#include "partalign/util/shell_quote.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

std::string Quoted(const std::string& s) {
  return s.empty() ? "none" : "'" + Printable(s, 128) + "'";
}

void CompareTopology(const Topology& plan, const Topology& now, std::vector<std::string>* out) {
  struct Field {
    const char* name;
    uint64_t plan;
    uint64_t now;
  };
  const Field fields[] = {
      {"physical sector size", plan.physical_sector_size, now.physical_sector_size},
      {"minimum I/O size", plan.minimum_io_size, now.minimum_io_size},
      {"optimal I/O size", plan.optimal_io_size, now.optimal_io_size},
      {"alignment offset", plan.alignment_offset, now.alignment_offset},
  };
  size_t before = out->size();
  for (const Field& f : fields) {
    if (f.plan != f.now) {
      out->push_back(fmt::format("topology: {}: plan {}, disk {}", f.name, f.plan, f.now));
    }
  }
  if (out->size() > before && plan.origin == TopologyOrigin::kAssumed &&
      now.origin != TopologyOrigin::kAssumed) {
    out->push_back(fmt::format(
        "topology: the plan was made with an assumed topology; to apply it to this disk "
        "anyway, assume the same: --assume '{}'",
        TopologySpecOf(plan)));
  }
}

// The partition the plan expects after the change: the action's new place for table-only and
// move-data actions, the old place otherwise (none and impossible stay).
std::pair<uint64_t, uint64_t> ExpectedPlace(const Plan& plan, const Partition& p) {
  for (const PlanAction& a : plan.actions) {
    if (a.partition == p.number &&
        (a.kind == ActionKind::kTableOnly || a.kind == ActionKind::kMoveData)) {
      return {a.new_start_sector, a.new_end_sector};
    }
  }
  return {p.start_sector, p.end_sector()};
}

bool OnAlignment(uint64_t sector, uint64_t sector_size, const Alignment& al) {
  std::optional<uint64_t> bytes = LbaToBytes(sector, sector_size);
  return bytes && *bytes >= al.offset_bytes && (*bytes - al.offset_bytes) % al.grain_bytes == 0;
}

// A fresh layout replaces `table`: it must be a valid table of its label on this disk (usable
// area inside the disk, room for GPT's headers and entries, partitions inside it and disjoint),
// with every start on the plan's alignment.
void LayoutInconsistencies(const Plan& plan, const PartitionTable& table,
                           std::vector<std::string>* out) {
  const PlanLayout& l = *plan.layout;
  const uint64_t ss = table.sector_size;
  if (!plan.actions.empty()) out->push_back("the plan has both a fresh layout and actions");
  PartitionTable fresh;
  fresh.label = l.label;
  fresh.sector_size = ss;
  fresh.disk_size_sectors = table.disk_size_sectors;
  fresh.first_usable_lba = l.first_usable_lba;
  fresh.last_usable_lba = l.last_usable_lba;
  if (l.label == LabelType::kGpt) {
    // Protective MBR and header, then at least 16 KiB of entries, at each end of the disk.
    const uint64_t entries = (16 * 1024 + ss - 1) / ss;
    if (l.first_usable_lba < 2 + entries || table.disk_size_sectors < 2 + entries ||
        l.last_usable_lba > table.disk_size_sectors - 2 - entries ||
        l.first_usable_lba > l.last_usable_lba) {
      out->push_back(fmt::format(
          "the layout's usable sectors {}-{} leave no room for GPT's headers and entries on a "
          "disk of {} sectors",
          l.first_usable_lba, l.last_usable_lba, table.disk_size_sectors));
    }
  } else if (l.label == LabelType::kDos) {
    fresh.last_usable_lba = std::min(l.last_usable_lba, table.disk_size_sectors - 1);
  } else {
    out->push_back(
        fmt::format("the layout's table type {} is neither gpt nor dos", ToString(l.label)));
  }
  for (const LayoutPartition& lp : l.partitions) {
    Partition p;
    p.number = lp.partition;
    p.kind = PartitionKind::kPrimary;
    p.start_sector = lp.start_sector;
    p.size_sectors = lp.end_sector - lp.start_sector + 1;
    fresh.partitions.push_back(p);
    if (!OnAlignment(lp.start_sector, ss, plan.alignment)) {
      out->push_back(fmt::format(
          "partition {}: start sector {} is not on the plan's alignment (grain {} bytes, offset "
          "{} bytes)",
          lp.partition, lp.start_sector, plan.alignment.grain_bytes, plan.alignment.offset_bytes));
    }
  }
  if (Status s = CheckTableLayout(fresh); !s) {
    out->push_back("the table the plan asks for is not valid: " + s.error().message);
  }
}

}  // namespace

DiskIdentity IdentityOf(const DeviceInfo& info) {
  DiskIdentity id;
  id.path = info.identity.path;
  id.size_bytes = info.topology.size_bytes;
  id.logical_sector_size = info.topology.logical_sector_size;
  id.serial = info.identity.serial;
  id.wwn = info.identity.wwn;
  return id;
}

std::vector<std::string> IdentityMismatches(const DiskIdentity& recorded, const DiskIdentity& now,
                                            std::string_view recorded_by) {
  std::vector<std::string> out;
  if (recorded.size_bytes != now.size_bytes) {
    out.push_back(fmt::format("size: {} {} bytes, disk {} bytes", recorded_by, recorded.size_bytes,
                              now.size_bytes));
  }
  if (recorded.logical_sector_size != now.logical_sector_size) {
    out.push_back(fmt::format("logical sector size: {} {}, disk {}", recorded_by,
                              recorded.logical_sector_size, now.logical_sector_size));
  }
  if (recorded.serial != now.serial) {
    out.push_back(fmt::format("serial: {} {}, disk {}", recorded_by, Quoted(recorded.serial),
                              Quoted(now.serial)));
  }
  if (recorded.wwn != now.wwn) {
    out.push_back(
        fmt::format("WWN: {} {}, disk {}", recorded_by, Quoted(recorded.wwn), Quoted(now.wwn)));
  }
  return out;
}

std::string TopologySpecOf(const Topology& t) {
  return fmt::format("log={},phys={},min-io={},opt-io={},align-offset={}", t.logical_sector_size,
                     t.physical_sector_size, t.minimum_io_size, t.optimal_io_size,
                     t.alignment_offset);
}

namespace {

// GUIDs are case-insensitive (libfdisk prints them upper case, the scan as it reads them).
bool SameTableId(const std::string& a, const std::string& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

const char* TableIdName(LabelType label) {
  return label == LabelType::kDos ? "DOS disk identifier" : "disk GUID";
}

}  // namespace

std::vector<std::string> PlanMismatches(const Plan& plan, const DeviceInfo& now,
                                        const PartitionTable& table) {
  std::vector<std::string> out = IdentityMismatches(plan.disk, IdentityOf(now), "plan");
  if (plan.topology.logical_sector_size != plan.disk.logical_sector_size) {
    out.push_back("plan: disk and topology logical sector sizes differ");
  }
  const size_t topology_found = out.size();
  CompareTopology(plan.topology, now.topology, &out);
  if (plan.topology.size_bytes != plan.disk.size_bytes) {
    out.push_back(fmt::format("topology.size_bytes: plan {}, disk.size_bytes {}",
                              plan.topology.size_bytes, plan.disk.size_bytes));
  }
  // The same values from another source: a plan made with the kernel's topology is for a disk
  // whose kernel reports it (an image file's topology is a default or assumed, one claim).
  if (out.size() == topology_found && (plan.topology.origin == TopologyOrigin::kKernel) !=
                                          (now.topology.origin == TopologyOrigin::kKernel)) {
    out.push_back(fmt::format("topology.source: plan {}, disk {}{}", ToString(plan.topology.origin),
                              ToString(now.topology.origin),
                              plan.topology.origin == TopologyOrigin::kAssumed
                                  ? fmt::format(" (to apply it, assume the same: --assume '{}')",
                                                TopologySpecOf(plan.topology))
                                  : ""));
  }
  if (plan.label != table.label) {
    out.push_back(fmt::format("partition table: plan {}, disk {}", ToString(plan.label),
                              ToString(table.label)));
  }
  if (plan.table_fingerprint != table.fingerprint) {
    out.push_back(fmt::format("table fingerprint: plan {}, disk {}", plan.table_fingerprint,
                              table.fingerprint));
  }
  // Optional (plans of older versions lack it), but never contradicting the disk. When the
  // fingerprints differ too, the refusal's first line names both identifiers already
  // (ClassifyStalePlan); when they agree, the plan was edited.
  if (plan.table_fingerprint == table.fingerprint && !plan.disk.table_id.empty() &&
      !SameTableId(plan.disk.table_id, table.disk_id)) {
    out.push_back(fmt::format("{}: plan {}, disk {}", TableIdName(table.label),
                              Quoted(plan.disk.table_id), Quoted(table.disk_id)));
  }
  for (const PlanAction& a : plan.actions) {
    const Partition* p = table.Find(a.partition);
    if (!p) {
      out.push_back(fmt::format("partition {}: in the plan, not on the disk", a.partition));
    } else if (p->start_sector != a.old_start_sector || p->end_sector() != a.old_end_sector) {
      out.push_back(fmt::format("partition {}: plan sectors {}-{}, disk sectors {}-{}", a.partition,
                                a.old_start_sector, a.old_end_sector, p->start_sector,
                                p->end_sector()));
    }
  }
  return out;
}

StalePlan ClassifyStalePlan(const Plan& plan, const DeviceInfo& now, const PartitionTable& table) {
  const DiskIdentity id = IdentityOf(now);
  // A serial or WWN on either side that differs: another device.
  if ((!plan.disk.serial.empty() || !id.serial.empty()) && plan.disk.serial != id.serial) {
    return {StalePlanCase::kAnotherDisk, fmt::format("its serial is {}, the plan's {}",
                                                     Quoted(id.serial), Quoted(plan.disk.serial))};
  }
  if ((!plan.disk.wwn.empty() || !id.wwn.empty()) && plan.disk.wwn != id.wwn) {
    return {StalePlanCase::kAnotherDisk,
            fmt::format("its WWN is {}, the plan's {}", Quoted(id.wwn), Quoted(plan.disk.wwn))};
  }
  const char* what = TableIdName(table.label);
  if (!plan.disk.table_id.empty() && !SameTableId(plan.disk.table_id, table.disk_id)) {
    if (plan.table_fingerprint == table.fingerprint && plan.label == table.label) {
      return {StalePlanCase::kEdited,
              fmt::format("the plan says {} {}, the disk's table {}", what,
                          Quoted(plan.disk.table_id), Quoted(table.disk_id))};
    }
    return {StalePlanCase::kAnotherDisk,
            fmt::format("its table's {} is {}, the plan's {}", what, Quoted(table.disk_id),
                        Quoted(plan.disk.table_id))};
  }
  const bool same_serial = !id.serial.empty() || !id.wwn.empty();
  const bool same_table_id = !plan.disk.table_id.empty();
  const bool table_changed =
      plan.table_fingerprint != table.fingerprint || plan.label != table.label ||
      std::any_of(plan.actions.begin(), plan.actions.end(), [&](const PlanAction& a) {
        const Partition* p = table.Find(a.partition);
        return p == nullptr || p->start_sector != a.old_start_sector ||
               p->end_sector() != a.old_end_sector;
      });
  const bool disk_changed = table_changed || plan.disk.size_bytes != id.size_bytes ||
                            plan.disk.logical_sector_size != id.logical_sector_size;
  if (!disk_changed) return {StalePlanCase::kTopology, "the same disk and table"};
  if (!same_serial && !same_table_id) return {StalePlanCase::kUnknown, ""};
  return {StalePlanCase::kChanged,
          same_table_id
              ? fmt::format("the same {} {}", what, plan.disk.table_id)
              : fmt::format("the same serial {}", Quoted(id.serial.empty() ? id.wwn : id.serial))};
}

namespace {

// "dir/plan-loop3.json" for "dir/plan.json" and "/dev/loop3": a plan of its own for that disk.
std::string PlanPathFor(const std::string& plan_path, const std::string& disk_path) {
  const size_t slash = plan_path.rfind('/');
  const size_t dot = plan_path.rfind('.');
  const bool has_ext = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1);
  const std::string stem = has_ext ? plan_path.substr(0, dot) : plan_path;
  const std::string ext = has_ext ? plan_path.substr(dot) : ".json";
  const size_t disk_slash = disk_path.rfind('/');
  std::string disk = disk_slash == std::string::npos ? disk_path : disk_path.substr(disk_slash + 1);
  if (const size_t disk_dot = disk.rfind('.'); disk_dot != std::string::npos && disk_dot > 0) {
    disk = disk.substr(0, disk_dot);  // "disk.img" -> "disk"
  }
  return stem + "-" + disk + ext;
}

}  // namespace

std::vector<std::string> StalePlanRefusal(const Plan& plan, const DeviceInfo& now,
                                          const PartitionTable& table,
                                          const std::vector<std::string>& mismatches,
                                          const std::string& plan_path,
                                          const std::string& disk_path) {
  const StalePlan stale = ClassifyStalePlan(plan, now, table);
  const std::string head = fmt::format("refusing to apply '{}' to '{}': ", plan_path, disk_path);
  std::vector<std::string> lines;
  std::string next_plan = plan_path;
  std::string next;
  switch (stale.kind) {
    case StalePlanCase::kAnotherDisk:
      lines.push_back(head + fmt::format("it is another disk than the plan's '{}' ({}):",
                                         plan.disk.path, stale.why));
      next_plan = PlanPathFor(plan_path, disk_path);
      next = fmt::format("to align '{}', plan it (the plan stays right for its own disk): ",
                         disk_path);
      break;
    case StalePlanCase::kEdited:
      lines.push_back(head + fmt::format("the plan file was edited: it does not match the table "
                                         "identifier of this disk ({}), although its table "
                                         "fingerprint does:",
                                         stale.why));
      next = "plan it again: ";
      break;
    case StalePlanCase::kChanged:
      lines.push_back(head + fmt::format("it is the plan's disk ({}), but it changed since the "
                                         "plan was made:",
                                         stale.why));
      next = "plan it again as it is now: ";
      break;
    case StalePlanCase::kTopology:
      lines.push_back(head + "the plan was made for this disk and table with another topology:");
      next = "or plan it again with the topology it has now: ";
      break;
    case StalePlanCase::kUnknown:
      lines.push_back(head +
                      "the disk does not match the plan (another disk, or it changed since the "
                      "plan was made: nothing on it tells which):");
      next = "if it is the disk you meant, plan it again as it is now: ";
      break;
  }
  for (const std::string& m : mismatches) lines.push_back("  " + m);
  lines.push_back("nothing was written");
  const std::string assume =
      plan.topology.origin == TopologyOrigin::kAssumed && stale.kind != StalePlanCase::kTopology
          ? fmt::format(" --assume '{}'", TopologySpecOf(plan.topology))
          : "";
  lines.push_back(next + fmt::format("partalign plan --output {}{} {}", ShellQuote(next_plan),
                                     assume, ShellQuote(disk_path)));
  return lines;
}

std::vector<uint32_t> LeftBehind::all() const {
  std::vector<uint32_t> out = to_prove;
  out.insert(out.end(), discarded.begin(), discarded.end());
  return out;
}

LeftBehind PartitionsLeftBehind(const Plan& plan, const PartitionTable& table) {
  LeftBehind out;
  if (plan.layout) {
    for (const Partition& p : table.partitions) {
      if (p.kind != PartitionKind::kExtended) out.to_prove.push_back(p.number);
    }
    return out;
  }
  for (const PlanAction& a : plan.actions) {
    const Partition* p = table.Find(a.partition);
    if (a.kind != ActionKind::kTableOnly || p == nullptr || p->kind == PartitionKind::kExtended) {
      continue;
    }
    const bool moved = a.new_start_sector != a.old_start_sector;
    const bool shrinks = a.new_end_sector - a.new_start_sector + 1 < p->size_sectors;
    if (!moved && !shrinks) continue;
    if (a.empty == Emptiness::kDiscarded) {
      out.discarded.push_back(a.partition);
      continue;
    }
    // A filesystem made smaller keeps its bytes: only its end is given up (tails, below).
    if (!moved && !p->contents.fs_type.empty()) continue;
    out.to_prove.push_back(a.partition);
  }
  for (const PlanAction& a : plan.actions) {
    const Partition* p = table.Find(a.partition);
    if ((a.kind != ActionKind::kTableOnly && a.kind != ActionKind::kMoveData) || p == nullptr ||
        p->kind == PartitionKind::kExtended || a.new_end_sector < a.new_start_sector ||
        a.empty == Emptiness::kDiscarded || a.shrink ||
        std::find(out.to_prove.begin(), out.to_prove.end(), a.partition) != out.to_prove.end()) {
      continue;
    }
    const uint64_t new_size = a.new_end_sector - a.new_start_sector + 1;
    if (new_size < p->size_sectors)
      out.tails.push_back({a.partition, new_size * table.sector_size});
  }
  return out;
}

std::vector<std::string> PlanInconsistencies(const Plan& plan, const PartitionTable& table) {
  std::vector<std::string> out;
  if (plan.layout) {
    LayoutInconsistencies(plan, table, &out);
    return out;
  }
  const uint64_t ss = table.sector_size;
  const Alignment& al = plan.alignment;
  for (const PlanAction& a : plan.actions) {
    const Partition* p = table.Find(a.partition);
    if (!p) continue;  // PlanMismatches names it
    const bool start_moves = a.new_start_sector != a.old_start_sector;
    if ((a.kind == ActionKind::kTableOnly || a.kind == ActionKind::kMoveData) &&
        p->kind != PartitionKind::kExtended && start_moves) {
      if (!OnAlignment(a.new_start_sector, ss, al)) {
        out.push_back(
            fmt::format("partition {}: new start sector {} is not on the plan's "
                        "alignment (grain {} bytes, offset {} bytes)",
                        a.partition, a.new_start_sector, al.grain_bytes, al.offset_bytes));
      }
    }
    const bool shrinks = a.new_end_sector - a.new_start_sector + 1 < p->size_sectors;
    if (a.kind == ActionKind::kTableOnly && p->kind != PartitionKind::kExtended &&
        a.empty != Emptiness::kDiscarded && p->contents.MayHoldData()) {
      if (start_moves) {
        out.push_back(fmt::format(
            "partition {} {} but the plan moves its start as 'table-only': the data would stay "
            "behind",
            a.partition, MayHoldDataText(p->contents)));
      } else if (shrinks && p->contents.fs_type.empty()) {
        out.push_back(fmt::format(
            "partition {} {} but the plan shrinks it as 'table-only': the bytes past its new "
            "end would be cut off",
            a.partition, MayHoldDataText(p->contents)));
      }
    }
  }
  if (Status s = CheckTableLayout(ApplyPlanToTable(table, plan.actions)); !s) {
    out.push_back("the table the plan asks for is not valid: " + s.error().message);
  }
  return out;
}

std::vector<std::pair<uint64_t, uint64_t>> TargetExtents(const Plan& plan,
                                                         const PartitionTable& table) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (const Partition& p : table.partitions) {
    std::pair<uint64_t, uint64_t> extent{p.start_sector, p.end_sector()};
    for (const PlanAction& a : plan.actions) {
      if (a.partition == p.number) extent = {a.new_start_sector, a.new_end_sector};
    }
    out.push_back(extent);
  }
  return out;
}

std::vector<uint32_t> PlanDiscards(const Plan& plan) {
  std::vector<uint32_t> out;
  for (const PlanAction& a : plan.actions) {
    if (a.empty == Emptiness::kDiscarded) out.push_back(a.partition);
  }
  return out;
}

std::vector<PlannedShrink> PlanShrinks(const Plan& plan) {
  std::vector<PlannedShrink> out;
  for (const PlanAction& a : plan.actions) {
    if (a.shrink) out.push_back(*a.shrink);
  }
  return out;
}

std::vector<std::string> MakeRoomConsentProblems(const Plan& plan, bool consent,
                                                 const std::string& apply_command) {
  std::vector<std::string> out;
  const std::vector<PlannedShrink> shrinks = PlanShrinks(plan);
  if (!consent) {
    for (const PlannedShrink& s : shrinks) {
      out.push_back(fmt::format(
          "partition {}: the plan shrinks its contents with {} (\"shrink\"), which only you can "
          "allow, not a file: '{}' allows it",
          s.partition, ToString(s.tool), apply_command));
    }
  } else if (shrinks.empty()) {
    out.push_back(
        "--make-room: the plan shrinks no partition, and apply shrinks only what the plan does");
  }
  return out;
}

Plan PlanAfterShrinks(const Plan& plan) {
  Plan rest = plan;
  for (PlanAction& a : rest.actions) {
    if (!a.shrink) continue;
    a.old_end_sector = a.old_start_sector + a.shrink->size_sectors - 1;
    a.shrink.reset();
    if (a.new_start_sector == a.old_start_sector && a.new_end_sector == a.old_end_sector) {
      a.kind = ActionKind::kNone;
      a.bytes_to_move = 0;
      a.empty = Emptiness::kNotClaimed;
    }
  }
  return rest;
}

std::vector<std::string> DiscardConsentProblems(const Plan& plan,
                                                const std::vector<uint32_t>& consent,
                                                const std::string& apply_command) {
  std::vector<std::string> out;
  const std::vector<uint32_t> discards = PlanDiscards(plan);
  for (uint32_t n : discards) {
    if (std::find(consent.begin(), consent.end(), n) != consent.end()) continue;
    out.push_back(fmt::format(
        "partition {}: the plan gives up its contents (\"empty\": \"discarded\"), which only you "
        "can say, not a file: '{}' gives them up",
        n, apply_command));
  }
  for (uint32_t n : consent) {
    if (std::find(discards.begin(), discards.end(), n) != discards.end()) continue;
    out.push_back(fmt::format(
        "--discard {}: the plan does not give up the contents of partition {}, and apply "
        "gives up only what the plan does",
        n, n));
  }
  return out;
}

namespace {

// "move-data (it holds data (ext4))": what the recomputed action is, and what makes it so.
std::string WhyKind(const PlanAction& a, const Partition& p) {
  switch (a.kind) {
    case ActionKind::kMoveData:
      return fmt::format("its start moves and it {}", MayHoldDataText(p.contents));
    case ActionKind::kTableOnly:
      return a.new_start_sector != a.old_start_sector
                 ? fmt::format("its start moves and it {}", a.empty == Emptiness::kDiscarded
                                                                ? "is given up (--discard)"
                                                                : MayHoldDataText(p.contents))
                 : "only its end changes";
    case ActionKind::kNone:
      return "nothing about it changes";
    case ActionKind::kImpossible:
      return "its start is not aligned and stays where it is";
  }
  return {};
}

std::string Claimed(Emptiness e) {
  return e == Emptiness::kNotClaimed ? "none" : fmt::format("'{}'", ToString(e));
}

// The claims of `claimed` (actions[index] of the plan file) against `needed`, the recomputed
// action of the same partition: one message per field that differs.
void CompareClaims(size_t index, const PlanAction& claimed, const PlanAction& needed,
                   const Partition& p, std::vector<std::string>* out) {
  const std::string field = fmt::format("actions[{}].", index);
  if (claimed.kind != needed.kind) {
    out->push_back(fmt::format("{}kind: the plan says {}, partition {} needs {} ({})", field,
                               ToString(claimed.kind), p.number, ToString(needed.kind),
                               WhyKind(needed, p)));
  }
  if (claimed.bytes_to_move != needed.bytes_to_move) {
    const std::string what = p.contents.fs_type.empty() ? "data" : p.contents.fs_type;
    out->push_back(
        fmt::format("{}bytes_to_move: the plan says {}, partition {} needs {} ({})", field,
                    claimed.bytes_to_move, p.number, needed.bytes_to_move,
                    needed.kind == ActionKind::kMoveData
                        ? fmt::format("{} of {}", what, FormatSize(needed.bytes_to_move))
                        : fmt::format("a '{}' action copies nothing", ToString(needed.kind))));
  }
  if (claimed.shrink != needed.shrink) {
    out->push_back(fmt::format("{}shrink: the plan says {}, partition {} needs {}", field,
                               claimed.shrink ? "a shrink" : "none", p.number,
                               needed.shrink ? "a shrink" : "none"));
  }
  if (claimed.empty != needed.empty) {
    out->push_back(fmt::format("{}empty: the plan says {}, partition {} needs {} (it {})", field,
                               Claimed(claimed.empty), p.number, Claimed(needed.empty),
                               MayHoldDataText(p.contents)));
  }
}

// The shrink actions[index] asks for, against what apply read of partition `p`'s contents
// (`offers`, ReadShrinkLimit): its tool must be the way for them, its size not below their
// limit. One message per field that differs.
void ShrinkClaims(size_t index, const PlannedShrink& claimed, const Partition& p, uint64_t ss,
                  const std::vector<ShrinkOffer>& offers, std::vector<std::string>* out) {
  const std::string field = fmt::format("actions[{}].shrink", index);
  auto offer = std::find_if(offers.begin(), offers.end(),
                            [&](const ShrinkOffer& o) { return o.partition == p.number; });
  const std::string what = p.contents.fs_type.empty() ? "no filesystem" : p.contents.fs_type;
  if (offer == offers.end()) {
    out->push_back(
        fmt::format("{}: partition {} ({}) was not read for a shrink", field, p.number, what));
    return;
  }
  if (!offer->tool) {
    out->push_back(fmt::format("{}: the plan shrinks partition {} ({}), which cannot be shrunk: {}",
                               field, p.number, what, offer->reason));
    return;
  }
  if (*offer->tool != claimed.tool) {
    out->push_back(fmt::format("{}.tool: the plan says {}, partition {} ({}) needs {}", field,
                               ToString(claimed.tool), p.number, what, ToString(*offer->tool)));
  }
  if (claimed.size_sectors * ss < offer->min_bytes) {
    out->push_back(fmt::format(
        "{}.size_sectors: the plan says {} ({}), partition {} ({}, {} used) keeps at least {}",
        field, claimed.size_sectors, FormatSize(claimed.size_sectors * ss), p.number, what,
        FormatSize(offer->used_bytes), FormatSize(offer->min_bytes)));
  }
}

// The alignment plan derives from the topology for the plan's grain: a plan made with --grain
// G records the grain RecommendAlignment made of G, which it makes of itself again.
std::optional<std::string> AlignmentClaim(const Plan& plan) {
  const Alignment& al = plan.alignment;
  if (Status fits = CheckGrainFits(plan.topology, al.grain_bytes); !fits) {
    return fmt::format("grain_bytes: {}", fits.error().message);
  }
  const Alignment derived = RecommendAlignment(plan.topology, al.grain_bytes).alignment;
  if (derived == al) return std::nullopt;
  return fmt::format(
      "grain_bytes/offset_bytes: the plan says grain {} offset {}, the disk's topology gives "
      "grain {} offset {} (plan --grain {})",
      al.grain_bytes, al.offset_bytes, derived.grain_bytes, derived.offset_bytes, al.grain_bytes);
}

}  // namespace

RecomputedPlan RecomputePlan(const Plan& plan, const PartitionTable& table,
                             const std::vector<uint32_t>& discard,
                             const std::vector<ShrinkOffer>& offers) {
  RecomputedPlan out;
  if (plan.layout) return out;  // a fresh table: its layout is the whole request
  if (std::optional<std::string> wrong = AlignmentClaim(plan)) {
    out.refusals.push_back(*wrong);
    return out;
  }
  // The backup GPT step: exactly the one the table needs (apply's libfdisk write makes it).
  if (std::optional<BackupGptRelocation> needed = BackupRelocationFor(table);
      plan.relocate_backup_gpt != needed) {
    out.refusals.push_back(
        needed ? fmt::format("relocate_backup_gpt: the plan {}, the table needs: {}",
                             plan.relocate_backup_gpt ? "says another relocation" : "has none",
                             DescribeRelocation(*needed))
               : "relocate_backup_gpt: the backup GPT of the table is at the end of the disk "
                 "already");
  }
  if (plan.actions.size() != table.partitions.size()) {
    out.refusals.push_back(fmt::format(
        "actions: the plan has {} action{}, the table {} partition{} (plan makes one per "
        "partition, in table order)",
        plan.actions.size(), plan.actions.size() == 1 ? "" : "s", table.partitions.size(),
        table.partitions.size() == 1 ? "" : "s"));
    return out;
  }
  for (size_t i = 0; i < plan.actions.size(); ++i) {
    if (plan.actions[i].partition != table.partitions[i].number) {
      out.refusals.push_back(fmt::format(
          "actions[{}].partition: the plan says {}, the table's partition in that place is {} "
          "(plan makes one action per partition, in table order)",
          i, plan.actions[i].partition, table.partitions[i].number));
      return out;
    }
  }
  PlanOptions options;
  options.discard = discard;
  options.shrinks = PlanShrinks(plan);
  for (size_t i = 0; i < plan.actions.size(); ++i) {
    if (plan.actions[i].shrink) {
      ShrinkClaims(i, *plan.actions[i].shrink, table.partitions[i], table.sector_size, offers,
                   &out.refusals);
    }
  }
  if (!out.refusals.empty()) return out;
  Result<std::vector<PlanAction>> needed =
      PlanFileActions(table, plan.alignment, options, TargetExtents(plan, table));
  if (!needed) {
    out.refusals.push_back("the layout the plan asks for (new_start_sector, new_end_sector): " +
                           needed.error().message);
    return out;
  }
  for (size_t i = 0; i < needed->size(); ++i) {
    CompareClaims(i, plan.actions[i], (*needed)[i], table.partitions[i], &out.refusals);
  }
  // plan's own words where its layout is the plan's (why a start cannot be aligned).
  if (Result<std::vector<PlanAction>> own = PlanPartitions(table, plan.alignment, options)) {
    AdoptPlansReasons(*own, &*needed);
  }
  out.actions = std::move(*needed);
  return out;
}

namespace {

// A fresh layout: the table after the write holds exactly the layout's partitions.
std::vector<std::string> TableVersusLayout(const PlanLayout& layout, const PartitionTable& after) {
  std::vector<std::string> out;
  if (after.label != layout.label) {
    out.push_back(fmt::format("table type: {} after, plan {}", ToString(after.label),
                              ToString(layout.label)));
  }
  if (layout.label == LabelType::kGpt && (after.first_usable_lba != layout.first_usable_lba ||
                                          after.last_usable_lba != layout.last_usable_lba)) {
    out.push_back(fmt::format("usable sectors: {}-{} after, plan {}-{}", after.first_usable_lba,
                              after.last_usable_lba, layout.first_usable_lba,
                              layout.last_usable_lba));
  }
  for (const LayoutPartition& l : layout.partitions) {
    const Partition* p = after.Find(l.partition);
    if (!p) {
      out.push_back(fmt::format("partition {}: in the plan, not in the table", l.partition));
      continue;
    }
    if (p->start_sector != l.start_sector || p->end_sector() != l.end_sector) {
      out.push_back(fmt::format("partition {}: sectors {}-{}, plan {}-{}", l.partition,
                                p->start_sector, p->end_sector(), l.start_sector, l.end_sector));
    }
    if (p->kind != PartitionKind::kPrimary) {
      out.push_back(fmt::format("partition {}: {}, plan primary", l.partition, ToString(p->kind)));
    }
    auto lower = [](std::string s) {
      for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return s;
    };
    if (lower(p->type_code) != lower(l.type)) {
      out.push_back(
          fmt::format("partition {}: type '{}', plan '{}'", l.partition, p->type_code, l.type));
    }
    if (p->name != l.name || p->attributes != l.attributes || p->bootable != l.bootable) {
      out.push_back(fmt::format("partition {}: name, attributes or boot flag differ from the plan",
                                l.partition));
    }
  }
  for (const Partition& p : after.partitions) {
    if (std::none_of(layout.partitions.begin(), layout.partitions.end(),
                     [&](const LayoutPartition& l) { return l.partition == p.number; })) {
      out.push_back(fmt::format("partition {}: in the table, not in the plan", p.number));
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> TableVersusPlan(const Plan& plan, const PartitionTable& before,
                                         const PartitionTable& after) {
  if (plan.layout) return TableVersusLayout(*plan.layout, after);
  std::vector<std::string> out;
  if (before.label != after.label) {
    out.push_back(fmt::format("table type: {} before, {} after", ToString(before.label),
                              ToString(after.label)));
  }
  if (before.disk_id != after.disk_id) {
    out.push_back(
        fmt::format("disk identifier: {} before, {} after", before.disk_id, after.disk_id));
  }
  // The backup GPT relocated by this change (the first step that writes the table) lets the
  // usable area grow to the new end; otherwise it stays as it was.
  const bool relocates = plan.relocate_backup_gpt && BackupRelocationFor(before);
  const uint64_t last_usable =
      relocates ? plan.relocate_backup_gpt->new_last_usable_lba : before.last_usable_lba;
  if (before.label == LabelType::kGpt &&
      (before.first_usable_lba != after.first_usable_lba || last_usable != after.last_usable_lba)) {
    out.push_back(fmt::format(
        "usable sectors: {}-{} before, {}-{} after{}", before.first_usable_lba,
        before.last_usable_lba, after.first_usable_lba, after.last_usable_lba,
        relocates ? fmt::format(", plan {}-{}", before.first_usable_lba, last_usable) : ""));
  }
  if (plan.relocate_backup_gpt) {
    if (std::optional<BackupGptRelocation> left = BackupRelocationFor(after)) {
      out.push_back(fmt::format("backup GPT header: at sector {}, plan {}", left->from_lba,
                                plan.relocate_backup_gpt->to_lba));
    }
  }
  for (const PlanAction& a : plan.actions) {
    if (!before.Find(a.partition)) {
      out.push_back(fmt::format("partition {}: in the plan, not in the table", a.partition));
    }
  }
  for (const Partition& b : before.partitions) {
    const Partition* p = after.Find(b.number);
    if (!p) {
      out.push_back(fmt::format("partition {}: missing after the change", b.number));
      continue;
    }
    auto [start, end] = ExpectedPlace(plan, b);
    if (p->start_sector != start || p->end_sector() != end) {
      out.push_back(fmt::format("partition {}: sectors {}-{}, plan {}-{}", b.number,
                                p->start_sector, p->end_sector(), start, end));
    }
    struct Field {
      const char* name;
      std::string before;
      std::string after;
    };
    const Field fields[] = {
        {"kind", std::string(ToString(b.kind)), std::string(ToString(p->kind))},
        {"type", b.type_code, p->type_code},
        {"name", b.name, p->name},
        {"UUID", b.uuid, p->uuid},
        {"attributes", b.attributes, p->attributes},
    };
    for (const Field& f : fields) {
      if (f.before != f.after) {
        out.push_back(fmt::format("partition {}: {} '{}' before, '{}' after", b.number, f.name,
                                  f.before, f.after));
      }
    }
    if (b.bootable != p->bootable) {
      out.push_back(fmt::format("partition {}: boot flag {} before, {} after", b.number,
                                b.bootable ? "set" : "clear", p->bootable ? "set" : "clear"));
    }
  }
  for (const Partition& p : after.partitions) {
    if (!before.Find(p.number)) {
      out.push_back(fmt::format("partition {}: new after the change", p.number));
    }
  }
  return out;
}

}  // namespace partalign
