// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/layout/way_through.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "partalign/util/units.h"

namespace partalign {
namespace {

// The partitions of `actions` that room would align: impossible, and not in use by the running
// system (PlanOptions::in_use), whose way through is the next boot (their reason says so), not
// room on the disk.
std::vector<uint32_t> ImpossibleOf(const std::vector<PlanAction>& actions,
                                   const PlanOptions& options) {
  std::vector<uint32_t> out;
  for (const PlanAction& a : actions) {
    if (a.kind == ActionKind::kImpossible && std::find(options.in_use.begin(), options.in_use.end(),
                                                       a.partition) == options.in_use.end()) {
      out.push_back(a.partition);
    }
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
  return ImpossibleOf(*actions, options);
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

// How far the search trusts a tool to move data: resize2fs first, then ntfsresize, then
// libparted's FAT resizer (which rewrites both FATs whole); mkswap moves nothing.
int ToolRank(const std::optional<ShrinkTool>& tool) {
  if (!tool) return 0;
  switch (*tool) {
    case ShrinkTool::kMkswap:
      return 0;
    case ShrinkTool::kResize2fs:
      return 1;
    case ShrinkTool::kNtfsresize:
      return 2;
    case ShrinkTool::kFatResize:
      return 3;
  }
  return 4;
}

// Partition `p` shrunk at its end by the fewest whole MiB that align the most of `ways`'s
// impossible partitions, or to a whole number of MiB where that aligns more, never below the
// offer's minimum; nullopt when no shrink aligns more.
std::optional<WayThrough> FewestMiBWay(const PartitionTable& table, const Alignment& alignment,
                                       const PlanOptions& options, const WaysThrough& ways,
                                       const Partition& p, const ShrinkOffer& offer) {
  const uint64_t ss = table.sector_size;
  const uint64_t mib = std::max<uint64_t>(kMiB / ss, 1);
  const uint64_t min_sectors = offer.min_bytes / ss + (offer.min_bytes % ss != 0);
  if (p.size_sectors <= min_sectors + mib - 1) return std::nullopt;
  // The room missing at the end, and what aligning every partition may add (each moves by
  // less than a grain, a logical one keeps room for its EBR): more never helps.
  const uint64_t grain_mib = std::max<uint64_t>(alignment.grain_bytes / kMiB, 1);
  const uint64_t most =
      (ways.missing_sectors + mib - 1) / mib + (grain_mib + 1) * (table.partitions.size() + 1) + 1;
  const uint64_t limit = std::min((p.size_sectors - min_sectors) / mib, most);
  // Smaller by 1, 2, ... whole MiB, the fewest that align the most; then, when a size of whole
  // MiB aligns more still, the largest such. A partition moved to an aligned start takes as
  // many grains either way, but only a size of whole MiB reaches its limit's: a swap area of
  // 4.12 MiB that keeps 1 MiB can end at 1 MiB, never at 1.12 MiB by whole MiB less, which
  // takes 2 MiB once aligned.
  std::optional<std::vector<uint32_t>> best;
  uint64_t best_size = 0;
  auto try_size = [&](uint64_t size) {
    PlanOptions with = options;
    with.shrinks.push_back({p.number, *offer.tool, size});
    std::optional<std::vector<uint32_t>> left = ImpossibleWith(table, alignment, with);
    if (!left || left->size() >= (best ? best->size() : ways.impossible.size())) return;
    best = std::move(left);
    best_size = size;
  };
  for (uint64_t k = 1; k <= limit && !(best && best->empty()); ++k) {
    try_size(p.size_sectors - k * mib);
  }
  for (uint64_t k = 0; k <= limit && p.size_sectors / mib >= k + 1 && !(best && best->empty());
       ++k) {
    const uint64_t whole = (p.size_sectors / mib - k) * mib;
    if (whole < p.size_sectors && whole >= min_sectors) try_size(whole);
  }
  if (!best) return std::nullopt;
  WayThrough way;
  way.source =
      *offer.tool == ShrinkTool::kMkswap ? RoomSource::kShrinkSwap : RoomSource::kShrinkFilesystem;
  way.partition = p.number;
  way.contents = p.contents.fs_type;
  way.partition_bytes = p.size_sectors * ss;
  way.shrink_bytes = (p.size_sectors - best_size) * ss;
  way.tool = offer.tool;
  for (uint32_t n : ways.impossible) {
    (Contains(*best, n) ? way.still_impossible : way.aligned).push_back(n);
  }
  return way;
}

}  // namespace

std::string ShrinkHowText(ShrinkTool tool, const std::string& contents) {
  switch (tool) {
    case ShrinkTool::kMkswap:
      return "mkswap re-creates the swap area with the same UUID, label and page size; refused "
             "if it holds a hibernation image";
    case ShrinkTool::kResize2fs:
      return fmt::format("resize2fs shrinks the {} after e2fsck -f finds it clean", contents);
    case ShrinkTool::kNtfsresize:
      return "ntfsresize shrinks the NTFS after ntfsresize --check finds it clean";
    case ShrinkTool::kFatResize:
      return "libparted's FAT resizer shrinks the FAT after fsck.fat -n finds it clean";
  }
  return {};
}

WaysThrough FindWaysThrough(const PartitionTable& table, const Alignment& alignment,
                            const PlanOptions& options, const std::vector<PlanAction>& actions,
                            const std::vector<ShrinkOffer>& offers) {
  WaysThrough out;
  out.impossible = ImpossibleOf(actions, options);
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
  for (const ShrinkOffer& offer : offers) {
    const Partition* p = table.Find(offer.partition);
    if (p == nullptr || p->kind == PartitionKind::kExtended ||
        Contains(options.discard, p->number) ||
        std::any_of(options.shrinks.begin(), options.shrinks.end(),
                    [&](const PlannedShrink& s) { return s.partition == p->number; })) {
      continue;
    }
    if (!offer.tool) {
      if (!p->contents.fs_type.empty()) {
        out.not_offered.push_back({p->number, p->contents.fs_type, offer.reason});
      }
      continue;
    }
    if (std::optional<WayThrough> way = FewestMiBWay(table, alignment, options, out, *p, offer)) {
      out.ways.push_back(std::move(*way));
    }
  }
  // The way that aligns the most first, then the least invasive.
  std::stable_sort(out.ways.begin(), out.ways.end(), [](const WayThrough& a, const WayThrough& b) {
    if (a.still_impossible.size() != b.still_impossible.size())
      return a.still_impossible.size() < b.still_impossible.size();
    if (a.source != b.source) return a.source < b.source;
    if (ToolRank(a.tool) != ToolRank(b.tool)) return ToolRank(a.tool) < ToolRank(b.tool);
    if (a.shrink_bytes != b.shrink_bytes) return a.shrink_bytes < b.shrink_bytes;
    return a.partition_bytes < b.partition_bytes;
  });
  return out;
}

const WayThrough* BestShrink(const WaysThrough& ways) {
  for (const WayThrough& w : ways.ways) {
    if (w.source != RoomSource::kDiscard) return &w;
  }
  return nullptr;
}

PlannedShrink ShrinkOf(const WayThrough& way, const PartitionTable& table) {
  PlannedShrink s;
  s.partition = way.partition;
  s.tool = way.tool.value_or(ShrinkTool::kMkswap);
  s.size_sectors = (way.partition_bytes - way.shrink_bytes) / table.sector_size;
  return s;
}

RoomTaken TakeRoom(const PartitionTable& table, const Alignment& alignment,
                   const PlanOptions& options, const std::vector<PlanAction>& actions,
                   const std::vector<ShrinkOffer>& offers) {
  RoomTaken taken;
  PlanOptions with = options;
  taken.last = FindWaysThrough(table, alignment, with, actions, offers);
  while (const WayThrough* best = BestShrink(taken.last)) {
    PlanOptions next = with;
    next.shrinks.push_back(ShrinkOf(*best, table));
    Result<std::vector<PlanAction>> planned = PlanPartitions(table, alignment, next);
    if (!planned) break;  // FindWaysThrough planned it already: not reached
    taken.shrinks.push_back(*best);
    with = std::move(next);
    taken.last = FindWaysThrough(table, alignment, with, *planned, offers);
    if (taken.last.impossible.empty()) break;
  }
  return taken;
}

std::vector<PlannedShrink> ShrinksOf(const RoomTaken& taken, const PartitionTable& table) {
  std::vector<PlannedShrink> out;
  for (const WayThrough& w : taken.shrinks) out.push_back(ShrinkOf(w, table));
  return out;
}

namespace {

std::string ShrinkTakenLine(const WayThrough& way, const std::vector<ShrinkOffer>& offers,
                            bool first) {
  const auto offer = std::find_if(offers.begin(), offers.end(), [&](const ShrinkOffer& o) {
    return o.partition == way.partition;
  });
  return fmt::format(
      "make room: partition {} ({}, {}) gives {} at its end{}, shrunk by {} before any move "
      "(its contents use {}, it keeps at least {}): the least invasive way that {}aligns {}",
      way.partition, way.contents, FormatSize(way.partition_bytes), FormatSize(way.shrink_bytes),
      first ? "" : " too", ToString(way.tool.value_or(ShrinkTool::kMkswap)),
      FormatSize(offer == offers.end() ? 0 : offer->used_bytes),
      FormatSize(offer == offers.end() ? 0 : offer->min_bytes), first ? "" : "then ",
      List(way.aligned));
}

}  // namespace

std::vector<std::string> MakeRoomLines(const RoomTaken& taken,
                                       const std::vector<ShrinkOffer>& offers) {
  if (taken.shrinks.empty()) return MakeRoomLines(taken.last, offers);
  std::vector<std::string> lines;
  for (size_t i = 0; i < taken.shrinks.size(); ++i) {
    lines.push_back(ShrinkTakenLine(taken.shrinks[i], offers, i == 0));
  }
  if (!taken.last.impossible.empty()) {
    lines.push_back(
        fmt::format("make room: {} still cannot be aligned", List(taken.last.impossible)));
  }
  return lines;
}

std::vector<std::string> MakeRoomLines(const WaysThrough& ways,
                                       const std::vector<ShrinkOffer>& offers) {
  std::vector<std::string> lines;
  const WayThrough* best = BestShrink(ways);
  if (best == nullptr) {
    lines.push_back(
        "make room: no partition can be shrunk so that more partitions align; nothing is shrunk");
    for (const WaysThrough::NotOffered& n : ways.not_offered) {
      lines.push_back(
          fmt::format("partition {} ({}) cannot give room: {}", n.partition, n.contents, n.reason));
    }
    return lines;
  }
  lines.push_back(ShrinkTakenLine(*best, offers, true));
  if (!best->still_impossible.empty()) {
    lines.push_back(
        fmt::format("make room: {} still cannot be aligned", List(best->still_impossible)));
  }
  return lines;
}

std::vector<std::string> WayText(const WaysThrough& ways, const WayContext& context) {
  std::vector<std::string> lines;
  if (ways.impossible.empty()) return lines;
  for (const WayThrough& w : ways.ways) {
    std::string how;
    switch (w.source) {
      case RoomSource::kShrinkSwap:
      case RoomSource::kShrinkFilesystem:
        how = fmt::format(
            "{} makes it {} smaller at its end, before the moves ({})",
            context.make_room_command ? fmt::format("'{}'", context.make_room_command())
            : context.make_room_key.empty()
                ? std::string("plan --make-room")
                : fmt::format("{} (make room, as plan --make-room)", context.make_room_key),
            FormatSize(w.shrink_bytes),
            ShrinkHowText(w.tool.value_or(ShrinkTool::kMkswap), w.contents));
        break;
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
  for (const WaysThrough::NotOffered& n : ways.not_offered) {
    lines.push_back(
        fmt::format("partition {} ({}) cannot give room: {}", n.partition, n.contents, n.reason));
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
