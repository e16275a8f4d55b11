// SPDX-License-Identifier: GPL-3.0-or-later
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

const ToolVersion kIecExactSince{2, 4, 0, 2};
const ToolVersion kHalfRadiusSince{3, 1, 0, 2};
const ToolVersion kArithmeticSince{3, 3, 0, 2};
const ToolVersion kOptimumRuleSince{2, 4, 0, 2};

// ---- libparted's sector arithmetic (cs/natmath.c), restated ----------------------------------

// "a mod b, the way C should have done it": note that a negative exact multiple gives b, not 0.
int64_t PedAbsMod(int64_t a, int64_t b) { return a < 0 ? a % b + b : a % b; }
int64_t PedDivRoundUp(int64_t n, int64_t d) { return (n + d - 1) / d; }

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
    d.bios_sectors = 1 + d.sector_size / 512;
    d.bios_heads = 255;
  } else {
    d.bios_sectors = 32;
    d.bios_heads = 4;
  }
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
  // is_chs(): any position with exactly two punctuation characters is read as
  // cylinder,head,sector, even "12.5%" - not modelled.
  if (std::count_if(text.begin(), text.end(),
                    [](char c) { return std::ispunct(static_cast<unsigned char>(c)) != 0; }) == 2) {
    return MakeError(fmt::format("parted reads '{}' as cylinder,head,sector (not modelled)", text));
  }
  std::string number(text.substr(0, split));
  std::string_view suffix = text.substr(split);
  char* parse_end = nullptr;
  double num = std::strtod(number.c_str(), &parse_end);
  if (number.empty() || parse_end == number.c_str()) {
    return MakeError(fmt::format("'{}' is not a parted position", text));
  }
  // bca7bb9 (parted 3.1): "Use a smaller unit instead of a value < 1".
  if (m.version >= kHalfRadiusSince && num > 0 && num < 1) {
    return MakeError(fmt::format("'{}': use a smaller unit instead of a value < 1", text));
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
