#include "partalign/tools/parted_model.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "partalign/util/units.h"

namespace partalign {
namespace {

// PED_DEFAULT_ALIGNMENT (include/parted/parted.in.h): the 1 MiB grain of -a optimal.
constexpr int64_t kPedDefaultAlignment = 1024 * 1024;
// GPT_DEFAULT_PARTITION_ENTRY_ARRAY_SIZE (labels/gpt.c): 128 entries x 128 bytes. The data
// area starts after the protective MBR, the header and this array (gpt_alloc()).
constexpr int64_t kGptEntryArrayBytes = 16384;
// The msdos/pc98 limits of labels/pt-limit.gperf: 32-bit start and length.
constexpr int64_t kMsdosMaxStart = 0xFFFFFFFFll;
constexpr int64_t kMsdosMaxLength = 0xFFFFFFFFll;
// parted's fallback BIOS geometry (255 heads x 63 sectors) when the kernel reports none; the
// msdos metadata region at the start of the disk is one track (add_startend_metadata()).
constexpr int64_t kBiosSectorsPerTrack = 63;

const ToolVersion kIecExactSince{2, 4, 0, 2};
const ToolVersion kHalfRadiusSince{3, 1, 0, 2};
const ToolVersion kArithmeticSince{3, 3, 0, 2};
const ToolVersion kOptimumRuleSince{2, 4, 0, 2};

// ---- libparted's sector arithmetic (cs/natmath.c), restated ----------------------------------

// "a mod b, the way C should have done it": note that a negative exact multiple gives b, not 0.
int64_t PedAbsMod(int64_t a, int64_t b) { return a < 0 ? a % b + b : a % b; }
int64_t PedRoundDownTo(int64_t sector, int64_t grain) { return sector - PedAbsMod(sector, grain); }
int64_t PedRoundUpTo(int64_t sector, int64_t grain) {
  return sector % grain ? PedRoundDownTo(sector, grain) + grain : sector;
}
int64_t PedDivRoundUp(int64_t n, int64_t d) { return (n + d - 1) / d; }

struct Range {
  int64_t start = 0;
  int64_t end = -1;  // inclusive; empty when end < start
  bool empty() const { return end < start; }
  bool Contains(int64_t s) const { return s >= start && s <= end; }
};

Range Intersect(Range a, Range b) { return {std::max(a.start, b.start), std::min(a.end, b.end)}; }

// The sector of `align` nearest `sector` that is inside `range`, moving by whole grains
// (_closest_inside_geometry); -1 when there is none.
int64_t ClosestInside(const SectorAlignment& align, Range range, int64_t sector) {
  const int64_t g = align.grain_sectors;
  if (sector < range.start) sector += PedRoundUpTo(range.start - sector, g);
  if (sector > range.end) sector -= PedRoundUpTo(sector - range.end, g);
  return range.Contains(sector) ? sector : -1;
}

int64_t AlignedUp(const SectorAlignment& a, Range range, int64_t sector) {
  int64_t r = PedRoundUpTo(sector - a.offset_sectors, a.grain_sectors) + a.offset_sectors;
  return ClosestInside(a, range, r);
}

int64_t AlignedDown(const SectorAlignment& a, Range range, int64_t sector) {
  int64_t r = PedRoundDownTo(sector - a.offset_sectors, a.grain_sectors) + a.offset_sectors;
  return ClosestInside(a, range, r);
}

// ped_alignment_align_nearest: the closer of up and down; a tie goes to the down candidate.
int64_t AlignedNearest(const SectorAlignment& a, Range range, int64_t sector) {
  int64_t up = AlignedUp(a, range, sector);
  int64_t down = AlignedDown(a, range, sector);
  if (up == -1) return down;
  if (down == -1) return up;
  return std::llabs(sector - up) < std::llabs(sector - down) ? up : down;
}

// A PedConstraint after every intersection: on a fresh disk only the device constraint has an
// alignment other than "any" (offset 0, grain 1), so the intersection keeps it unchanged.
struct Constraint {
  SectorAlignment start_align;
  SectorAlignment end_align;
  Range start_range;
  Range end_range;
  int64_t min_size = 1;
  int64_t max_size = 0;
};

struct Geometry {
  int64_t start = 0;
  int64_t end = 0;
};

// ped_constraint_solve_nearest(): the start nearest the target among the starts that leave room
// for an aligned end, then the aligned end nearest the target end.
std::optional<Geometry> SolveNearest(const Constraint& c, int64_t device_length, Geometry target) {
  if (c.start_range.empty() || c.end_range.empty() || c.min_size > c.max_size) return {};
  int64_t first_end = AlignedDown(c.end_align, c.end_range, c.end_range.start);
  int64_t last_end = AlignedUp(c.end_align, c.end_range, c.end_range.end);
  if (first_end == -1 || last_end == -1 || first_end > last_end || last_end < c.min_size) {
    return {};
  }
  int64_t min_start = std::max<int64_t>(0, first_end - c.max_size + 1);
  int64_t max_start = last_end - c.min_size + 1;
  if (max_start < 0) return {};
  Range starts = Intersect({min_start, max_start}, c.start_range);
  if (starts.empty()) return {};
  int64_t start = AlignedNearest(c.start_align, starts, target.start);
  if (start == -1) return {};
  if (start + c.min_size - 1 > device_length - 1) return {};
  Range ends{start + c.min_size - 1, std::min(start + c.max_size - 1, device_length - 1)};
  ends = Intersect(ends, c.end_range);
  if (ends.empty()) return {};
  int64_t end = AlignedNearest(c.end_align, ends, target.end);
  if (end == -1) return {};
  return Geometry{start, end};
}

// ---- the fresh label ---------------------------------------------------------------------------

// Where a label lets partitions live (gpt_partition_align / msdos _align_primary_no_geom with
// cylinder alignment off, which -a optimal|minimal always sets).
Range LabelArea(const PartedDevice& d, LabelType label) {
  if (label == LabelType::kGpt) {
    int64_t table = kGptEntryArrayBytes / d.sector_size;
    return {2 + table, d.length_sectors - 2 - table};
  }
  return {1, d.length_sectors - 1};
}

// The regions parted lists on a fresh label (metadata and free space), used by mkpart's
// snap_to_boundaries() before the constraint is solved.
std::vector<Range> FreshRegions(const PartedDevice& d, LabelType label) {
  if (label == LabelType::kGpt) {
    Range area = LabelArea(d, label);
    return {{0, area.start - 1}, area, {area.end + 1, d.length_sectors - 1}};
  }
  int64_t track_end = std::min(kBiosSectorsPerTrack, d.length_sectors) - 1;
  return {{0, track_end}, {track_end + 1, d.length_sectors - 1}};
}

enum Move { kStill = 0, kUp = 1, kDown = 2 };

// prefer_snap() of parted/parted.c: move a position to the edge of the region it lies in when
// that edge is inside the accepted range and closer than the other edge. `what` is 0 for a
// start and -1 for an end (SECT_START, SECT_END).
int64_t Snap(int64_t s, int what, Range range, int allow, Range region) {
  int64_t up_dist = -1, down_dist = -1;
  if (allow & kUp) {
    int64_t n = region.end + 1 + what;
    if (range.Contains(n)) {
      up_dist = n - s;
    } else {
      allow &= ~kUp;
    }
  }
  if (allow & kDown) {
    int64_t n = region.start + what;
    if (range.Contains(n)) {
      down_dist = s - n;
    } else {
      allow &= ~kDown;
    }
  }
  Move move = kStill;
  if ((allow & kUp) && (allow & kDown)) {
    if (down_dist < up_dist || (down_dist == up_dist && what == 0)) {
      move = kDown;
    } else {
      move = kUp;
    }
  } else if (allow & kUp) {
    move = kUp;
  } else if (allow & kDown) {
    move = kDown;
  }
  if (move == kDown) return region.start + (what == 0 ? 0 : -1);
  if (move == kUp) return region.end + (what == 0 ? 1 : 0);
  return s;
}

Geometry SnapToBoundaries(const PartedDevice& d, LabelType label, Geometry g, Range start_range,
                          Range end_range) {
  std::vector<Range> regions = FreshRegions(d, label);
  auto region_of = [&](int64_t s) -> size_t {
    for (size_t i = 0; i < regions.size(); ++i) {
      if (regions[i].Contains(s)) return i;
    }
    return regions.size() - 1;
  };
  size_t sp = region_of(g.start), ep = region_of(g.end);
  int start_allow = kUp | kDown, end_allow = kUp | kDown;
  if (sp == ep) {
    start_allow &= ~kUp;
    end_allow &= ~kDown;
  }
  // Adjacent regions that would both cross are not possible on a fresh label: the start lies
  // in the leading metadata or the free area, the end in the free area or trailing metadata.
  return Geometry{Snap(g.start, 0, start_range, start_allow, regions[sp]),
                  Snap(g.end, -1, end_range, end_allow, regions[ep])};
}

// ---- units --------------------------------------------------------------------------------------

enum class Unit { kSector, kByte, kKB, kMB, kGB, kTB, kKiB, kMiB, kGiB, kTiB, kPercent };

bool IsIec(Unit u) {
  return u == Unit::kKiB || u == Unit::kMiB || u == Unit::kGiB || u == Unit::kTiB;
}

// parse_unit_suffix(): "Xi..." is IEC, otherwise the first letter decides; no suffix means the
// default unit, which is MB while parted's unit is "compact" (the default).
std::optional<Unit> ParseUnit(std::string_view suffix) {
  auto lower = [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  if (suffix.size() > 1 && lower(suffix[1]) == 'i') {
    switch (lower(suffix[0])) {
      case 'k':
        return Unit::kKiB;
      case 'm':
        return Unit::kMiB;
      case 'g':
        return Unit::kGiB;
      case 't':
        return Unit::kTiB;
    }
  } else if (!suffix.empty()) {
    switch (lower(suffix[0])) {
      case 's':
        return Unit::kSector;
      case 'b':
        return Unit::kByte;
      case 'k':
        return Unit::kKB;
      case 'm':
        return Unit::kMB;
      case 'g':
        return Unit::kGB;
      case 't':
        return Unit::kTB;
      case '%':
        return Unit::kPercent;
    }
    return std::nullopt;  // cylinders, CHS and anything else are not modelled
  }
  return Unit::kMB;
}

// ped_unit_get_size().
int64_t UnitBytes(Unit u, const PartedDevice& d) {
  switch (u) {
    case Unit::kSector:
      return d.sector_size;
    case Unit::kByte:
      return 1;
    case Unit::kKB:
      return 1000;
    case Unit::kMB:
      return 1000 * 1000;
    case Unit::kGB:
      return 1000ll * 1000 * 1000;
    case Unit::kTB:
      return 1000ll * 1000 * 1000 * 1000;
    case Unit::kKiB:
      return 1024;
    case Unit::kMiB:
      return 1024 * 1024;
    case Unit::kGiB:
      return 1024ll * 1024 * 1024;
    case Unit::kTiB:
      return 1024ll * 1024 * 1024 * 1024;
    case Unit::kPercent:
      return d.length_sectors * d.sector_size / 100;
  }
  return 1;
}

int64_t Clip(const PartedDevice& d, int64_t s) {
  return std::clamp<int64_t>(s, 0, d.length_sectors - 1);
}

std::string Plural(int64_t n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

}  // namespace

std::string_view ToString(PartedMode mode) {
  return mode == PartedMode::kOptimal ? "optimal" : "minimal";
}

std::string_view PartedLabelName(LabelType label) {
  return label == LabelType::kGpt ? "gpt" : "msdos";
}

Result<PartedModel> MakePartedModel(const Topology& t, const ToolVersion& version) {
  Result<ToolEra> era = EraOf(Tool::kParted, version);
  if (!era) return era.error();
  PartedModel m;
  m.version = version;
  m.era = *era;
  PartedDevice& d = m.device;
  d.sector_size = static_cast<int64_t>(t.logical_sector_size);
  d.length_sectors = static_cast<int64_t>(t.size_bytes / t.logical_sector_size);
  d.has_topology = t.origin != TopologyOrigin::kDefault;
  if (d.has_topology) {
    d.phys_sector_size =
        t.physical_sector_size != 0 ? static_cast<int64_t>(t.physical_sector_size) : d.sector_size;
    d.minimum_io_size = t.minimum_io_size;
    d.optimal_io_size = t.optimal_io_size;
    d.alignment_offset = t.alignment_offset;
    m.device_reasons.push_back(fmt::format(
        "libblkid reports physical sector {}, minimum I/O {}, optimal I/O {}, alignment offset "
        "{}; parted uses them unchecked (libparted/arch/linux.c)",
        t.physical_sector_size, t.minimum_io_size, t.optimal_io_size, t.alignment_offset));
  } else {
    d.phys_sector_size = d.sector_size;
    m.device_reasons.push_back(fmt::format(
        "no topology: parted never probes image files (init_file) and falls back to its "
        "defaults when libblkid reports none; physical sector = logical = {}",
        d.sector_size));
  }
  const int64_t lbs = d.sector_size;
  const int64_t off = static_cast<int64_t>(d.alignment_offset) / lbs;
  const uint64_t min_io = d.minimum_io_size, opt_io = d.optimal_io_size;

  // Minimum alignment: linux_get_minimum_alignment(), or device.c's default without topology.
  if (!d.has_topology) {
    m.minimum = {0, d.phys_sector_size / lbs};
    m.minimum_reasons.push_back(
        fmt::format("minimum alignment = parted's default: physical sector / logical = {}/{} = {}",
                    d.phys_sector_size, lbs, Plural(m.minimum.grain_sectors, "sector")));
  } else if (min_io == 0) {
    m.minimum = {off, d.phys_sector_size / lbs};
    m.minimum_reasons.push_back(
        fmt::format("minimum I/O is 0, so the minimum grain is the physical sector {}/{} = {}",
                    d.phys_sector_size, lbs, Plural(m.minimum.grain_sectors, "sector")));
  } else {
    m.minimum = {off, static_cast<int64_t>(min_io) / lbs};
    m.minimum_reasons.push_back(fmt::format("minimum grain = minimum I/O {} / {} = {}", min_io, lbs,
                                            Plural(m.minimum.grain_sectors, "sector")));
  }

  // Optimum alignment: linux_get_optimum_alignment() of the era, or device.c's 1 MiB.
  const uint64_t mib = kPedDefaultAlignment;
  bool use_minimum = false;
  bool use_default = false;
  if (!d.has_topology) {
    use_default = true;
    m.optimum_reasons.push_back(
        "optimum alignment = parted's default 1 MiB (ped_device_get_optimum_alignment, "
        "libparted/device.c)");
  } else if (version >= kOptimumRuleSince) {
    bool divides = (opt_io == 0 && min_io == 0) ||
                   (opt_io != 0 && mib % opt_io == 0 && min_io != 0 && mib % min_io == 0) ||
                   (min_io == 0 && opt_io != 0 && mib % opt_io == 0) ||
                   (opt_io == 0 && min_io != 0 && mib % min_io == 0);
    if (divides) {
      use_default = true;
      m.optimum_reasons.push_back(fmt::format(
          "1 MiB is a multiple of every reported I/O size (minimum {}, optimal {}), so parted "
          "uses its 1 MiB default (\"default to 1MiB alignment when possible\", parted >= 2.4)",
          min_io, opt_io));
    } else if (opt_io == 0) {
      use_minimum = true;
      m.optimum_reasons.push_back(fmt::format(
          "1 MiB is not a multiple of minimum I/O {} and there is no optimal I/O, so the "
          "optimum is the minimum alignment",
          min_io));
    } else {
      m.optimum_reasons.push_back(fmt::format(
          "1 MiB is not a multiple of the I/O sizes (minimum {}, optimal {}), so parted aligns "
          "to the optimal I/O size as reported, without any sanity check",
          min_io, opt_io));
    }
  } else {
    if (opt_io == 0 && d.alignment_offset == 0 && (min_io & (min_io - 1)) == 0) {
      use_default = true;
      m.optimum_reasons.push_back(fmt::format(
          "optimal I/O is 0, alignment offset 0 and minimum I/O {} a power of two, so parted "
          "{} uses its 1 MiB default (the 2.2/2.3 rule)",
          min_io, version.ToString()));
    } else if (opt_io == 0) {
      use_minimum = true;
      m.optimum_reasons.push_back(
          "optimal I/O is 0 but the alignment offset is set or minimum I/O is not a power of "
          "two, so the optimum is the minimum alignment (the 2.2/2.3 rule)");
    } else {
      m.optimum_reasons.push_back(fmt::format(
          "optimal I/O {} is reported, so parted {} aligns to it (the 2.2/2.3 rule: 1 MiB only "
          "when optimal I/O is 0)",
          opt_io, version.ToString()));
    }
  }
  if (use_default) {
    m.optimum = {d.has_topology ? off : 0, static_cast<int64_t>(mib) / lbs};
    m.optimum_reasons.push_back(fmt::format("optimum grain = 1048576 / {} = {}", lbs,
                                            Plural(m.optimum.grain_sectors, "sector")));
  } else if (use_minimum) {
    m.optimum = m.minimum;
    m.optimum_reasons.push_back(
        fmt::format("optimum grain = {}", Plural(m.optimum.grain_sectors, "sector")));
  } else {
    m.optimum = {off, static_cast<int64_t>(opt_io) / lbs};
    m.optimum_reasons.push_back(fmt::format("optimum grain = optimal I/O {} / {} = {}", opt_io, lbs,
                                            Plural(m.optimum.grain_sectors, "sector")));
  }
  for (SectorAlignment* a : {&m.minimum, &m.optimum}) {
    if (a->grain_sectors <= 0) {
      return MakeError(fmt::format(
          "parted would compute a zero grain (an I/O size below the {}-byte sector)", lbs));
    }
    a->offset_sectors = PedAbsMod(a->offset_sectors, a->grain_sectors);
  }
  if (off != 0) {
    std::string note = fmt::format(
        "offset = alignment offset {} / {} = {} (taken modulo the grain), for -a optimal and "
        "-a minimal alike",
        d.alignment_offset, lbs, off);
    m.minimum_reasons.push_back(note);
    m.optimum_reasons.push_back(note);
  }
  return m;
}

Result<PartedPosition> ParsePartedPosition(const PartedModel& m, std::string_view text) {
  const PartedDevice& d = m.device;
  size_t split = 0;
  while (split < text.size() && (std::isdigit(static_cast<unsigned char>(text[split])) ||
                                 text[split] == '.' || text[split] == '-' || text[split] == '+')) {
    ++split;
  }
  std::string number(text.substr(0, split));
  std::string_view suffix = text.substr(split);
  char* parse_end = nullptr;
  double num = std::strtod(number.c_str(), &parse_end);
  if (number.empty() || parse_end == number.c_str()) {
    return MakeError(fmt::format("'{}' is not a parted position", text));
  }
  std::optional<Unit> unit = ParseUnit(suffix);
  if (!unit) return MakeError(fmt::format("unit of '{}' is not modelled", text));
  int64_t unit_size = UnitBytes(*unit, d);
  int64_t radius;
  if (IsIec(*unit) && m.version >= kIecExactSince) {
    radius = 0;
  } else if (m.version >= kHalfRadiusSince) {
    radius = PedDivRoundUp(unit_size, d.sector_size) / 2 - 1;
  } else {
    radius = PedDivRoundUp(unit_size, d.sector_size) - 1;
  }
  radius = std::max<int64_t>(radius, 0);
  PartedPosition p;
  p.iec = IsIec(*unit);
  p.sector = static_cast<int64_t>(num * static_cast<double>(unit_size) /
                                  static_cast<double>(d.sector_size));
  if (!number.empty() && number[0] == '-') p.sector += d.length_sectors;
  p.range_start = Clip(d, p.sector - radius);
  p.range_end = Clip(d, p.sector + radius);
  if (p.sector - p.range_end > radius || p.range_start - p.sector > radius) {
    return MakeError(fmt::format("the location {} is outside of the device", text));
  }
  p.sector = Clip(d, p.sector);
  return p;
}

MkpartOutcome PredictMkpart(const PartedModel& m, PartedMode mode, LabelType label,
                            std::string_view start_text, std::string_view end_text) {
  MkpartOutcome out;
  const PartedDevice& d = m.device;
  Range area = LabelArea(d, label);
  if (area.empty()) {
    out.error = "device is too small for GPT";
    return out;
  }
  Result<PartedPosition> start = ParsePartedPosition(m, start_text);
  Result<PartedPosition> end = ParsePartedPosition(m, end_text);
  if (!start || !end) {
    out.error = (!start ? start.error() : end.error()).message;
    return out;
  }
  // _adjust_end_if_iec() (parted >= 3.1): an end typed in IEC units means "up to", one sector
  // lower.
  if (end->iec && m.version >= kHalfRadiusSince && start->sector != end->sector) {
    end->sector -= 1;
    end->range_start -= 1;
    end->range_end -= 1;
  }
  Range start_range{start->range_start, start->range_end};
  Range end_range{end->range_start, end->range_end};
  out.reasons.push_back(
      fmt::format("'{}' is sector {}, accepted anywhere in {}..{}{}", start_text, start->sector,
                  start_range.start, start_range.end,
                  start->iec && start_range.start == start_range.end
                      ? " (IEC units are exact)"
                      : fmt::format(" ({} a unit either side, ped_unit_parse_custom)",
                                    m.version >= kHalfRadiusSince ? "half" : "a whole")));

  const SectorAlignment align = m.For(mode);
  Geometry target =
      SnapToBoundaries(d, label, Geometry{start->sector, end->sector}, start_range, end_range);
  const Range whole{0, d.length_sectors - 1};
  Constraint c;
  c.start_align = align;
  c.end_align = {PedAbsMod(align.offset_sectors - 1, align.grain_sectors), align.grain_sectors};
  c.start_range = Intersect(Intersect(start_range, whole), area);
  c.end_range = Intersect(Intersect(end_range, whole), area);
  c.max_size = std::min(d.length_sectors, area.end - area.start + 1);

  auto label_check = [&](Geometry g) -> std::string {
    if (label == LabelType::kDos) {
      int64_t length = g.end - g.start + 1;
      if (length > kMsdosMaxLength) {
        return fmt::format(
            "partition length of {} sectors exceeds the msdos-partition-table-imposed maximum "
            "of {}",
            length, kMsdosMaxLength);
      }
      if (g.start > kMsdosMaxStart) {
        return fmt::format(
            "starting sector number, {} exceeds the msdos-partition-table-imposed maximum of {}",
            g.start, kMsdosMaxStart);
      }
    }
    return {};
  };

  std::string area_text =
      label == LabelType::kGpt
          ? fmt::format("the GPT data area starts at {} (2 + {}/{})", area.start,
                        kGptEntryArrayBytes, d.sector_size)
          : "an msdos label (cylinder alignment off with -a optimal|minimal) allows any start >= 1";
  std::optional<Geometry> solved = SolveNearest(c, d.length_sectors, target);
  std::string check_error = solved ? label_check(*solved) : std::string();
  if (solved && check_error.empty()) {
    out.created = true;
    out.start_sector = solved->start;
    out.end_sector = solved->end;
    out.reasons.push_back(
        fmt::format("{}; the start nearest {} that is {} (mod {}) in that range is {}", area_text,
                    target.start, align.offset_sectors, align.grain_sectors, solved->start));
    return out;
  }

  // No aligned solution: parted retries with no alignment at all (ped_constraint_any) and then
  // checks that the result is still inside what the user typed.
  Geometry fallback_target = solved ? *solved : target;
  Constraint any = c;
  any.start_align = {0, 1};
  any.end_align = {0, 1};
  any.start_range = Intersect(whole, area);
  any.end_range = Intersect(whole, area);
  std::optional<Geometry> exact = SolveNearest(any, d.length_sectors, fallback_target);
  if (!exact) {
    out.error = "unable to satisfy all constraints on the partition";
    return out;
  }
  if (std::string e = label_check(*exact); !e.empty()) {
    out.error = e;
    out.reasons.push_back(fmt::format("{}: parted refuses", e));
    return out;
  }
  if (!start_range.Contains(exact->start) || !end_range.Contains(exact->end)) {
    out.error = fmt::format(
        "You requested a partition from {} to {} (sectors {}..{}). The closest location we can "
        "manage is sectors {}..{}.",
        start_text, end_text, start->sector, end->sector, exact->start, exact->end);
    out.reasons.push_back(
        "no aligned location in the accepted range, and the unaligned one is "
        "outside it: parted refuses in script mode");
    return out;
  }
  out.created = true;
  out.start_sector = exact->start;
  out.end_sector = exact->end;
  out.reasons.push_back(fmt::format(
      "{}; no sector {} (mod {}) fits the accepted ranges, so parted places the partition "
      "exactly where asked ({}) and checks its alignment afterwards",
      area_text, align.offset_sectors, align.grain_sectors, exact->start));
  AlignCheckOutcome check = PredictAlignCheck(m, mode, 1, exact->start);
  if (!check.aligned) {
    if (m.version >= kArithmeticSince) {
      out.warning = fmt::format(
          "The resulting partition is not properly aligned for best performance: {}s % {}s != "
          "{}s",
          exact->start, align.grain_sectors, align.offset_sectors);
    } else {
      out.warning = "The resulting partition is not properly aligned for best performance.";
    }
    out.reasons.push_back(fmt::format("{} % {} != {}: parted warns", exact->start,
                                      align.grain_sectors, align.offset_sectors));
  }
  return out;
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
  std::vector<Range> regions = FreshRegions(m.device, label);
  const Range& free = regions[1];
  return {free.start, free.end};
}

AlignCheckOutcome PredictAlignCheck(const PartedModel& m, PartedMode mode, int partition,
                                    int64_t start_sector) {
  const SectorAlignment& a = m.For(mode);
  AlignCheckOutcome out;
  out.aligned = start_sector % a.grain_sectors == a.offset_sectors;
  out.script_exit_status = out.aligned ? 0 : 1;
  if (out.aligned) {
    out.output = fmt::format("{} aligned", partition);
  } else if (m.version >= kArithmeticSince) {
    out.output = fmt::format("{} not aligned: {}s % {}s != {}s", partition, start_sector,
                             a.grain_sectors, a.offset_sectors);
  } else {
    out.output = fmt::format("{} not aligned", partition);
  }
  return out;
}

}  // namespace partalign
