// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/layout/planner.h"

#include <algorithm>
#include <compare>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "partalign/layout/ebr_placement.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// At most this many partial plans are kept after each partition (the cheapest ones, plus the
// one that leaves the most room). Real tables keep a handful; the cap bounds pathological ones.
constexpr size_t kMaxStates = 48;

// The alignment in sectors: starts at offset + k * grain.
struct Grid {
  uint64_t grain = 1;
  uint64_t offset = 0;

  bool IsAligned(uint64_t lba) const { return lba >= offset && (lba - offset) % grain == 0; }
  uint64_t Up(uint64_t lba) const {
    return lba <= offset ? offset : offset + AlignUp(lba - offset, grain);
  }
  std::optional<uint64_t> Down(uint64_t lba) const {
    if (lba < offset) return std::nullopt;
    return offset + AlignDown(lba - offset, grain);
  }
};

enum class ItemType { kData, kExtStart, kExtEnd };

// One step of the search, in disk order: a data partition, or the start/end of the DOS
// extended partition (whose logical partitions lie between the two).
// Why a partition in use stays as it is (PlanOptions::in_use).
constexpr const char* kInUseKeepsItsPlace =
    "it is in use by the running system, so it keeps its place and size (apply never moves or "
    "resizes a partition in use)";

struct SearchItem {
  ItemType type = ItemType::kData;
  size_t part = 0;      // index into table.partitions
  size_t ext_part = 0;  // logical partitions: the extended partition's index
  bool logical = false;
  bool first_logical = false;
  uint64_t start = 0;  // old extent
  uint64_t end = 0;
  uint64_t size = 0;
  uint64_t keep = 0;  // protected sectors
  bool data = false;
  bool anchored = false;
  /// Stays exactly where it is (a GPT BIOS boot partition: kBiosBootPartitionReason; a
  /// partition in use: PlanOptions::in_use).
  bool pinned = false;
  /// A logical partition: the sector of its EBR in the table as it is.
  uint64_t ebr = 0;
  // Where the next data partition starts today, minus the gap it needs in front of it: ends
  // that stop there leave it in place.
  std::optional<uint64_t> next_limit;
  /// The first sector after this partition that the table as it is uses: the next data
  /// partition's EBR (a logical one's) or start, or the extended partition's start.
  std::optional<uint64_t> next_in_use;
};

// What a plan costs, compared lexicographically: first alignment (partitions left misaligned),
// then data to move, then table entries moved, unaligned ends, sectors given up by shrinking,
// total distance, entries changed at all.
struct Cost {
  uint64_t misaligned = 0;
  uint64_t moved_bytes = 0;
  uint64_t moved_starts = 0;
  uint64_t unaligned_ends = 0;
  uint64_t shrunk_sectors = 0;
  uint64_t shift_sectors = 0;
  uint64_t changed = 0;
  auto operator<=>(const Cost&) const = default;
};

struct Decision {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t ext_start = 0;  // first logical partition: where the extended partition starts
  uint64_t gap = 0;        // the sectors kept free before this partition
};

struct State {
  uint64_t next_free = 0;  // the first sector the next item may use
  uint64_t f_eff = 0;      // libfdisk's first LBA while it adds logical partitions
  uint64_t ext_lo = 0;     // where the extended partition may start at the earliest
  // A logical partition with data moves down (its step must come before any table write:
  // ExpandData); at most one per plan.
  bool down_logical = false;
  Cost cost;
  int parent = -1;
  Decision decision;
};

struct Context {
  const PartitionTable& table;
  Grid grid;
  uint64_t lo = 0;  // first usable sector
  uint64_t hi = 0;  // last usable sector
  uint64_t dos_first_lba = 0;
  /// DOS: the sectors the first logical partition keeps after the extended partition's start
  /// (ExtendedNodeSectors: the kernel's and partx's node of the extended partition).
  uint64_t ext_node = 1;
  /// DOS: the first logical partition may stay closer than ext_node to an extended partition
  /// that keeps its start (a table as another tool left it, planned without a change).
  bool allow_close_ebr = true;
  bool dos = false;
  /// DOS: the EBR sector of each logical partition in the table as it is (its areas; libfdisk
  /// lists the EBRs in chain order), or where libfdisk would put them when it has none.
  std::map<uint32_t, uint64_t> ebrs;
  /// Per partition (table index): planned as holding nothing (PlannedEmpty).
  std::vector<bool> empty;
  std::vector<bool> discarded;
  /// Per partition (table index): used by the running system (PlanOptions::in_use).
  std::vector<bool> in_use;
  /// The first pass of a proof: the tails not read yet count as zeros (PlanOptions).
  bool unread_tails_as_zeros = false;
};

uint64_t Distance(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

bool Dominates(const State& a, const State& b) {
  return a.next_free <= b.next_free && a.f_eff <= b.f_eff && a.ext_lo <= b.ext_lo &&
         a.down_logical <= b.down_logical && a.cost <= b.cost;
}

// Keeps the states no other state beats in every respect, cheapest first, at most kMaxStates
// (always including the one that leaves the most room, so that a feasible plan survives).
std::vector<State> Prune(const std::vector<State>& states) {
  // Sorted by index, stably: a state is about 130 bytes, and a layer holds up to about a
  // thousand of them (kMaxStates parents, a few starts and ends each).
  std::vector<uint32_t> order(states.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return states[a].cost < states[b].cost; });
  std::vector<State> kept;
  for (uint32_t i : order) {
    const State& s = states[i];
    bool dominated =
        std::any_of(kept.begin(), kept.end(), [&](const State& k) { return Dominates(k, s); });
    if (!dominated) kept.push_back(s);
  }
  if (kept.size() > kMaxStates) {
    auto roomiest = std::min_element(kept.begin(), kept.end(), [](const State& a, const State& b) {
      return a.next_free < b.next_free;
    });
    State keep_room = *roomiest;
    kept.resize(kMaxStates - 1);
    if (std::none_of(kept.begin(), kept.end(),
                     [&](const State& k) { return k.next_free <= keep_room.next_free; })) {
      kept.push_back(keep_room);
    }
  }
  return kept;
}

void AddCandidate(std::vector<uint64_t>* values, uint64_t v) {
  if (std::find(values->begin(), values->end(), v) == values->end()) values->push_back(v);
}

