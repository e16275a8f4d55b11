// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/room/make_room.h"

#include <algorithm>

#include <fmt/format.h>

#include "io/device/target.h"
#include "io/resize/shrink_limit.h"
#include "partalign/layout/way_through.h"

namespace partalign {

Result<std::vector<ShrinkOffer>> ReadShrinkOffers(const std::string& path,
                                                  const PartitionTable& table,
                                                  const std::string& scratch_dir) {
  Result<Target> target = OpenTarget(path);
  if (!target) return target.error();
  std::vector<ShrinkOffer> offers;
  const uint64_t ss = table.sector_size;
  for (const Partition& p : table.partitions) {
    if (p.kind == PartitionKind::kExtended) continue;
    Result<ShrinkLimit> limit =
        ReadShrinkLimit(target->fd.get(), path, p.start_sector * ss, p.size_sectors * ss,
                        p.contents.fs_type, scratch_dir);
    if (!limit) {
      return MakeError(fmt::format("partition {}: how small its contents can be made: {}", p.number,
                                   limit.error().message));
    }
    offers.push_back({p.number, limit->tool, limit->reason, limit->min_bytes, limit->used_bytes});
  }
  return offers;
}

Result<MadeRoom> MakeRoomPlan(Streams io, const std::string& path, PartitionTable* table,
                              const DeviceInfo& device, const Alignment& alignment,
                              const ContentOptions& content) {
  Result<Plan> plain = MakeProvenPlan(io, path, table, device, alignment, content);
  if (!plain) return plain.error();
  MadeRoom out{std::move(*plain), {}};
  if (std::none_of(out.plan.actions.begin(), out.plan.actions.end(),
                   [](const PlanAction& a) { return a.kind == ActionKind::kImpossible; })) {
    out.lines.push_back("make room: nothing to make room for: every partition aligns as it is");
    return out;
  }
  Result<std::vector<ShrinkOffer>> offers = ReadShrinkOffers(path, *table);
  if (!offers) return offers.error();
  PlanOptions options;
  options.discard = content.discard;
  const RoomTaken taken = TakeRoom(*table, alignment, options, out.plan.actions, *offers);
  out.lines = MakeRoomLines(taken, *offers);
  if (taken.shrinks.empty()) return out;
  Result<Plan> shrunk =
      MakeProvenPlan(io, path, table, device, alignment, content, ShrinksOf(taken, *table));
  if (!shrunk) return shrunk.error();
  out.plan = std::move(*shrunk);
  return out;
}

}  // namespace partalign
