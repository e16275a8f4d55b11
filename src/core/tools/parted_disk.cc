// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/parted_disk.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

namespace partalign {
namespace {

// GPT_DEFAULT_PARTITION_ENTRY_ARRAY_SIZE (labels/gpt.c): 128 entries x 128 bytes. The data
// area starts after the protective MBR, the header and this array (gpt_alloc()).
constexpr int64_t kPedGptEntryArrayBytes = 16384;
// The msdos/pc98 limits of labels/pt-limit.gperf: 32-bit start and length.
constexpr int64_t kMsdosMaxStart = 0xFFFFFFFFll;
constexpr int64_t kPedMsdosMaxLength = 0xFFFFFFFFll;
// DOS_N_PRI_PARTITIONS, GPT's entry count (parted's default), the highest logical number.
constexpr int kMsdosPrimaries = 4;
constexpr int kPedGptEntries = 128;
constexpr int kFirstLogical = 5;

const ToolVersion kPedHalfRadiusSince{3, 1, 0, 2};
// 3f6b723 "Fix ending sector location when using kibi IEC suffix": before it, an end counted as
// IEC only when its unit began with one of "kMGTPEZY" exactly (so "KiB" did not).
const ToolVersion kAnyCaseIecEndSince{3, 5, 28, 3};
const ToolVersion kPedArithmeticSince{3, 3, 0, 2};

// ---- libparted's sector arithmetic (cs/natmath.c), restated ----------------------------------

// "a mod b, the way C should have done it": note that a negative exact multiple gives b, not 0.
int64_t PedDiskAbsMod(int64_t a, int64_t b) { return a < 0 ? a % b + b : a % b; }
int64_t PedRoundDownTo(int64_t sector, int64_t grain) {
  return sector - PedDiskAbsMod(sector, grain);
}
int64_t PedRoundUpTo(int64_t sector, int64_t grain) {
  return sector % grain ? PedRoundDownTo(sector, grain) + grain : sector;
}

struct PedRange {
  int64_t start = 0;
  int64_t end = -1;  // inclusive; empty when end < start
  bool empty() const { return end < start; }
  bool Contains(int64_t s) const { return s >= start && s <= end; }
  int64_t length() const { return end - start + 1; }
};

PedRange Intersect(PedRange a, PedRange b) {
  return {std::max(a.start, b.start), std::min(a.end, b.end)};
}

const SectorAlignment kAnyAlignment{0, 1};

// The sector of `align` nearest `sector` that is inside `range`, moving by whole grains
// (_closest_inside_geometry); -1 when there is none.
int64_t ClosestInside(const SectorAlignment& align, PedRange range, int64_t sector) {
  const int64_t g = align.grain_sectors;
  if (sector < range.start) sector += PedRoundUpTo(range.start - sector, g);
  if (sector > range.end) sector -= PedRoundUpTo(sector - range.end, g);
  return range.Contains(sector) ? sector : -1;
}

int64_t AlignedUp(const SectorAlignment& a, PedRange range, int64_t sector) {
  int64_t r = PedRoundUpTo(sector - a.offset_sectors, a.grain_sectors) + a.offset_sectors;
  return ClosestInside(a, range, r);
}

int64_t AlignedDown(const SectorAlignment& a, PedRange range, int64_t sector) {
  int64_t r = PedRoundDownTo(sector - a.offset_sectors, a.grain_sectors) + a.offset_sectors;
  return ClosestInside(a, range, r);
}

// ped_alignment_align_nearest: the closer of up and down; a tie goes to the down candidate.
int64_t AlignedNearest(const SectorAlignment& a, PedRange range, int64_t sector) {
  int64_t up = AlignedUp(a, range, sector);
  int64_t down = AlignedDown(a, range, sector);
  if (up == -1) return down;
  if (down == -1) return up;
  return std::llabs(sector - up) < std::llabs(sector - down) ? up : down;
}

// A PedConstraint. Only the device constraint carries an alignment other than "any" (offset 0,
// grain 1), so an intersection keeps the one that is not "any" (ped_alignment_intersect).
struct Constraint {
  SectorAlignment start_align = kAnyAlignment;
  SectorAlignment end_align = kAnyAlignment;
  PedRange start_range;
  PedRange end_range;
  int64_t min_size = 1;
  int64_t max_size = 0;
};

// ped_constraint_new_from_max(): anywhere inside `area`.
Constraint FromMax(PedRange area) {
  return {kAnyAlignment, kAnyAlignment, area, area, 1, area.length()};
}

// ped_constraint_intersect(): nullopt where libparted returns NULL (an empty range).
std::optional<Constraint> Intersect(const Constraint& a, const Constraint& b) {
  auto align = [](const SectorAlignment& x, const SectorAlignment& y) {
    return x == kAnyAlignment ? y : x;
  };
  Constraint c{align(a.start_align, b.start_align),     align(a.end_align, b.end_align),
               Intersect(a.start_range, b.start_range), Intersect(a.end_range, b.end_range),
               std::max(a.min_size, b.min_size),        std::min(a.max_size, b.max_size)};
  if (c.start_range.empty() || c.end_range.empty()) return std::nullopt;
  return c;
}

// ped_constraint_solve_nearest(): the start nearest the target among the starts that leave room
// for an aligned end, then the aligned end nearest the target end.
std::optional<PedRange> SolveNearest(const Constraint& c, int64_t device_length, PedRange target) {
  if (c.start_range.empty() || c.end_range.empty() || c.min_size > c.max_size) return {};
  int64_t first_end = AlignedDown(c.end_align, c.end_range, c.end_range.start);
  int64_t last_end = AlignedUp(c.end_align, c.end_range, c.end_range.end);
  if (first_end == -1 || last_end == -1 || first_end > last_end || last_end < c.min_size) {
    return {};
  }
  int64_t min_start = std::max<int64_t>(0, first_end - c.max_size + 1);
  int64_t max_start = last_end - c.min_size + 1;
  if (max_start < 0) return {};
  PedRange starts = Intersect(PedRange{min_start, max_start}, c.start_range);
  if (starts.empty()) return {};
  int64_t start = AlignedNearest(c.start_align, starts, target.start);
  if (start == -1) return {};
  if (start + c.min_size - 1 > device_length - 1) return {};
  PedRange ends{start + c.min_size - 1, std::min(start + c.max_size - 1, device_length - 1)};
  ends = Intersect(ends, c.end_range);
  if (ends.empty()) return {};
  int64_t end = AlignedNearest(c.end_align, ends, target.end);
  if (end == -1) return {};
  return PedRange{start, end};
}

// ---- the partition list parted shows (metadata, partitions, free space) ------------------------

enum class RegionKind { kMetadata, kFree, kPartition };

struct Region {
  PedRange range;
  RegionKind kind = RegionKind::kFree;
};

// Where a label lets partitions live: the GPT data area (gpt_alloc), or msdos with cylinder
// alignment off, which -a optimal|minimal always sets (_no_geom_constraint(disk, 1, len - 1)).
PedRange LabelArea(const PartedDevice& d, LabelType label) {
  if (label == LabelType::kGpt) {
    int64_t table = kPedGptEntryArrayBytes / d.sector_size;
    return {2 + table, d.length_sectors - 2 - table};
  }
  return {1, d.length_sectors - 1};
}

// Fills the gaps of `items` (sorted, inside `area`) with free regions, as _disk_alloc_freespace
// and _alloc_extended_freespace do (the latter leaves the extended partition's first sector
// out: its own metadata covers it).
std::vector<Region> WithFreeSpace(std::vector<Region> items, PedRange area) {
  std::sort(items.begin(), items.end(),
            [](const Region& a, const Region& b) { return a.range.start < b.range.start; });
  std::vector<Region> out;
  int64_t last_end = area.start - 1;
  for (const Region& r : items) {
    if (r.range.start > last_end + 1) {
      out.push_back({{last_end + 1, r.range.start - 1}, RegionKind::kFree});
    }
    out.push_back(r);
    last_end = std::max(last_end, r.range.end);
  }
  if (last_end < area.end) out.push_back({{last_end + 1, area.end}, RegionKind::kFree});
  return out;
}

// _string_ends_with_iec_unit(): the last three characters name an IEC unit.
bool EndIsIec(const ToolVersion& v, std::string_view text) {
  if (text.size() < 4) return false;
  std::string_view unit = text.substr(text.size() - 3);
  auto lower = [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  if (lower(unit[1]) != 'i' || lower(unit[2]) != 'b') return false;
  if (v >= kAnyCaseIecEndSince)
    return std::string_view("kmgt").find(lower(unit[0])) != std::string_view::npos;
  return std::string_view("kMGTPEZY").find(unit[0]) != std::string_view::npos;
}

}  // namespace

std::string_view ToString(PartedPartType type) {
  switch (type) {
    case PartedPartType::kPrimary:
      return "primary";
    case PartedPartType::kExtended:
      return "extended";
    case PartedPartType::kLogical:
      return "logical";
  }
  return "primary";
}

namespace {

// The state behind PartedDisk::Mkpart, with the steps of do_mkpart() and
// ped_disk_add_partition() as functions.
class MkpartRun {
 public:
  MkpartRun(const PartedModel& m, LabelType label, const std::vector<PartedPartition>& parts)
      : m_(m), d_(m.device), label_(label), parts_(parts) {}