// The places a data partition may go from `st`, each with its cost.
void ExpandData(const Context& cx, const SearchItem& it, const State& st, int parent,
                std::vector<State>* out) {
  const uint64_t ss = cx.table.sector_size;
  const uint64_t gap = !it.logical ? 0 : (it.first_logical ? cx.ext_node : st.f_eff);
  const uint64_t lower = std::max(st.next_free + gap, cx.lo);
  std::vector<uint64_t> starts;
  // The first logical partition left where it is, its EBR closer to it than the extended
  // partition's node (as another tool wrote the table): only when nothing about it changes.
  const bool close_stays =
      it.first_logical && cx.allow_close_ebr && it.start >= std::max(st.next_free + 1, cx.lo);
  if (it.start >= lower || close_stays) AddCandidate(&starts, it.start);
  if (!it.pinned) {
    if (std::optional<uint64_t> down = cx.grid.Down(it.start);
        down && *down < it.start && *down >= lower) {
      AddCandidate(&starts, *down);
    }
    // Down into free space anywhere before it: the first aligned start after what precedes
    // it (the partitions before it may have moved down too).
    if (uint64_t packed = cx.grid.Up(lower); packed < it.start && packed <= cx.hi) {
      AddCandidate(&starts, packed);
    }
    if (uint64_t up = cx.grid.Up(std::max(it.start, lower)); up <= cx.hi) {
      AddCandidate(&starts, up);
    }
  }

  for (uint64_t s : starts) {
    const bool moved = s != it.start;
    // A logical partition with data that moves down writes over the sectors before it, where
    // its EBR is (right before it once libfdisk has rewritten the table): apply can only move
    // it before any table is written, while the table's own EBR still lies below the new start
    // (apply_steps.h). So one such move per plan, and only above that EBR. The first logical
    // partition's EBR is the extended partition's first sector, which the plan puts below the
    // new start (below): apply writes that table alone first, then moves the partition down
    // onto the old one (issue 38: a plan in one round what took two before).
    const bool down_logical = it.logical && it.data && s < it.start;
    if (down_logical && (st.down_logical || (s <= it.ebr && !it.first_logical))) continue;
    // A pinned partition is where it must be: misaligned, but nothing the plan can fix.
    const bool aligned = it.pinned || cx.grid.IsAligned(s);
    std::vector<uint64_t> ends;
    const uint64_t same_size = s + it.size - 1;
    if (it.pinned || (!moved && !aligned)) {
      ends.push_back(it.end);  // left where it is: nothing about it changes
    } else {
      ends.push_back(same_size);
      if (!it.anchored) {
        AddCandidate(&ends, cx.grid.Up(s + it.size) - 1);  // grow to the next boundary
        if (moved) {
          if (std::optional<uint64_t> d = cx.grid.Down(s + it.size); d && *d > s) {
            AddCandidate(&ends, *d - 1);  // lose less than a grain
          }
          std::vector<uint64_t> limits{cx.hi + 1};
          if (it.next_limit) limits.push_back(*it.next_limit);
          for (uint64_t limit : limits) {
            if (limit <= s) continue;
            AddCandidate(&ends, limit - 1);
            if (std::optional<uint64_t> d = cx.grid.Down(limit); d && *d > s) {
              AddCandidate(&ends, *d - 1);
            }
          }
        }
      }
    }
    for (uint64_t e : ends) {
      if (e < s || e > cx.hi || e - s + 1 < it.keep) continue;
      // Apply moves such a partition first, before any other step rewrites the table (and its
      // EBR): its new place may not reach what the next partition uses in the table as it is,
      // or that partition's own step would have to come first (seed 48, case 338 of the apply
      // sweep: partition 7 moved down 12 sectors and grown over partition 8's old EBR).
      if (down_logical && !it.first_logical && it.next_in_use && e >= *it.next_in_use) continue;
      if (!moved && e < it.end) continue;  // an unmoved partition never shrinks
      State next = st;
      next.parent = parent;
      next.next_free = e + 1;
      next.decision = {s, e, 0, gap};
      next.down_logical = st.down_logical || down_logical;
      if (cx.dos && !it.logical && s < cx.dos_first_lba) next.f_eff = 1;
      Cost& c = next.cost;
      if (!aligned) ++c.misaligned;
      if (moved) {
        ++c.moved_starts;
        c.shift_sectors += Distance(s, it.start);
        if (it.data) c.moved_bytes += it.size * ss;
      }
      if (!cx.grid.IsAligned(e + 1)) ++c.unaligned_ends;
      if (e - s + 1 < it.size) c.shrunk_sectors += it.size - (e - s + 1);
      if (moved || e != it.end) ++c.changed;

      if (!it.first_logical) {
        out->push_back(next);
        continue;
      }
      // The first logical partition's EBR is the extended partition's first sector: keep the
      // extended start when it still lies far enough before the partition (ExtendedNodeSectors),
      // or put it that far before it.
      const Partition& ext = cx.table.partitions[it.ext_part];
      std::vector<uint64_t> ext_starts;
      if (ext.start_sector >= st.ext_lo && ext.start_sector < s &&
          (s - ext.start_sector >= cx.ext_node || (close_stays && s == it.start))) {
        ext_starts.push_back(ext.start_sector);
      }
      if (s >= cx.ext_node && s - cx.ext_node >= st.ext_lo && s - cx.ext_node != ext.start_sector) {
        ext_starts.push_back(s - cx.ext_node);
      }
      for (uint64_t x : ext_starts) {
        // Moving down over its own EBR: apply first writes a table with the extended partition
        // at x and this partition still at its old place. That table must keep libfdisk's first
        // LBA at 1 (the partition closer than it to x), or libfdisk puts the other EBRs that far
        // before their partitions, into the data of this one.
        if (down_logical && s <= it.ebr && it.start - x >= cx.dos_first_lba) continue;
        State with_ext = next;
        with_ext.decision.ext_start = x;
        // libfdisk drops its first LBA to 1 for the rest of the script when the extended
        // partition or the first logical one starts closer than it (dos.c add_partition()).
        if (x < cx.dos_first_lba || s - x < with_ext.f_eff) with_ext.f_eff = 1;
        if (x != ext.start_sector) ++with_ext.cost.changed;
        out->push_back(with_ext);
      }
    }
  }
}

// The end of the extended partition: it must hold every logical partition.
void ExpandExtEnd(const Context& cx, const SearchItem& it, bool has_logicals, const State& st,
                  int parent, std::vector<State>* out) {
  if (!has_logicals) {
    // An empty extended partition: keep it, or move it whole out of the way.
    uint64_t x = std::max(it.start, st.ext_lo);
    uint64_t e = x == it.start ? it.end : x + it.size - 1;
    if (e > cx.hi) return;
    State next = st;
    next.parent = parent;
    next.next_free = e + 1;
    next.decision = {x, e, x, 0};
    if (x < cx.dos_first_lba) next.f_eff = 1;
    if (x != it.start) ++next.cost.changed;
    out->push_back(next);
    return;
  }
  const uint64_t last_logical_end = st.next_free - 1;
  std::vector<uint64_t> ends{std::max(it.end, last_logical_end)};
  AddCandidate(&ends, last_logical_end);
  for (uint64_t e : ends) {
    if (e > cx.hi) continue;
    State next = st;
    next.parent = parent;
    next.next_free = e + 1;
    next.decision = {0, e, 0, 0};
    if (e != it.end) ++next.cost.changed;
    out->push_back(next);
  }
}

Status CheckLayout(const PartitionTable& t, uint64_t lo, uint64_t hi) {
  std::vector<const Partition*> top;
  std::vector<const Partition*> logicals;
  const Partition* ext = nullptr;
  for (const Partition& p : t.partitions) {
    if (p.size_sectors == 0) return MakeError(fmt::format("partition {} has size 0", p.number));
    if (p.start_sector < lo || p.end_sector() > hi) {
      return MakeError(fmt::format(
          "partition {} (sectors {}-{}) lies outside the usable area {}-{}{}", p.number,
          p.start_sector, p.end_sector(), lo, hi,
          t.label == LabelType::kDos && p.end_sector() > kMbrMaxSector
              ? ": an MBR cannot address sectors beyond 4294967295 (convert the disk to GPT)"
              : ""));
    }
    if (p.kind == PartitionKind::kLogical) {
      logicals.push_back(&p);
      continue;
    }
    if (p.kind == PartitionKind::kExtended) {
      if (ext) return MakeError("the table has two extended partitions");
      ext = &p;
    }
    top.push_back(&p);
  }
  auto by_start = [](const Partition* a, const Partition* b) {
    return a->start_sector < b->start_sector;
  };
  for (std::vector<const Partition*>* list : {&top, &logicals}) {
    std::sort(list->begin(), list->end(), by_start);
    for (size_t i = 1; i < list->size(); ++i) {
      const Partition* a = (*list)[i - 1];
      const Partition* b = (*list)[i];
      if (b->start_sector <= a->end_sector()) {
        return MakeError(fmt::format("partitions {} (sectors {}-{}) and {} (sectors {}-{}) overlap",
                                     a->number, a->start_sector, a->end_sector(), b->number,
                                     b->start_sector, b->end_sector()));
      }
    }
  }
  for (const Partition* p : logicals) {
    if (!ext || p->start_sector <= ext->start_sector || p->end_sector() > ext->end_sector()) {
      return MakeError(
          fmt::format("logical partition {} lies outside the extended partition", p->number));
    }
  }
  return {};
}

std::string Sectors(uint64_t n) { return fmt::format("{} sector{}", n, n == 1 ? "" : "s"); }

// What the planner may do with partition `i`'s bytes: nothing may be lost unless it is proven
// empty, or discarded by the user (or, in the first pass of a proof, not read yet).
bool PlannedEmpty(const PartitionTable& table, size_t i, const PlanOptions& options) {
  const Partition& p = table.partitions[i];
  if (std::find(options.discard.begin(), options.discard.end(), p.number) !=
      options.discard.end()) {
    return true;
  }
  return !p.contents.MayHoldData() ||
         (options.unscanned_as_empty && p.contents.proof == ContentProof::kUnscanned);
}

