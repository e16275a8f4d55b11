// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/room/make_room.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "io/device/target.h"
#include "io/resize/shrink_limit.h"
#include "partalign/layout/way_through.h"
#include "partalign/util/units.h"

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
  const WaysThrough ways = FindWaysThrough(*table, alignment, options, out.plan.actions, *offers);
  const WayThrough* best = BestShrink(ways);
  if (best == nullptr) {
    out.lines.push_back(
        "make room: no partition can be shrunk so that more partitions align; nothing is shrunk");
    for (const WaysThrough::NotOffered& n : ways.not_offered) {
      out.lines.push_back(
          fmt::format("partition {} ({}) cannot give room: {}", n.partition, n.contents, n.reason));
    }
    return out;
  }
  const PlannedShrink shrink = ShrinkOf(*best, *table);
  Result<Plan> shrunk = MakeProvenPlan(io, path, table, device, alignment, content, {shrink});
  if (!shrunk) return shrunk.error();
  out.plan = std::move(*shrunk);
  std::vector<std::string> aligned;
  for (uint32_t n : best->aligned) aligned.push_back(std::to_string(n));
  const auto offer = std::find_if(offers->begin(), offers->end(), [&](const ShrinkOffer& o) {
    return o.partition == shrink.partition;
  });
  out.lines.push_back(fmt::format(
      "make room: partition {} ({}, {}) gives {} at its end, shrunk by {} before any move "
      "(its contents use {}, it keeps at least {}): the least invasive way that aligns "
      "partition{} {}",
      best->partition, best->contents, FormatSize(best->partition_bytes),
      FormatSize(best->shrink_bytes), ToString(shrink.tool),
      FormatSize(offer == offers->end() ? 0 : offer->used_bytes),
      FormatSize(offer == offers->end() ? 0 : offer->min_bytes), aligned.size() == 1 ? "" : "s",
      fmt::join(aligned, ", ")));
  if (!best->still_impossible.empty()) {
    std::vector<std::string> left;
    for (uint32_t n : best->still_impossible) left.push_back(std::to_string(n));
    out.lines.push_back(fmt::format("make room: partition{} {} still cannot be aligned",
                                    left.size() == 1 ? "" : "s", fmt::join(left, ", ")));
  }
  return out;
}

}  // namespace partalign
