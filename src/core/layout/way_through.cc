// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/layout/way_through.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "partalign/util/units.h"

namespace partalign {
namespace {

std::vector<uint32_t> ImpossibleOf(const std::vector<PlanAction>& actions) {
  std::vector<uint32_t> out;
  for (const PlanAction& a : actions) {
    if (a.kind == ActionKind::kImpossible) out.push_back(a.partition);
  }
  return out;
}

bool Contains(const std::vector<uint32_t>& list, uint32_t n) {
  return std::find(list.begin(), list.end(), n) != list.end();
}

// The impossible partitions of a plan with `options`, or nullopt when the planner fails.
std::optional<std::vector<uint32_t>> ImpossibleWith(const PartitionTable& table,
                                                    const Alignment& alignment,
                                                    const PlanOptions& options) {
  Result<std::vector<PlanAction>> actions = PlanPartitions(table, alignment, options);
  if (!actions) return std::nullopt;
  return ImpossibleOf(*actions);
}

// `table` with `extra` more sectors at the end of its usable area (and its disk).
PartitionTable Grown(const PartitionTable& table, uint64_t extra) {
  PartitionTable t = table;
  t.last_usable_lba += extra;
  t.disk_size_sectors += extra;
  return t;
}

// The fewest sectors added at the end of the usable area that align every partition; 0 when
// even plenty would not.
uint64_t MissingSectors(const PartitionTable& table, const Alignment& alignment,
                        const PlanOptions& options) {
  const uint64_t ss = table.sector_size;
  const uint64_t grain = std::max<uint64_t>(alignment.grain_bytes / ss, 1);
  // Every partition moves up by less than a grain, and a logical partition keeps at most
  // libfdisk's first LBA for its EBR: this much more always suffices when anything does.
  const uint64_t most =
      (table.partitions.size() + 1) * (grain + std::max<uint64_t>(table.first_usable_lba, 1));
  auto aligns = [&](uint64_t extra) {
    std::optional<std::vector<uint32_t>> left =
        ImpossibleWith(Grown(table, extra), alignment, options);
    return left && left->empty();
  };
  if (!aligns(most)) return 0;
  uint64_t lo = 0, hi = most;  // aligns(hi), !aligns(lo)
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    (aligns(mid) ? hi : lo) = mid;
  }
  return hi;
}

// Whose contents can be given up and made again.
bool Recreatable(const Partition& p) { return p.contents.fs_type == "swap"; }

std::string List(const std::vector<uint32_t>& numbers) {
  if (numbers.size() == 1) return fmt::format("partition {}", numbers.front());
  std::vector<std::string> parts;
  for (uint32_t n : numbers) parts.push_back(std::to_string(n));
  const std::string last = parts.back();
  parts.pop_back();
  return fmt::format("partitions {} and {}", fmt::join(parts, ", "), last);
}

}  // namespace

WaysThrough FindWaysThrough(const PartitionTable& table, const Alignment& alignment,
                            const PlanOptions& options, const std::vector<PlanAction>& actions) {
  WaysThrough out;
  out.impossible = ImpossibleOf(actions);
  if (out.impossible.empty()) return out;
  out.missing_sectors = MissingSectors(table, alignment, options);
  out.missing_bytes = out.missing_sectors * table.sector_size;
  for (const Partition& p : table.partitions) {
    if (p.kind == PartitionKind::kExtended || !Recreatable(p) ||
        Contains(options.discard, p.number))
      continue;
    PlanOptions with = options;
    with.discard.push_back(p.number);
    std::optional<std::vector<uint32_t>> left = ImpossibleWith(table, alignment, with);
    if (!left || left->size() >= out.impossible.size()) continue;
    WayThrough way;
    way.source = RoomSource::kDiscard;
    way.partition = p.number;
    way.contents = p.contents.fs_type;
    way.partition_bytes = p.size_sectors * table.sector_size;
    for (uint32_t n : out.impossible) {
      (Contains(*left, n) ? way.still_impossible : way.aligned).push_back(n);
    }
    out.ways.push_back(std::move(way));
  }
  // The way that aligns the most first, then the smallest partition given up.
  std::stable_sort(out.ways.begin(), out.ways.end(), [](const WayThrough& a, const WayThrough& b) {
    if (a.still_impossible.size() != b.still_impossible.size())
      return a.still_impossible.size() < b.still_impossible.size();
    return a.partition_bytes < b.partition_bytes;
  });
  return out;
}

std::vector<std::string> WayText(const WaysThrough& ways, const WayContext& context) {
  std::vector<std::string> lines;
  if (ways.impossible.empty()) return lines;
  for (const WayThrough& w : ways.ways) {
    std::string how;
    switch (w.source) {
      case RoomSource::kDiscard:
        if (!context.plan_command) {
          how = fmt::format(
              "d on partition {} gives up its contents (as 'plan --discard {}'; mkswap makes a "
              "new swap area there after apply)",
              w.partition, w.partition);
        } else {
          std::vector<uint32_t> discard = context.discard;
          discard.push_back(w.partition);
          how = fmt::format(
              "'{}' gives up its contents (mkswap makes a new swap area there after apply)",
              context.plan_command(discard));
        }
        break;
    }
    std::string result =
        fmt::format("{} then {}", List(w.aligned), w.aligned.size() == 1 ? "aligns" : "align");
    if (!w.still_impossible.empty()) {
      result += fmt::format("; {} still {}", List(w.still_impossible),
                            w.still_impossible.size() == 1 ? "does not" : "do not");
    }
    lines.push_back(fmt::format("way through: partition {} ({}, {}) can give the room: {}; {}",
                                w.partition, w.contents, FormatSize(w.partition_bytes), how,
                                result));
  }
  if (ways.missing_bytes > 0) {
    lines.push_back(fmt::format(
        "{} {} {} more room than the disk has free ({}): a partition made that much smaller, "
        "or one given up, makes room",
        List(ways.impossible), ways.impossible.size() == 1 ? "needs" : "need",
        FormatSize(ways.missing_bytes),
        fmt::format("{} sector{}", ways.missing_sectors, ways.missing_sectors == 1 ? "" : "s")));
  }
  return lines;
}

}  // namespace partalign