// How many sectors partition `i` must keep: one grain at most when it is planned empty.
uint64_t KeepOf(const Context& cx, size_t i) {
  const Partition& p = cx.table.partitions[i];
  if (cx.empty[i]) return std::min(p.size_sectors, cx.grid.grain);
  return ProtectedSectors(p, cx.table.sector_size, cx.grid.grain, cx.unread_tails_as_zeros);
}

// "no signature, data at byte 1048576" and the like: what is known of a partition that may
// hold data but has no filesystem partalign can name.
std::string UnknownDataText(const PartitionContents& c) {
  if (c.proof == ContentProof::kData && c.data_offset_bytes) {
    return fmt::format("no signature, data at byte {}", *c.data_offset_bytes);
  }
  return "no signature, not proven empty";
}

// Why a partition keeps `keep` sectors, for reasons.
std::string KeepReason(const Partition& p, uint64_t keep, uint64_t ss, bool empty) {
  const PartitionContents& c = p.contents;
  if (IsEndAnchored(c)) {
    return fmt::format("its size is kept exactly: {} keeps metadata at the partition's end",
                       c.fs_type);
  }
  if (empty) return fmt::format("it holds no data but keeps at least {}", Sectors(keep));
  if (std::optional<uint64_t> fs = FilesystemSectors(p, ss)) {
    const std::string needs = fmt::format("its {} filesystem needs {} ({})", c.fs_type,
                                          Sectors(*fs), FormatSize(*c.fs_size_bytes));
    if (keep == *fs) return needs + (keep == p.size_sectors ? ", all of the partition" : "");
    if (keep < p.size_sectors) {
      return fmt::format("{}, and the {} after sector {} of it were read: zeros, so it keeps {}",
                         needs, Sectors(p.size_sectors - keep), keep, Sectors(keep));
    }
    // The bytes past a filesystem are data until read (md 1.0 superblocks, LUKS and LVM
    // metadata, tools' trailers); shrinking over data needs the person's consent.
    if (c.tail_data_bytes) {
      return fmt::format(
          "{}, but the partition holds data past it (byte {} is not zero), and a partition "
          "gives up data only with the person's consent (--make-room): all {} ({}) are kept",
          needs, *c.tail_data_bytes, Sectors(keep), FormatSize(keep * ss));
    }
    return fmt::format("{}; the {} past it are not proven zero, so all {} ({}) are kept", needs,
                       Sectors(p.size_sectors - *fs), Sectors(keep), FormatSize(keep * ss));
  }
  std::string what = c.fs_type.empty() ? UnknownDataText(c) : c.fs_type + " data";
  return fmt::format("it holds {} whose size is unknown, so all {} ({}) are kept", what,
                     Sectors(keep), FormatSize(keep * ss));
}

// The search's frame: the grid, the usable area, the label's rules.
Result<Context> MakeContext(const PartitionTable& table, const Alignment& alignment,
                            const PlanOptions& options) {
  const uint64_t ss = table.sector_size;
  if (ss == 0 || alignment.grain_bytes == 0 || alignment.grain_bytes % ss != 0 ||
      alignment.offset_bytes % ss != 0) {
    return MakeError(fmt::format(
        "the alignment (grain {} bytes, offset {} bytes) is not a whole number of {}-byte "
        "sectors",
        alignment.grain_bytes, alignment.offset_bytes, ss));
  }
  Context cx{table};
  cx.grid = {alignment.grain_bytes / ss, alignment.offset_bytes / ss};
  cx.dos = table.label == LabelType::kDos;
  if (cx.dos) {
    // Sector 0 holds the MBR; libfdisk accepts explicit starts from 1 and caps the area at
    // 2^32 - 1 (get_disk_ranges()).
    cx.lo = 1;
    cx.hi = std::min(table.last_usable_lba, kMbrMaxSector);
    cx.dos_first_lba =
        std::max<uint64_t>(options.dos_logical_gap_sectors.value_or(table.first_usable_lba), 1);
    cx.ext_node = ExtendedNodeSectors(ss);
    cx.ebrs = TableEbrSectors(table);
  } else {
    cx.lo = table.first_usable_lba;
    cx.hi = table.last_usable_lba;
  }
  if (Status s = CheckLayout(table, cx.lo, cx.hi); !s) return s.error();
  cx.unread_tails_as_zeros = options.unscanned_as_empty;
  for (size_t i = 0; i < table.partitions.size(); ++i) {
    cx.empty.push_back(PlannedEmpty(table, i, options));
    cx.discarded.push_back(std::find(options.discard.begin(), options.discard.end(),
                                     table.partitions[i].number) != options.discard.end());
    cx.in_use.push_back(std::find(options.in_use.begin(), options.in_use.end(),
                                  table.partitions[i].number) != options.in_use.end());
  }
  return cx;
}

// The search's items in disk order: the partitions, with the logical ones between the start
// and the end of the extended partition.
struct Items {
  std::vector<SearchItem> list;
  std::optional<size_t> ext_index;  // the extended partition, if any
  bool has_logicals = false;
};

SearchItem DataItem(const Context& cx, size_t i, bool logical, bool first_logical) {
  const Partition& p = cx.table.partitions[i];
  const auto ebr = cx.ebrs.find(p.number);
  SearchItem it;
  it.part = i;
  it.logical = logical;
  it.first_logical = first_logical;
  it.start = p.start_sector;
  it.end = p.end_sector();
  it.size = p.size_sectors;
  it.keep = KeepOf(cx, i);
  it.data = !cx.empty[i];
  it.anchored = IsEndAnchored(p.contents);
  it.pinned =
      (cx.table.label == LabelType::kGpt && IsBiosBootPartition(p.type_code)) || cx.in_use[i];
  it.ebr = ebr != cx.ebrs.end() ? ebr->second : (p.start_sector ? p.start_sector - 1 : 0);
  return it;
}

// Where the next data partition starts today, minus the gap in front of it.
void SetNextLimits(const Context& cx, std::vector<SearchItem>& items) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].type != ItemType::kData) continue;
    for (size_t j = i + 1; j < items.size(); ++j) {
      if (items[j].type == ItemType::kExtStart) {
        items[i].next_limit = items[j].start;
        items[i].next_in_use = items[j].start;
        break;
      }
      if (items[j].type != ItemType::kData) continue;
      uint64_t gap = items[j].logical && !items[j].first_logical ? cx.dos_first_lba : 0;
      if (items[j].start > gap) items[i].next_limit = items[j].start - gap;
      items[i].next_in_use = items[j].logical && !items[j].first_logical
                                 ? std::min(items[j].ebr, items[j].start)
                                 : items[j].start;
      break;
    }
  }
}

Items ItemsInDiskOrder(const Context& cx) {
  const PartitionTable& table = cx.table;
  Items out;
  std::vector<size_t> top;
  std::vector<size_t> logicals;
  for (size_t i = 0; i < table.partitions.size(); ++i) {
    const Partition& p = table.partitions[i];
    if (p.kind == PartitionKind::kLogical) {
      logicals.push_back(i);
    } else {
      top.push_back(i);
      if (p.kind == PartitionKind::kExtended) out.ext_index = i;
    }
  }
  out.has_logicals = !logicals.empty();
  auto by_start = [&](size_t a, size_t b) {
    return table.partitions[a].start_sector < table.partitions[b].start_sector;
  };
  std::sort(top.begin(), top.end(), by_start);
  std::sort(logicals.begin(), logicals.end(), by_start);
  for (size_t i : top) {
    if (table.partitions[i].kind != PartitionKind::kExtended) {
      out.list.push_back(DataItem(cx, i, false, false));
      continue;
    }
    const Partition& ext = table.partitions[i];
    SearchItem start{ItemType::kExtStart, i};
    start.start = ext.start_sector;
    start.end = ext.end_sector();
    start.size = ext.size_sectors;
    out.list.push_back(start);
    for (size_t k = 0; k < logicals.size(); ++k) {
      SearchItem it = DataItem(cx, logicals[k], true, k == 0);
      it.ext_part = i;
      out.list.push_back(it);
    }
    SearchItem end = start;
    end.type = ItemType::kExtEnd;
    out.list.push_back(end);
  }
  SetNextLimits(cx, out.list);
  return out;
}