  MkpartOutcome Run(PartedMode mode, PartedPartType type, std::string_view start_text,
                    std::string_view end_text);
  std::vector<Region> Regions() const;

 private:
  struct Added {
    PedRange geom;
    int number = 0;
  };

  const PartedPartition* Extended() const {
    for (const PartedPartition& p : parts_) {
      if (p.type == PartedPartType::kExtended) return &p;
    }
    return nullptr;
  }
  PedRange Snap(PedRange target, PedRange start_range, PedRange end_range) const;
  std::optional<Constraint> Overlap(PartedPartType type, PedRange geom) const;
  std::optional<Constraint> LogicalRoom(int number, PedRange geom) const;
  int Number(PartedPartType type) const;
  Result<Added> Add(PartedPartType type, const Constraint& constraint, PedRange* geom) const;

  const PartedModel& m_;
  const PartedDevice& d_;
  LabelType label_;
  const std::vector<PartedPartition>& parts_;
};

// The list ped_disk_next_partition() walks outside update mode, with the extended partition
// replaced by what it holds (ped_disk_get_partition_by_sector never returns it).
std::vector<Region> MkpartRun::Regions() const {
  const PedRange whole{0, d_.length_sectors - 1};
  std::vector<Region> top;
  std::vector<Region> inside;
  const PartedPartition* ext = Extended();
  for (const PartedPartition& p : parts_) {
    if (p.type == PartedPartType::kLogical) continue;
    if (p.type != PartedPartType::kExtended) {
      top.push_back({{p.start_sector, p.end_sector}, RegionKind::kPartition});
    }
  }
  if (label_ == LabelType::kGpt) {
    PedRange area = LabelArea(d_, label_);
    top.push_back({{0, area.start - 1}, RegionKind::kMetadata});
    top.push_back({{area.end + 1, whole.end}, RegionKind::kMetadata});
  } else {
    // add_startend_metadata(): one track, cut short before the first partition; nothing at
    // the end (cylinder alignment is off).
    int64_t init_end = d_.bios_sectors - 1;
    int64_t first = std::numeric_limits<int64_t>::max();
    for (const PartedPartition& p : parts_) {
      if (p.type != PartedPartType::kLogical) first = std::min(first, p.start_sector);
    }
    if (first != std::numeric_limits<int64_t>::max()) init_end = std::min(init_end, first - 1);
    if (0 < init_end && init_end <= d_.length_sectors) {
      top.push_back({{0, init_end}, RegionKind::kMetadata});
    }
    if (ext != nullptr) {
      // msdos_alloc_metadata(): an EBR region before each logical partition but the first
      // (unless that one is a track or more away), then the extended partition's own track.
      std::vector<const PartedPartition*> logicals;
      for (const PartedPartition& p : parts_) {
        if (p.type == PartedPartType::kLogical) logicals.push_back(&p);
      }
      std::sort(logicals.begin(), logicals.end(),
                [](auto* a, auto* b) { return a->number < b->number; });
      std::vector<Region> children;
      for (const PartedPartition* l : logicals) {
        const PartedPartition* prev = nullptr;
        for (const PartedPartition& p : parts_) {
          if (p.type == PartedPartType::kLogical && p.end_sector < l->start_sector &&
              (prev == nullptr || p.end_sector > prev->end_sector)) {
            prev = &p;
          }
        }
        int64_t meta_end = l->start_sector - 1;
        int64_t meta_start = PedRoundDownTo(meta_end, d_.bios_sectors * d_.bios_heads);
        meta_start = std::max(meta_start, prev ? prev->end_sector + 1 : ext->start_sector + 1);
        if (l->number == kFirstLogical && meta_end - meta_start + 1 < d_.bios_sectors) {
          continue;
        }
        if (meta_end >= meta_start)
          children.push_back({{meta_start, meta_end}, RegionKind::kMetadata});
        children.push_back({{l->start_sector, l->end_sector}, RegionKind::kPartition});
      }
      for (const PartedPartition* l : logicals) {
        if (std::none_of(children.begin(), children.end(), [&](const Region& r) {
              return r.kind == RegionKind::kPartition && r.range.start == l->start_sector;
            })) {
          children.push_back({{l->start_sector, l->end_sector}, RegionKind::kPartition});
        }
      }
      int64_t ext_meta_end = ext->start_sector + d_.bios_sectors - 1;
      for (const Region& c : children) ext_meta_end = std::min(ext_meta_end, c.range.start - 1);
      children.push_back({{ext->start_sector, ext_meta_end}, RegionKind::kMetadata});
      inside = WithFreeSpace(children, {ext->start_sector, ext->end_sector});
      // The placeholder keeps the extended partition's place in the top-level list.
      top.push_back({{ext->start_sector, ext->end_sector}, RegionKind::kPartition});
    }
  }
  std::vector<Region> flat;
  for (const Region& r : WithFreeSpace(top, whole)) {
    if (ext != nullptr && r.range.start == ext->start_sector && r.kind == RegionKind::kPartition &&
        r.range.end == ext->end_sector) {
      flat.insert(flat.end(), inside.begin(), inside.end());
    } else {
      flat.push_back(r);
    }
  }
  return flat;
}

enum Move { kStill = 0, kUp = 1, kDown = 2 };

// prefer_snap() of parted/parted.c: move a position to the edge of the region it lies in when
// that edge is inside the accepted range and closer than the other edge. `what` is 0 for a
// start and -1 for an end (SECT_START, SECT_END). Returns the move and its distance.
std::pair<Move, int64_t> PreferSnap(int64_t s, int what, PedRange range, int* allow,
                                    PedRange region) {
  int64_t up_dist = -1, down_dist = -1;
  if (*allow & kUp) {
    int64_t n = region.end + 1 + what;
    if (range.Contains(n)) {
      up_dist = n - s;
    } else {
      *allow &= ~kUp;
    }
  }
  if (*allow & kDown) {
    int64_t n = region.start + what;
    if (range.Contains(n)) {
      down_dist = s - n;
    } else {
      *allow &= ~kDown;
    }
  }
  if ((*allow & kUp) && (*allow & kDown)) {
    if (down_dist < up_dist || (down_dist == up_dist && what == 0)) return {kDown, down_dist};
    return {kUp, up_dist};
  }
  if (*allow & kUp) return {kUp, up_dist};
  if (*allow & kDown) return {kDown, down_dist};
  return {kStill, 0};
}

// snap_to_boundaries() with no old geometry.
PedRange MkpartRun::Snap(PedRange g, PedRange start_range, PedRange end_range) const {
  std::vector<Region> regions = Regions();
  auto region_of = [&](int64_t s) -> size_t {
    for (size_t i = 0; i < regions.size(); ++i) {
      if (regions[i].range.Contains(s)) return i;
    }
    return regions.size() - 1;
  };
  size_t sp = region_of(g.start), ep = region_of(g.end);
  const PedRange start_part = regions[sp].range, end_part = regions[ep].range;
  const bool adjacent = start_part.end + 1 == end_part.start;
  int start_allow = kUp | kDown, end_allow = kUp | kDown;
  if (sp == ep) {
    start_allow &= ~kUp;
    end_allow &= ~kDown;
  }
  auto [start_want, start_dist] = PreferSnap(g.start, 0, start_range, &start_allow, start_part);
  auto [end_want, end_dist] = PreferSnap(g.end, -1, end_range, &end_allow, end_part);
  if (adjacent && start_want == kUp && end_want == kDown) {
    if (end_dist < start_dist) {
      start_allow &= ~kUp;
      std::tie(start_want, start_dist) =
          PreferSnap(g.start, 0, start_range, &start_allow, start_part);
    } else {
      end_allow &= ~kDown;
      std::tie(end_want, end_dist) = PreferSnap(g.end, -1, end_range, &end_allow, end_part);
    }
  }
  int64_t start = start_want == kDown ? start_part.start
                  : start_want == kUp ? start_part.end + 1
                                      : g.start;
  int64_t end = end_want == kDown ? end_part.start - 1 : end_want == kUp ? end_part.end : g.end;
  return {start, end};
}

// _partition_get_overlap_constraint() (disk.c): the free space around `geom` among the
// partitions of the same level (primary and extended, or the logical ones inside the extended
// partition); nullopt for a space of one sector or none.
std::optional<Constraint> MkpartRun::Overlap(PartedPartType type, PedRange geom) const {
  int64_t min_start = 0;
  int64_t max_end = std::numeric_limits<int64_t>::max() - 1;
  std::vector<const PartedPartition*> level;
  const PartedPartition* ext = Extended();
  if (type == PartedPartType::kLogical) {
    min_start = ext->start_sector;
    max_end = ext->end_sector;
  }
  for (const PartedPartition& p : parts_) {
    bool logical = p.type == PartedPartType::kLogical;
    if (logical == (type == PartedPartType::kLogical)) level.push_back(&p);
  }
  size_t i = 0;
  while (i < level.size() &&
         (level[i]->start_sector < geom.start || min_start >= level[i]->start_sector)) {
    min_start = level[i]->end_sector + 1;
    ++i;
  }
  if (i < level.size()) max_end = level[i]->start_sector - 1;
  if (min_start >= max_end) return std::nullopt;
  return FromMax({min_start, max_end});
}

// _log_meta_overlap_constraint() (labels/dos.c): a logical partition needs one sector for the
// extended partition's table before it, and every logical partition but number 5 one more for
// its own EBR.
std::optional<Constraint> MkpartRun::LogicalRoom(int number, PedRange geom) const {
  const PartedPartition* ext = Extended();
  const int not_5 = number != kFirstLogical;
  int64_t min_start = ext->start_sector + 1 + not_5;
  int64_t max_end = ext->end_sector;
  std::vector<const PartedPartition*> logicals;
  for (const PartedPartition& p : parts_) {
    if (p.type == PartedPartType::kLogical) logicals.push_back(&p);
  }
  auto ebr = [](const PartedPartition* p) { return p->number != kFirstLogical ? 1 : 0; };
  size_t i = 0;
  while (i < logicals.size() &&
         (logicals[i]->start_sector - ebr(logicals[i]) < geom.start - not_5 ||
          logicals[i]->start_sector - ebr(logicals[i]) <= min_start)) {
    min_start = logicals[i]->end_sector + 1 + not_5;
    ++i;
  }
  if (i < logicals.size()) max_end = logicals[i]->start_sector - 1 - ebr(logicals[i]);
  if (min_start >= max_end) return std::nullopt;
  return FromMax({min_start, max_end});
}

// gpt_partition_enumerate(), msdos_partition_enumerate(): the lowest free number; 0 for none.
int MkpartRun::Number(PartedPartType type) const {
  auto used = [&](int n) {
    return std::any_of(parts_.begin(), parts_.end(),
                       [&](const PartedPartition& p) { return p.number == n; });
  };
  int first = 1, last = kPedGptEntries;
  if (label_ == LabelType::kDos) {
    if (type == PartedPartType::kLogical) {
      first = kFirstLogical;
      last = std::numeric_limits<int>::max();
    } else {
      last = kMsdosPrimaries;
    }
  }
  for (int n = first; n <= last; ++n) {
    if (!used(n)) return n;
  }
  return 0;
}

// ped_disk_add_partition(): sanity checks, the overlap constraint, numbering, the label's
// alignment function and _check_partition(). Errors carry parted's message. `*geom` is the
// partition's geometry: the solution replaces it even when a later check fails, as in parted,
// so that the retry starts from there.
Result<MkpartRun::Added> MkpartRun::Add(PartedPartType type, const Constraint& constraint,
                                        PedRange* geom) const {
  const PedRange target = *geom;
  const PartedPartition* ext = Extended();
  if (label_ == LabelType::kDos) {
    if (type != PartedPartType::kLogical) {
      int primaries = static_cast<int>(std::count_if(
          parts_.begin(), parts_.end(),
          [](const PartedPartition& p) { return p.type != PartedPartType::kLogical; }));
      if (primaries + 1 > kMsdosPrimaries) return MakeError("Too many primary partitions.");
    } else if (ext == nullptr) {
      return MakeError("Can't add a logical partition, because there is no extended partition.");
    }
  } else if (type != PartedPartType::kPrimary) {
    return MakeError("gpt disk labels don't support logical or extended partitions.");
  }
  std::optional<Constraint> overlap = Overlap(type, target);
  std::optional<Constraint> c = overlap ? Intersect(*overlap, constraint) : std::nullopt;
  if (!c) return MakeError("Can't have overlapping partitions.");
  const int number = Number(type);
  if (number == 0) return MakeError("Too many primary partitions.");
  std::optional<Constraint> internal;
  if (label_ == LabelType::kGpt) {
    internal = FromMax(LabelArea(d_, label_));
  } else if (type == PartedPartType::kLogical) {
    internal = LogicalRoom(number, target);
  } else if (type == PartedPartType::kExtended) {
    // _no_geom_extended_constraint() with no logical partition yet.
    PedRange any{1, d_.length_sectors - 1};
    internal = Constraint{kAnyAlignment, kAnyAlignment, any, any, 1, d_.length_sectors};
  } else {
    internal = FromMax(LabelArea(d_, label_));
  }
  std::optional<Constraint> all = internal ? Intersect(*c, *internal) : std::nullopt;
  std::optional<PedRange> solved =
      all ? SolveNearest(*all, d_.length_sectors, target) : std::nullopt;
  if (!solved) return MakeError("Unable to satisfy all constraints on the partition.");
  *geom = *solved;
  // _check_partition()
  if (type == PartedPartType::kExtended && ext != nullptr) {
    return MakeError("Can't have more than one extended partition.");
  }
  if (type != PartedPartType::kLogical && ext != nullptr && solved->start >= ext->start_sector &&
      solved->end <= ext->end_sector) {
    return MakeError("Can't have a primary partition inside an extended partition.");
  }
  if (label_ == LabelType::kDos) {
    int64_t length = solved->length();
    if (length > kPedMsdosMaxLength) {
      return MakeError(
          fmt::format("partition length of {} sectors exceeds the msdos-partition-table-imposed "
                      "maximum of {}",
                      length, kPedMsdosMaxLength));
    }
    if (solved->start > kMsdosMaxStart) {
      return MakeError(fmt::format(
          "starting sector number, {} exceeds the msdos-partition-table-imposed maximum of {}",
          solved->start, kMsdosMaxStart));
    }
  }
  return Added{*solved, number};
}

MkpartOutcome MkpartRun::Run(PartedMode mode, PartedPartType type, std::string_view start_text,
                             std::string_view end_text) {
  MkpartOutcome out;
  PedRange area = LabelArea(d_, label_);
  if (area.empty()) {
    out.error = "device is too small for GPT";
    return out;
  }
  Result<PartedPosition> start = ParsePartedPosition(m_, start_text);
  Result<PartedPosition> end = ParsePartedPosition(m_, end_text);
  if (!start || !end) {
    out.error = (!start ? start.error() : end.error()).message;
    return out;
  }
  // _adjust_end_if_iec() (parted >= 3.1): an end typed in IEC units means "up to", one sector
  // lower.
  if (EndIsIec(m_.version, end_text) && m_.version >= kPedHalfRadiusSince &&
      start->sector != end->sector) {
    end->sector -= 1;
    end->range_start -= 1;
    end->range_end -= 1;
  }
  if (end->sector < start->sector) {
    out.error = fmt::format("Can't have the end before the start! (start sector={} end sector={})",
                            start->sector, end->sector);
    return out;
  }
  const PedRange start_range{start->range_start, start->range_end};
  const PedRange end_range{end->range_start, end->range_end};
  out.reasons.push_back(
      fmt::format("'{}' is sector {}, accepted anywhere in {}..{}{}", start_text, start->sector,
                  start_range.start, start_range.end,
                  start->iec && start_range.start == start_range.end
                      ? " (IEC units are exact)"
                      : fmt::format(" ({} a unit either side, ped_unit_parse_custom)",
                                    m_.version >= kPedHalfRadiusSince ? "half" : "a whole")));

  const SectorAlignment align = m_.For(mode);
  PedRange target = Snap(PedRange{start->sector, end->sector}, start_range, end_range);
  const PedRange snapped = target;
  const PedRange whole{0, d_.length_sectors - 1};
  const Constraint user{kAnyAlignment, kAnyAlignment, start_range, end_range, 1, d_.length_sectors};
  const Constraint device{
      align, {PedDiskAbsMod(align.offset_sectors - 1, align.grain_sectors), align.grain_sectors},
      whole, whole,
      1,     d_.length_sectors};
  std::string area_text =
      label_ == LabelType::kGpt
          ? fmt::format("the GPT data area is {}..{} (2 + {}/{})", area.start, area.end,
                        kPedGptEntryArrayBytes, d_.sector_size)
          : "an msdos label (cylinder alignment off with -a optimal|minimal) allows any start >= 1";
  std::optional<Constraint> final_constraint = Intersect(user, device);
  Result<Added> aligned = final_constraint ? Add(type, *final_constraint, &target)
                                           : Result<Added>(MakeError("no constraint"));
  if (aligned) {
    out.created = true;
    out.number = aligned->number;
    out.start_sector = aligned->geom.start;
    out.end_sector = aligned->geom.end;
    out.reasons.push_back(fmt::format(
        "{}; the start nearest {} that is {} (mod {}) in the free space is {}, the end {}",
        area_text, snapped.start, align.offset_sectors, align.grain_sectors, out.start_sector,
        out.end_sector));
    return out;
  }

  // No aligned solution: parted retries with no alignment at all (ped_constraint_any) and then
  // checks that the result is still inside what the user typed.
  const Constraint any{kAnyAlignment, kAnyAlignment, whole, whole, 1, d_.length_sectors};
  Result<Added> exact = Add(type, any, &target);
  if (!exact) {
    out.error = exact.error().message;
    out.reasons.push_back(fmt::format("{}; parted fails: {}", area_text, out.error));
    return out;
  }
  if (!start_range.Contains(exact->geom.start) || !end_range.Contains(exact->geom.end)) {
    out.error = fmt::format(
        "You requested a partition from {} to {} (sectors {}..{}). The closest location we can "
        "manage is sectors {}..{}.",
        start_text, end_text, start->sector, end->sector, exact->geom.start, exact->geom.end);
    out.reasons.push_back(
        "no aligned location in the accepted range, and the unaligned one is "
        "outside it: parted refuses in script mode");
    return out;
  }
  out.created = true;
  out.number = exact->number;
  out.start_sector = exact->geom.start;
  out.end_sector = exact->geom.end;
  out.reasons.push_back(fmt::format(
      "{}; no sector {} (mod {}) fits the accepted ranges, so parted places the partition "
      "exactly where asked ({}..{}) and checks its alignment afterwards",
      area_text, align.offset_sectors, align.grain_sectors, out.start_sector, out.end_sector));
  AlignCheckOutcome check = PredictAlignCheck(m_, mode, out.number, out.start_sector);
  if (!check.aligned) {
    if (m_.version >= kPedArithmeticSince) {
      out.warning = fmt::format(
          "The resulting partition is not properly aligned for best performance: {}s % {}s != "
          "{}s",
          out.start_sector, align.grain_sectors, align.offset_sectors);
    } else {
      out.warning = "The resulting partition is not properly aligned for best performance.";
    }
    out.reasons.push_back(fmt::format("{} % {} != {}: parted warns", out.start_sector,
                                      align.grain_sectors, align.offset_sectors));
  }
  return out;
}

}  // namespace

PartedDisk::PartedDisk(const PartedModel& model, LabelType label) : model_(model), label_(label) {}

MkpartOutcome PartedDisk::Mkpart(PartedMode mode, PartedPartType type, std::string_view start,
                                 std::string_view end) {
  MkpartOutcome out = MkpartRun(model_, label_, parts_).Run(mode, type, start, end);
  if (out.created) {
    parts_.push_back({out.number, type, out.start_sector, out.end_sector});
    std::sort(parts_.begin(), parts_.end(), [](const PartedPartition& a, const PartedPartition& b) {
      return a.start_sector < b.start_sector;
    });
  }
  return out;
}

MkpartOutcome PredictMkpart(const PartedModel& model, PartedMode mode, LabelType label,
                            std::string_view start, std::string_view end) {
  return PartedDisk(model, label).Mkpart(mode, PartedPartType::kPrimary, start, end);
}

std::optional<int64_t> PedAlignUp(const SectorAlignment& a, int64_t first, int64_t last,
                                  int64_t sector) {
  int64_t s = AlignedUp(a, {first, last}, sector);
  return s == -1 ? std::nullopt : std::optional<int64_t>(s);
}

std::optional<int64_t> PedAlignDown(const SectorAlignment& a, int64_t first, int64_t last,
                                    int64_t sector) {
  int64_t s = AlignedDown(a, {first, last}, sector);
  return s == -1 ? std::nullopt : std::optional<int64_t>(s);
}

std::optional<int64_t> PedAlignNearest(const SectorAlignment& a, int64_t first, int64_t last,
                                       int64_t sector) {
  int64_t s = AlignedNearest(a, {first, last}, sector);
  return s == -1 ? std::nullopt : std::optional<int64_t>(s);
}

bool PedIsAligned(const SectorAlignment& a, int64_t first, int64_t last, int64_t sector) {
  if (sector < first || sector > last) return false;
  return (sector - a.offset_sectors) % a.grain_sectors == 0;
}

PartedRegion PartedFreshFreeRegion(const PartedModel& m, LabelType label) {
  // The free region of the list parted shows on a fresh label: after the GPT entry array, or
  // after the msdos track (2 sectors on a 512-byte block device, 32 on an image file).
  static const std::vector<PartedPartition> kNone;
  for (const Region& r : MkpartRun(m, label, kNone).Regions()) {
    if (r.kind == RegionKind::kFree) return {r.range.start, r.range.end};
  }
  return {};
}

}  // namespace partalign