// The search: one layer of partial plans per item, then the cheapest final plan followed back
// to the first item. One decision per item.
Result<std::vector<Decision>> Search(const Context& cx, const Items& items) {
  std::vector<std::vector<State>> layers;
  State initial;
  initial.next_free = cx.lo;
  initial.f_eff = cx.dos_first_lba;
  layers.push_back({initial});
  for (const SearchItem& it : items.list) {
    std::vector<State> next;
    const std::vector<State>& prev = layers.back();
    next.reserve(prev.size() * 8);  // a few starts and ends per state (ExpandData)
    for (size_t k = 0; k < prev.size(); ++k) {
      const State& st = prev[k];
      const int parent = static_cast<int>(k);
      switch (it.type) {
        case ItemType::kData:
          ExpandData(cx, it, st, parent, &next);
          break;
        case ItemType::kExtStart: {
          State s = st;
          s.parent = parent;
          s.ext_lo = std::max(st.next_free, cx.lo);
          next.push_back(s);
          break;
        }
        case ItemType::kExtEnd:
          ExpandExtEnd(cx, it, items.has_logicals, st, parent, &next);
          break;
      }
    }
    if (next.empty()) {
      return MakeError(
          "no placement keeps every partition and its data (this is a bug: the "
          "table as it is should always remain possible)");
    }
    layers.push_back(Prune(next));
  }

  const std::vector<State>& last = layers.back();
  int index = static_cast<int>(
      std::min_element(last.begin(), last.end(),
                       [](const State& a, const State& b) { return a.cost < b.cost; }) -
      last.begin());
  std::vector<Decision> decisions(items.list.size());
  for (size_t layer = items.list.size(); layer > 0; --layer) {
    const State& s = layers[layer][static_cast<size_t>(index)];
    decisions[layer - 1] = s.decision;
    index = s.parent;
  }
  return decisions;
}

// The chosen layout: new extents per partition, and the neighbours of each.
struct NewLayout {
  std::map<size_t, std::pair<uint64_t, uint64_t>> extent;  // partition index -> start, end
  std::map<size_t, uint64_t> gap_before;
  std::vector<std::pair<size_t, bool>> order;  // (partition index, is an EBR-bearing logical)
  std::optional<size_t> ext_index;
};

NewLayout NewExtents(const Items& items, const std::vector<Decision>& decisions) {
  NewLayout out;
  out.ext_index = items.ext_index;
  for (size_t i = 0; i < items.list.size(); ++i) {
    const SearchItem& it = items.list[i];
    const Decision& d = decisions[i];
    if (it.type == ItemType::kData) {
      out.extent[it.part] = {d.start, d.end};
      out.gap_before[it.part] = d.gap;
      if (it.first_logical) out.extent[*items.ext_index].first = d.ext_start;
      out.order.push_back({it.part, it.logical});
    } else if (it.type == ItemType::kExtEnd) {
      if (!items.has_logicals) {
        out.extent[it.part] = {d.start, d.end};
      } else {
        out.extent[it.part].second = d.end;
      }
    }
  }
  return out;
}

// "end E -> E' (grows by N sectors)" and the like; empty when the end stays.
std::string EndChangeText(const Partition& p, const PlanAction& a, bool empty) {
  if (a.new_end_sector == a.old_end_sector) return {};
  const uint64_t old_size = p.size_sectors;
  const uint64_t new_size = a.new_end_sector - a.new_start_sector + 1;
  if (new_size > old_size) {
    return fmt::format("end {} -> {} (grows by {})", a.old_end_sector, a.new_end_sector,
                       Sectors(new_size - old_size));
  }
  if (new_size < old_size && p.kind == PartitionKind::kExtended) {
    return fmt::format("end {} -> {} (shrinks by {})", a.old_end_sector, a.new_end_sector,
                       Sectors(old_size - new_size));
  }
  if (new_size < old_size) {
    return fmt::format("end {} -> {} (shrinks by {}, {})", a.old_end_sector, a.new_end_sector,
                       Sectors(old_size - new_size),
                       empty ? "it holds no data" : "all past the filesystem's end, read: zeros");
  }
  return fmt::format("end {} -> {}", a.old_end_sector, a.new_end_sector);
}

// Why partition `i` (start still misaligned in `layout`) cannot be aligned: what blocks each
// direction, against the new layout of its neighbours.
std::string ImpossibleReason(const Context& cx, const NewLayout& layout, size_t i) {
  const PartitionTable& table = cx.table;
  const Partition& p = table.partitions[i];
  const uint64_t ss = table.sector_size;
  size_t pos = 0;
  while (layout.order[pos].first != i) ++pos;
  const uint64_t keep = KeepOf(cx, i);
  uint64_t lower = cx.lo;
  std::string lower_name = fmt::format("the first usable sector {}", cx.lo);
  if (p.kind == PartitionKind::kLogical && pos > 0 && !layout.order[pos - 1].second) {
    // The first logical partition: only its EBR (the extended start) lies before it.
    const uint64_t ext_start = layout.extent.at(*layout.ext_index).first;
    lower = ext_start + cx.ext_node;
    lower_name = cx.ext_node == 1
                     ? fmt::format("the extended partition's first sector {} (its EBR)", ext_start)
                     : fmt::format(
                           "the extended partition's first {} (its EBR, and the node the kernel "
                           "gives the extended partition), from {}",
                           Sectors(cx.ext_node), ext_start);
  } else if (pos > 0) {
    const size_t prev = layout.order[pos - 1].first;
    const uint64_t gap = layout.gap_before.at(i);
    lower = layout.extent.at(prev).second + 1 + gap;
    lower_name = fmt::format("partition {} (ends at {}){}", table.partitions[prev].number,
                             layout.extent.at(prev).second,
                             gap > 1 ? fmt::format(" plus the {} libfdisk keeps for this "
                                                   "partition's EBR",
                                                   Sectors(gap))
                                     : "");
  }
  uint64_t upper = cx.hi;
  std::string upper_name = fmt::format("the usable area, which ends at {}", cx.hi);
  if (pos + 1 < layout.order.size()) {
    const size_t next = layout.order[pos + 1].first;
    upper = layout.extent.at(next).first - 1 - layout.gap_before.at(next);
    upper_name = fmt::format("partition {}, which starts at {}", table.partitions[next].number,
                             layout.extent.at(next).first);
  }
  std::vector<std::string> why;
  std::optional<uint64_t> down = cx.grid.Down(p.start_sector);
  if (!down || *down < cx.lo) {
    why.push_back(
        fmt::format("no aligned start lies between the first usable sector {} and "
                    "{}",
                    cx.lo, p.start_sector));
  } else if (*down < lower) {
    why.push_back(fmt::format("moving down to {} would overlap {} by {}", *down, lower_name,
                              Sectors(lower - *down)));
  } else if (const auto ebr = cx.ebrs.find(p.number);
             p.kind == PartitionKind::kLogical && !cx.empty[i] && ebr != cx.ebrs.end() && pos > 0 &&
             layout.order[pos - 1].second && *down <= ebr->second && ebr->second < p.start_sector) {
    // The search's rule for a logical partition moving down (SearchItem::ebr).
    why.push_back(fmt::format(
        "moving down to {} would write its data over its own EBR at sector {}, which the table "
        "on the disk uses until the move's new table is written",
        *down, ebr->second));
  }
  const uint64_t up = cx.grid.Up(p.start_sector);
  if (up + keep - 1 > upper) {
    why.push_back(fmt::format("moving up to {} needs sectors {}-{}, {} past {}", up, up,
                              up + keep - 1, Sectors(up + keep - 1 - upper), upper_name));
  }
  if (why.empty()) {
    why.push_back("aligning it would push other partitions out of alignment or off the disk");
  }
  return fmt::format("start {} cannot be aligned: {}; {}", p.start_sector, fmt::join(why, "; "),
                     KeepReason(p, keep, ss, cx.empty[i]));
}

// Why partition `i`, planned empty, may leave its bytes behind.
Emptiness EmptinessOf(const Context& cx, size_t i) {
  if (!cx.empty[i]) return Emptiness::kNotClaimed;
  if (cx.discarded[i]) return Emptiness::kDiscarded;
  switch (cx.table.partitions[i].contents.proof) {
    case ContentProof::kZeros:
      return Emptiness::kZeros;
    case ContentProof::kHoles:
      return Emptiness::kHoles;
    default:
      // Only the first pass of a proof plans an unread partition as empty; its plan is not
      // shown, and the claim stays unproven.
      return Emptiness::kNotClaimed;
  }
}

// "read all 49 MiB: zeros", "contents discarded (--discard; it holds ext4)".
std::string EmptyText(const Partition& p, Emptiness e, uint64_t ss) {
  switch (e) {
    case Emptiness::kZeros:
      return fmt::format("read all {}: zeros", FormatSize(p.size_sectors * ss));
    case Emptiness::kHoles:
      return "the image holds only holes there";
    case Emptiness::kDiscarded:
      if (!p.contents.fs_type.empty()) {
        return fmt::format("contents discarded (--discard): its {} is given up",
                           p.contents.fs_type);
      }
      if (p.contents.proof == ContentProof::kData && p.contents.data_offset_bytes) {
        return fmt::format(
            "contents discarded (--discard): its data (byte {} is not zero) is "
            "given up",
            *p.contents.data_offset_bytes);
      }
      return p.contents.MayHoldData()
                 ? "contents discarded (--discard): whatever it holds is given up (not read)"
                 : "contents discarded (--discard)";
    case Emptiness::kNotClaimed:
      break;
  }
  return {};
}

// Whether partition `i` may take the extent `start`-`end` that a person or a plan file chose:
// never smaller than what it must keep (its filesystem, its data, metadata at its end: a
// partition never shrinks in silence), and a BIOS boot partition never moves.
Status CheckNewExtent(const Context& cx, size_t i, uint64_t start, uint64_t end) {
  const Partition& p = cx.table.partitions[i];
  if (p.kind == PartitionKind::kExtended || (start == p.start_sector && end == p.end_sector())) {
    return {};
  }
  if (cx.table.label == LabelType::kGpt && IsBiosBootPartition(p.type_code)) {
    return MakeError(fmt::format("partition {}: {}; it stays at sectors {}-{}", p.number,
                                 kBiosBootPartitionReason, p.start_sector, p.end_sector()));
  }
  const uint64_t keep = KeepOf(cx, i);
  if (cx.empty[i] || end - start + 1 >= keep) return {};
  return MakeError(fmt::format("partition {}: sectors {}-{} ({}) are fewer than it keeps: {}",
                               p.number, start, end, Sectors(end - start + 1),
                               KeepReason(p, keep, cx.table.sector_size, false)));
}

// What happens to partition `i` in the chosen layout, and why.
PlanAction DescribeAction(const Context& cx, const NewLayout& layout, size_t i) {
  const PartitionTable& table = cx.table;
  const Partition& p = table.partitions[i];
  const uint64_t ss = table.sector_size;
  PlanAction a;
  a.partition = p.number;
  a.old_start_sector = p.start_sector;
  a.old_end_sector = p.end_sector();
  a.new_start_sector = layout.extent.at(i).first;
  a.new_end_sector = layout.extent.at(i).second;
  const bool moved = a.new_start_sector != a.old_start_sector;
  const bool end_changed = a.new_end_sector != a.old_end_sector;
  const uint64_t new_size = a.new_end_sector - a.new_start_sector + 1;
  const std::string end_text = EndChangeText(p, a, cx.empty[i]);
  if (p.kind == PartitionKind::kExtended) {
    a.kind = moved || end_changed ? ActionKind::kTableOnly : ActionKind::kNone;
    std::vector<std::string> parts;
    if (moved)
      parts.push_back(fmt::format("start {} -> {}", a.old_start_sector, a.new_start_sector));
    if (end_changed) parts.push_back(end_text);
    a.reason = parts.empty() ? "extended partition: still holds its logical partitions"
                             : fmt::format(
                                   "extended partition: {}, to hold its logical partitions (it "
                                   "holds only the EBR chain)",
                                   fmt::join(parts, ", "));
    return a;
  }
  if (p.kind != PartitionKind::kExtended && cx.table.label == LabelType::kGpt &&
      IsBiosBootPartition(p.type_code)) {
    a.kind = ActionKind::kNone;  // the search never moves it (SearchItem::pinned)
    a.reason = fmt::format("{}; left where it is", kBiosBootPartitionReason);
    return a;
  }
  const bool aligned = cx.grid.IsAligned(a.new_start_sector);
  const bool was_aligned = cx.grid.IsAligned(a.old_start_sector);
  const bool end_aligned = cx.grid.IsAligned(a.new_end_sector + 1);
  const bool kept_in_use = cx.in_use[i] && !moved && !end_changed;
  if (!aligned) {
    a.kind = ActionKind::kImpossible;
    a.reason = kept_in_use ? fmt::format(
                                 "start {} is not aligned, and {}; realign it at the "
                                 "next boot, before anything mounts it (plan "
                                 "--at-next-boot), or when nothing uses it",
                                 a.old_start_sector, kInUseKeepsItsPlace)
                           : ImpossibleReason(cx, layout, i);
    return a;
  }
  if (!moved && !end_changed) {
    a.kind = ActionKind::kNone;
    a.reason = end_aligned ? "aligned"
               : kept_in_use
                   ? fmt::format("start aligned; end {} is not on a boundary, and {}",
                                 a.old_end_sector, kInUseKeepsItsPlace)
                   : fmt::format(
                         "start aligned; end {} is not on a boundary but "
                         "cannot move ({})",
                         a.old_end_sector,
                         IsEndAnchored(p.contents) ? p.contents.fs_type + " keeps metadata there"
                                                   : "no free space after it to grow into");
    return a;
  }
  std::vector<std::string> parts;
  if (moved) {
    const bool up = a.new_start_sector > a.old_start_sector;
    parts.push_back(fmt::format("start {} -> {} ({} {}){}", a.old_start_sector, a.new_start_sector,
                                up ? "up" : "down",
                                Sectors(Distance(a.new_start_sector, a.old_start_sector)),
                                was_aligned ? ", pushed by the partition before it" : ""));
  }
  if (end_changed) {
    parts.push_back(end_text +
                    (end_aligned && !moved ? " so that the next aligned start follows" : ""));
  } else if (new_size < p.size_sectors) {
    // Moved up to the same end: it gives up its last sectors, which the row must say.
    parts.push_back(fmt::format(
        "it shrinks by {}, {}", Sectors(p.size_sectors - new_size),
        cx.empty[i] ? "it holds no data" : "all past the filesystem's end, read: zeros"));
  }
  if (moved && !cx.empty[i]) {
    a.kind = ActionKind::kMoveData;
    a.bytes_to_move = std::min(p.size_sectors, new_size) * ss;
    const bool up = a.new_start_sector > a.old_start_sector;
    if (p.contents.fs_type.empty()) {
      parts.push_back(fmt::format("{}: moved whole, {} to copy {}", UnknownDataText(p.contents),
                                  FormatSize(a.bytes_to_move), up ? "up" : "down"));
    } else {
      // "to move", not "to copy": apply copies only the blocks the filesystem's used map
      // marks ("copies 36 MiB" of 97.66 MiB moved), which the plan does not read.
      parts.push_back(fmt::format("{} of {} to move {}", FormatSize(a.bytes_to_move),
                                  p.contents.fs_type, up ? "up" : "down"));
    }
  } else {
    a.kind = ActionKind::kTableOnly;
    if (moved || new_size < p.size_sectors) {
      a.empty = EmptinessOf(cx, i);
      if (a.empty != Emptiness::kNotClaimed) parts.push_back(EmptyText(p, a.empty, ss));
    }
    if (moved) parts.push_back("only the table entry changes");
  }
  a.reason = fmt::format("{}", fmt::join(parts, "; "));
  return a;
}

// The search and the actions of the layout it chose.
Result<std::vector<PlanAction>> SearchActions(const Context& cx) {
  const Items items = ItemsInDiskOrder(cx);
  Result<std::vector<Decision>> decisions = Search(cx, items);
  if (!decisions) return decisions.error();
  const NewLayout layout = NewExtents(items, *decisions);
  std::vector<PlanAction> actions;
  for (size_t i = 0; i < cx.table.partitions.size(); ++i) {
    actions.push_back(DescribeAction(cx, layout, i));
  }
  return actions;
}

bool ChangesTable(const std::vector<PlanAction>& actions) {
  return std::any_of(actions.begin(), actions.end(), [](const PlanAction& a) {
    return a.kind == ActionKind::kTableOnly || a.kind == ActionKind::kMoveData;
  });
}

// Whether the first logical partition of the planned table starts closer to the extended
// partition's start than the extended partition's node (ExtendedNodeSectors).
bool FirstLogicalTooClose(const Context& cx, const std::vector<PlanAction>& actions) {
  if (!cx.dos) return false;
  PartitionTable planned = cx.table;
  for (Partition& p : planned.partitions) {
    for (const PlanAction& a : actions) {
      if (a.partition != p.number) continue;
      p.start_sector = a.new_start_sector;
      p.size_sectors = a.new_end_sector - a.new_start_sector + 1;
    }
  }
  const std::map<uint32_t, uint64_t> ebrs = PredictEbrSectors(planned, cx.dos_first_lba);
  for (const Partition& p : planned.partitions) {
    auto it = ebrs.find(p.number);
    if (it != ebrs.end() && it->second + cx.ext_node > p.start_sector &&
        it->second < p.start_sector) {
      // Only the head EBR shares the extended partition's node.
      for (const Partition& e : planned.partitions) {
        if (e.kind == PartitionKind::kExtended && e.start_sector == it->second) return true;
      }
    }
  }
  return false;
}

// The plan when no placement leaves the extended partition's node free (nothing can make
// room before the first logical partition): no table is written, since every table libfdisk
// writes for it would put the first logical partition inside that node, where partx and
// BLKPG refuse it. Every change is dropped, saying why.
std::vector<PlanAction> WithoutTableWrite(const Context& cx, std::vector<PlanAction> actions) {
  const Partition* ext = nullptr;
  const Partition* first = nullptr;
  for (const Partition& p : cx.table.partitions) {
    if (p.kind == PartitionKind::kExtended) ext = &p;
    if (p.kind == PartitionKind::kLogical && (!first || p.number < first->number)) first = &p;
  }
  if (!ext || !first) return actions;
  const std::string why = fmt::format(
      "the table cannot be rewritten: logical partition {} starts {} after the extended "
      "partition's start {}, inside the {} the kernel and partx give the extended partition's "
      "node (a table written so is refused by BLKPG: partx -a says \"Device or resource "
      "busy\"), and no placement makes room before it",
      first->number, Sectors(first->start_sector - ext->start_sector), ext->start_sector,
      Sectors(cx.ext_node));
  for (PlanAction& a : actions) {
    if (a.kind != ActionKind::kTableOnly && a.kind != ActionKind::kMoveData) continue;
    const Partition* p = cx.table.Find(a.partition);
    const bool aligned =
        p && (p->kind == PartitionKind::kExtended || cx.grid.IsAligned(a.old_start_sector));
    a.kind = aligned ? ActionKind::kNone : ActionKind::kImpossible;
    a.new_start_sector = a.old_start_sector;
    a.new_end_sector = a.old_end_sector;
    a.bytes_to_move = 0;
    a.empty = Emptiness::kNotClaimed;
    a.reason = aligned ? "left as it is: " + why
                       : fmt::format("start {} stays: {}", a.old_start_sector, why);
  }
  return actions;
}

}  // namespace

bool IsEndAnchored(const PartitionContents& contents) {
  const std::string& t = contents.fs_type;
  static constexpr std::string_view kRaidSuffix = "_raid_member";
  // NTFS keeps its backup boot sector in the partition's last sector (number_of_sectors):
  // ntfsfix and chkdsk look for it there, so the partition may not grow or shrink under it.
  return t == "zfs_member" || t == "ambivalent" || t == "ntfs" ||
         (t.size() >= kRaidSuffix.size() &&
          t.compare(t.size() - kRaidSuffix.size(), kRaidSuffix.size(), kRaidSuffix) == 0);
}

std::optional<uint64_t> FilesystemSectors(const Partition& p, uint64_t sector_size) {
  const PartitionContents& c = p.contents;
  if (!c.fs_size_bytes || *c.fs_size_bytes == 0 || sector_size == 0) return std::nullopt;
  const uint64_t fs = *c.fs_size_bytes / sector_size + (*c.fs_size_bytes % sector_size != 0);
  if (fs > p.size_sectors) return std::nullopt;
  return fs;
}

uint64_t ProtectedSectors(const Partition& p, uint64_t sector_size, uint64_t grain_sectors,
                          bool unread_tail_as_zeros) {
  const PartitionContents& c = p.contents;
  if (IsEndAnchored(c)) return p.size_sectors;
  if (!c.MayHoldData()) return std::min(p.size_sectors, grain_sectors);
  const std::optional<uint64_t> fs = FilesystemSectors(p, sector_size);
  // Past the filesystem: only what was read as zeros may be given up.
  if (!fs || c.tail_data_bytes) return p.size_sectors;
  if (unread_tail_as_zeros) return *fs;
  if (!c.zeros_from_bytes) return p.size_sectors;
  const uint64_t zeros_from =
      *c.zeros_from_bytes / sector_size + (*c.zeros_from_bytes % sector_size != 0);
  return std::min(p.size_sectors, std::max(*fs, zeros_from));
}

Result<PartitionTable> ShrunkTable(const PartitionTable& table, const PlanOptions& options) {
  PartitionTable t = table;
  const uint64_t ss = table.sector_size;
  for (const PlannedShrink& s : options.shrinks) {
    auto p = std::find_if(t.partitions.begin(), t.partitions.end(),
                          [&](const Partition& q) { return q.number == s.partition; });
    if (p == t.partitions.end()) {
      return MakeError(fmt::format("shrink of partition {}: there is no partition {}", s.partition,
                                   s.partition));
    }
    if (p->kind == PartitionKind::kExtended) {
      return MakeError(fmt::format(
          "shrink of partition {}: it is the extended partition, which holds no contents",
          s.partition));
    }
    if (s.size_sectors == 0 || s.size_sectors >= p->size_sectors) {
      return MakeError(fmt::format("shrink of partition {}: {} is not smaller than its {}",
                                   s.partition, Sectors(s.size_sectors), Sectors(p->size_sectors)));
    }
    p->size_sectors = s.size_sectors;
    const uint64_t contents = ShrunkContentsBytes(s.tool, s.size_sectors * ss, ss);
    if (p->contents.fs_size_bytes && *p->contents.fs_size_bytes > contents) {
      p->contents.fs_size_bytes = contents;
    }
    p->contents.zeros_from_bytes.reset();
    p->contents.tail_data_bytes.reset();
  }
  // The shrinks' table is written by libfdisk, which rebuilds the whole EBR chain
  // (ebr_placement.h): the rest of the plan starts from EBRs where libfdisk puts them, not where
  // the tool that made the table did (seed 47, case 818 of the apply sweep: an old fdisk's EBR
  // 63 sectors before its partition was right before it once the shrink was written, inside a
  // move down planned over the old place).
  if (t.label == LabelType::kDos && !options.shrinks.empty()) {
    const std::map<uint32_t, uint64_t> ebrs = PredictEbrSectors(t, t.first_usable_lba);
    std::vector<TableArea> areas;
    for (const TableArea& a : t.areas) {
      if (a.name != "EBR") areas.push_back(a);
    }
    for (const auto& [number, sector] : ebrs) {  // number order, as TableEbrSectors reads them
      areas.push_back({"EBR", sector * ss, ss});
    }
    t.areas = std::move(areas);
  }
  return t;
}

namespace {

// The actions planned on ShrunkTable(table) as actions on `table`: each shrunk partition's
// old end is its end before the shrink, its action says the shrink and changes the table.
Result<std::vector<PlanAction>> WithShrinks(const PartitionTable& table, const Alignment& alignment,
                                            const PlanOptions& options,
                                            Result<std::vector<PlanAction>> actions) {
  if (!actions) return actions;
  const uint64_t ss = table.sector_size;
  for (const PlannedShrink& s : options.shrinks) {
    const Partition* p = table.Find(s.partition);
    for (PlanAction& a : *actions) {
      if (a.partition != s.partition || p == nullptr) continue;
      if (a.kind == ActionKind::kImpossible || !alignment.IsAligned(a.new_start_sector * ss)) {
        return MakeError(
            fmt::format("partition {}: shrunk, its start {} still cannot be aligned: {}",
                        s.partition, a.old_start_sector, a.reason));
      }
      a.old_end_sector = p->end_sector();
      a.shrink = s;
      if (a.kind == ActionKind::kNone) a.kind = ActionKind::kTableOnly;
      const std::string what = p->contents.fs_type.empty() ? "contents" : p->contents.fs_type;
      a.reason = fmt::format("{} shrunk first by {} ({} -> {}, {}); {}", what,
                             FormatSize((p->size_sectors - s.size_sectors) * ss),
                             FormatSize(p->size_sectors * ss), FormatSize(s.size_sectors * ss),
                             ToString(s.tool), a.reason);
    }
  }
  return actions;
}

}  // namespace

Result<std::vector<PlanAction>> PlanPartitions(const PartitionTable& table,
                                               const Alignment& alignment,
                                               const PlanOptions& options) {
  if (!options.shrinks.empty()) {
    Result<PartitionTable> shrunk = ShrunkTable(table, options);
    if (!shrunk) return shrunk.error();
    PlanOptions rest = options;
    rest.shrinks.clear();
    return WithShrinks(table, alignment, options, PlanPartitions(*shrunk, alignment, rest));
  }
  if (table.label != LabelType::kGpt && table.label != LabelType::kDos) {
    if (table.label == LabelType::kNone && table.partitions.empty())
      return std::vector<PlanAction>{};
    return MakeError(fmt::format("cannot plan a '{}' partition table (only GPT and DOS)",
                                 ToString(table.label)));
  }
  Result<Context> cx = MakeContext(table, alignment, options);
  if (!cx) return cx.error();
  Result<std::vector<PlanAction>> actions = SearchActions(*cx);
  if (!actions || !ChangesTable(*actions) || !FirstLogicalTooClose(*cx, *actions)) return actions;
  // The table is written anyway: written so that the kernel and partx can register the first
  // logical partition (ExtendedNodeSectors), whatever that costs: every table apply writes
  // must read back through every reader (issue 38).
  cx->allow_close_ebr = false;
  if (Result<std::vector<PlanAction>> spaced = SearchActions(*cx)) return spaced;
  return WithoutTableWrite(*cx, std::move(*actions));
}

Result<std::vector<PlanAction>> DescribeExtents(
    const PartitionTable& table, const Alignment& alignment, const PlanOptions& options,
    const std::vector<std::pair<uint64_t, uint64_t>>& extents) {
  if (!options.shrinks.empty()) {
    Result<PartitionTable> shrunk = ShrunkTable(table, options);
    if (!shrunk) return shrunk.error();
    PlanOptions rest = options;
    rest.shrinks.clear();
    return WithShrinks(table, alignment, options,
                       DescribeExtents(*shrunk, alignment, rest, extents));
  }
  if (extents.size() != table.partitions.size()) {
    return MakeError(
        fmt::format("{} new extents for {} partitions", extents.size(), table.partitions.size()));
  }
  Result<Context> cx = MakeContext(table, alignment, options);
  if (!cx) return cx.error();
  PartitionTable changed = table;
  NewLayout layout;
  for (size_t i = 0; i < table.partitions.size(); ++i) {
    const auto [start, end] = extents[i];
    if (end < start) {
      return MakeError(fmt::format("partition {}: end {} before start {}",
                                   table.partitions[i].number, end, start));
    }
    changed.partitions[i].start_sector = start;
    changed.partitions[i].size_sectors = end - start + 1;
    layout.extent[i] = extents[i];
    layout.gap_before[i] = 0;
    if (table.partitions[i].kind == PartitionKind::kExtended) layout.ext_index = i;
  }
  if (Status s = CheckLayout(changed, cx->lo, cx->hi); !s) return s.error();
  std::vector<PlanAction> actions;
  for (size_t i = 0; i < table.partitions.size(); ++i) {
    const Partition& p = table.partitions[i];
    const auto [start, end] = extents[i];
    if (Status s = CheckNewExtent(*cx, i, start, end); !s) return s.error();
    if (p.kind == PartitionKind::kExtended || cx->grid.IsAligned(start)) {
      actions.push_back(DescribeAction(*cx, layout, i));
      continue;
    }
    if (start != p.start_sector) {
      return MakeError(
          fmt::format("partition {}: start {} is not on the alignment", p.number, start));
    }
    // Left where it is, misaligned: nothing moves; only its end may change.
    PlanAction a;
    a.partition = p.number;
    a.old_start_sector = p.start_sector;
    a.old_end_sector = p.end_sector();
    a.new_start_sector = start;
    a.new_end_sector = end;
    std::vector<std::string> parts{
        fmt::format("start {} is not aligned: left where it is", p.start_sector)};
    if (end != p.end_sector()) {
      a.kind = ActionKind::kTableOnly;
      parts.push_back(EndChangeText(p, a, cx->empty[i]));
      if (end < p.end_sector()) {
        a.empty = EmptinessOf(*cx, i);
        if (a.empty != Emptiness::kNotClaimed)
          parts.push_back(EmptyText(p, a.empty, cx->table.sector_size));
      }
    }
    a.reason = fmt::format("{}", fmt::join(parts, "; "));
    actions.push_back(std::move(a));
  }
  return actions;
}

Result<std::vector<PlanAction>> PlanFileActions(
    const PartitionTable& table, const Alignment& alignment, const PlanOptions& options,
    const std::vector<std::pair<uint64_t, uint64_t>>& extents) {
  Result<std::vector<PlanAction>> actions = DescribeExtents(table, alignment, options, extents);
  if (!actions) return actions;
  for (size_t i = 0; i < actions->size(); ++i) {
    PlanAction& a = (*actions)[i];
    const Partition& p = table.partitions[i];
    const bool stays =
        a.new_start_sector == a.old_start_sector && a.new_end_sector == a.old_end_sector;
    if (a.kind != ActionKind::kNone || !stays || p.kind == PartitionKind::kExtended ||
        alignment.IsAligned(p.start_sector * table.sector_size) ||
        (table.label == LabelType::kGpt && IsBiosBootPartition(p.type_code))) {
      continue;
    }
    a.kind = ActionKind::kImpossible;  // plan's word for a start it leaves misaligned
  }
  return actions;
}

void AdoptPlansReasons(const std::vector<PlanAction>& own, std::vector<PlanAction>* actions) {
  for (PlanAction& a : *actions) {
    for (const PlanAction& planned : own) {
      PlanAction same = planned;
      same.reason = a.reason;
      if (same == a) a.reason = planned.reason;
    }
  }
}

std::vector<uint32_t> PartitionsWorthProving(const PartitionTable& table,
                                             const std::vector<PlanAction>& optimistic,
                                             const PlanOptions& options) {
  std::vector<uint32_t> out;
  for (const PlanAction& a : optimistic) {
    const Partition* p = table.Find(a.partition);
    if (p == nullptr || p->kind == PartitionKind::kExtended ||
        p->contents.proof != ContentProof::kUnscanned ||
        std::find(options.discard.begin(), options.discard.end(), p->number) !=
            options.discard.end()) {
      continue;
    }
    const bool moved = a.new_start_sector != a.old_start_sector;
    const bool shrunk =
        a.new_end_sector - a.new_start_sector < a.old_end_sector - a.old_start_sector;
    if ((a.kind == ActionKind::kTableOnly || a.kind == ActionKind::kMoveData) &&
        (moved || shrunk)) {
      out.push_back(a.partition);
    }
  }
  return out;
}

std::vector<TailProof> TailsToProve(const PartitionTable& table,
                                    const std::vector<PlanAction>& actions,
                                    const PlanOptions& options) {
  std::vector<TailProof> out;
  const uint64_t ss = table.sector_size;
  for (const PlanAction& a : actions) {
    const Partition* p = table.Find(a.partition);
    if (p == nullptr || p->kind == PartitionKind::kExtended || !p->contents.MayHoldData() ||
        IsEndAnchored(p->contents) || p->contents.tail_data_bytes ||
        (a.kind != ActionKind::kTableOnly && a.kind != ActionKind::kMoveData) ||
        a.new_end_sector < a.new_start_sector || a.shrink ||
        std::find(options.discard.begin(), options.discard.end(), p->number) !=
            options.discard.end()) {
      continue;
    }
    const uint64_t new_size = a.new_end_sector - a.new_start_sector + 1;
    const std::optional<uint64_t> fs = FilesystemSectors(*p, ss);
    if (!fs || new_size >= p->size_sectors || new_size < *fs) continue;
    const uint64_t from = new_size * ss;
    if (p->contents.zeros_from_bytes && *p->contents.zeros_from_bytes <= from) continue;
    out.push_back({p->number, from});
  }
  return out;
}

Plan EmptyPlan(const PartitionTable& current, const DeviceInfo& device,
               const Alignment& alignment) {
  Plan plan;
  plan.disk.path = device.identity.path;
  plan.disk.size_bytes = device.topology.size_bytes;
  plan.disk.logical_sector_size = device.topology.logical_sector_size;
  plan.disk.serial = device.identity.serial;
  plan.disk.wwn = device.identity.wwn;
  plan.disk.table_id = current.disk_id;
  plan.topology = device.topology;
  plan.label = current.label;
  plan.table_fingerprint = current.fingerprint;
  plan.alignment = alignment;
  return plan;
}

Result<Plan> MakePlan(const PartitionTable& table, const DeviceInfo& device,
                      const Alignment& alignment, const PlanOptions& options) {
  if (Status s = CheckChangeable(table); !s) return s.error();
  if (table.sector_size != device.topology.logical_sector_size) {
    return MakeError(
        fmt::format("the table was read with {}-byte sectors but the topology has {}-byte sectors",
                    table.sector_size, device.topology.logical_sector_size));
  }
  if (Status s = CheckDiscard(table, options.discard); !s) return s.error();
  Result<std::vector<PlanAction>> actions = PlanPartitions(table, alignment, options);
  if (!actions) return actions.error();
  Plan plan = EmptyPlan(table, device, alignment);
  plan.actions = std::move(*actions);
  plan.relocate_backup_gpt = BackupRelocationFor(table);
  return plan;
}

bool PlanIgnoresContents(const PartitionTable& table, const Alignment& alignment,
                         const std::vector<PlanAction>& actions) {
  const uint64_t ss = table.sector_size;
  if (actions.size() != table.partitions.size()) return false;
  for (const Partition& p : table.partitions) {
    if (p.kind == PartitionKind::kExtended) continue;
    if (p.size_sectors == 0 || !alignment.IsAligned(p.start_sector * ss) ||
        !alignment.IsAligned((p.end_sector() + 1) * ss)) {
      return false;
    }
  }
  for (const PlanAction& a : actions) {
    const Partition* p = table.Find(a.partition);
    if (p == nullptr || a.kind != ActionKind::kNone || a.new_start_sector != p->start_sector ||
        a.new_end_sector != p->end_sector() || a.old_start_sector != p->start_sector ||
        a.old_end_sector != p->end_sector() || a.bytes_to_move != 0 || a.shrink) {
      return false;
    }
  }
  return true;
}

Status CheckDiscard(const PartitionTable& table, const std::vector<uint32_t>& discard) {
  for (uint32_t number : discard) {
    const Partition* p = table.Find(number);
    if (p == nullptr)
      return MakeError(fmt::format("--discard {}: there is no partition {}", number, number));
    if (p->kind == PartitionKind::kExtended) {
      return MakeError(
          fmt::format("--discard {}: partition {} is the extended partition; "
                      "discard its logical partitions one by one",
                      number, number));
    }
  }
  return {};
}

Result<Plan> MakeProvenPlan(PartitionTable* table, const DeviceInfo& device,
                            const Alignment& alignment, const PlanOptions& options,
                            const PlanProofs& proofs) {
  if (proofs.partitions && proofs.tails) {
    for (;;) {
      PlanOptions optimistic = options;
      optimistic.unscanned_as_empty = true;
      Result<Plan> first = MakePlan(*table, device, alignment, optimistic);
      if (!first) return first.error();
      std::vector<uint32_t> worth = PartitionsWorthProving(*table, first->actions, options);
      if (!worth.empty()) {
        // A partition proven now may change which tails the plan takes: those in the next round.
        if (Status s = proofs.partitions(table, worth); !s) return s.error();
        continue;
      }
      std::vector<TailProof> tails = TailsToProve(*table, first->actions, options);
      if (tails.empty()) break;
      if (Status s = proofs.tails(table, tails); !s) return s.error();
    }
  }
  return MakePlan(*table, device, alignment, options);
}

Status CheckTableLayout(const PartitionTable& table) {
  if (table.label == LabelType::kDos) {
    return CheckLayout(table, 1, std::min(table.last_usable_lba, kMbrMaxSector));
  }
  return CheckLayout(table, table.first_usable_lba, table.last_usable_lba);
}

PartitionTable ApplyPlanToTable(const PartitionTable& table,
                                const std::vector<PlanAction>& actions) {
  PartitionTable out = table;
  for (const PlanAction& a : actions) {
    for (Partition& p : out.partitions) {
      if (p.number != a.partition) continue;
      p.start_sector = a.new_start_sector;
      p.size_sectors = a.new_end_sector - a.new_start_sector + 1;
    }
  }
  return out;
}

std::string PlanSummary(const Plan& plan) {
  size_t none = 0, table_only = 0, move = 0, impossible = 0;
  uint64_t bytes = 0;
  for (const PlanAction& a : plan.actions) {
    switch (a.kind) {
      case ActionKind::kNone:
        ++none;
        break;
      case ActionKind::kTableOnly:
        ++table_only;
        break;
      case ActionKind::kMoveData:
        ++move;
        bytes += a.bytes_to_move;
        break;
      case ActionKind::kImpossible:
        ++impossible;
        break;
    }
  }
  return fmt::format(
      "{} partition{}: {} unchanged, {} table-only, {} move data ({}), {} impossible",
      plan.actions.size(), plan.actions.size() == 1 ? "" : "s", none, table_only, move,
      FormatSize(bytes), impossible);
}

std::optional<BackupGptRelocation> BackupRelocationFor(const PartitionTable& table) {
  // libfdisk lists a GPT's areas in this order: protective MBR, header, entries, backup
  // entries, backup header (LayoutTransition relies on it too).
  constexpr size_t kBackupEntries = 3, kBackupHeader = 4;
  if (table.label != LabelType::kGpt || table.areas.size() != 5 || table.sector_size == 0 ||
      table.disk_size_sectors == 0) {
    return std::nullopt;
  }
  const uint64_t last = table.disk_size_sectors - 1;
  const uint64_t from = table.areas[kBackupHeader].offset_bytes / table.sector_size;
  if (from >= last) return std::nullopt;
  const uint64_t entries =
      AlignUp(table.areas[kBackupEntries].size_bytes, table.sector_size) / table.sector_size;
  if (entries + 1 >= last) return std::nullopt;
  BackupGptRelocation move;
  move.from_lba = from;
  move.to_lba = last;
  move.old_last_usable_lba = table.last_usable_lba;
  move.new_last_usable_lba = std::max(table.last_usable_lba, last - entries - 1);
  return move;
}

std::string DescribeRelocation(const BackupGptRelocation& move) {
  return fmt::format(
      "table-only: relocate the backup GPT from sector {} to the end of the disk (sector {}); "
      "the usable area then ends at sector {}, not {} (the disk is a copy of a smaller disk, or "
      "grew); the partitions keep their place",
      move.from_lba, move.to_lba, move.new_last_usable_lba, move.old_last_usable_lba);
}

std::optional<std::string> DescribeFreeTail(const Plan& plan, const PartitionTable& table) {
  if (table.label != LabelType::kDos || table.sector_size == 0 || table.disk_size_sectors == 0) {
    return std::nullopt;
  }
  uint64_t end = 0;  // the last sector any partition covers after the plan
  for (const Partition& p : table.partitions) {
    uint64_t last = p.end_sector();
    for (const PlanAction& a : plan.actions) {
      if (a.partition == p.number && a.kind != ActionKind::kImpossible) {
        last = std::max(a.new_end_sector, a.old_end_sector);
      }
    }
    end = std::max(end, last);
  }
  const uint64_t disk_last = std::min(table.disk_size_sectors - 1, kMbrMaxSector);
  if (table.partitions.empty() || end >= disk_last) return std::nullopt;
  const uint64_t free = disk_last - end;
  if (free * table.sector_size < std::max<uint64_t>(plan.alignment.grain_bytes, 1)) {
    return std::nullopt;
  }
  return fmt::format(
      "free after the last partition: sectors {}-{} ({}), in no partition: room for a new "
      "partition, or for the last one to grow",
      end + 1, disk_last, FormatSize(free * table.sector_size));
}

}  // namespace partalign
