// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/sgdisk_layout.h"

#include <algorithm>

#include <fmt/format.h>

#include "partalign/tools/gpt_free_space.h"

namespace partalign {
namespace {

// IeeeToInt()'s suffixes, each 1024 times the one before.
constexpr const char* kSgdiskSuffixes = "KMGTP";
constexpr int kMaxUnitPower = 5;
// NUM_GPT_ENTRIES: the partition numbers sgdisk offers.
constexpr int kSgdiskGptEntries = 128;

// The table of a GPT being filled by `-n` options.
class Gpt {
 public:
  Gpt(uint64_t first_usable, uint64_t last_usable, uint64_t alignment)
      : space_(first_usable, last_usable), align_(alignment) {}

  const GptFreeSpace& space() const { return space_; }
  // Align(): down to the multiple below when every sector in between is free and it is not
  // before FirstUsableLBA, else up to the multiple above when every sector up to it is free.
  uint64_t Align(uint64_t sector) const {
    if (sector % align_ == 0) return sector;
    uint64_t earlier = sector / align_ * align_;
    uint64_t later = earlier + align_;
    if (earlier >= space_.first_usable()) {
      bool ok = true;
      for (uint64_t s = earlier; ok && s < sector; ++s) ok = space_.IsFree(s);
      if (ok) return earlier;
    }
    if (later <= space_.last_usable()) {
      bool ok = true;
      for (uint64_t s = later; ok && s > sector; --s) ok = space_.IsFree(s);
      if (ok) return later;
    }
    return sector;
  }
  int FirstFreeNumber() const {
    for (int n = 1; n <= kSgdiskGptEntries; ++n) {
      if (std::none_of(numbers_.begin(), numbers_.end(), [&](int u) { return u == n; })) return n;
    }
    return 0;
  }
  void Add(const SgdiskPartition& p) {
    space_.Use(p.start_sector, p.end_sector);
    numbers_.push_back(p.number);
  }

 private:
  GptFreeSpace space_;
  uint64_t align_;
  std::vector<int> numbers_;
};

// IeeeToInt() for an END field, with `low` the start and `high` = `def` the end of its free area.
uint64_t EndSector(const SgdiskNew& n, uint64_t lbs, uint64_t low, uint64_t high) {
  if (!n.size || *n.size == 0) return high;  // "0" or "+0": the default
  uint64_t response = *n.size;
  if (n.unit_power > 0) {
    uint64_t unit = uint64_t{1} << (10 * n.unit_power);
    uint64_t mult = unit / lbs;
    uint64_t divide = lbs / unit;
    if (mult > 1) {
      response *= mult;
    } else if (divide > 1) {
      response /= divide;
    }
  }
  // '+': the default is the high end, within an alignment of it, so the size counts from `low`.
  if (response > 0) --response;
  return low + response;
}

}  // namespace

std::string SgdiskEndText(const SgdiskNew& n) {
  if (!n.size) return "0";
  if (n.unit_power == 0) return fmt::format("+{}", *n.size);
  return fmt::format("+{}{}", *n.size, kSgdiskSuffixes[n.unit_power - 1]);
}

SgdiskNew SgdiskSizeOf(uint64_t size_bytes, uint64_t lbs) {
  for (int power = kMaxUnitPower; power >= 1; --power) {
    uint64_t unit = uint64_t{1} << (10 * power);
    // A unit smaller than the sector would be divided down (IeeeToInt), so it is only used when
    // it is at least a sector.
    if (unit >= lbs && size_bytes % unit == 0) return {size_bytes / unit, power};
  }
  return {(size_bytes + lbs - 1) / lbs, 0};
}

SgdiskLayout PredictSgdiskLayout(const Topology& t, const ToolVersion& version,
                                 const std::vector<SgdiskNew>& news) {
  SgdiskLayout out;
  Result<GdiskPrediction> g = PredictGdisk(t, version);
  if (!g) {
    out.error = g.error().message;
    return out;
  }
  const uint64_t lbs = t.logical_sector_size;
  Gpt gpt(g->first_usable_lba, g->last_usable_lba, g->alignment_sectors);
  std::vector<SgdiskPartition> made;
  for (size_t i = 0; i < news.size(); ++i) {
    const int number = gpt.FirstFreeNumber();
    uint64_t low = gpt.Align(gpt.space().FirstInLargest());
    uint64_t high = gpt.space().LastFree(low);
    uint64_t start = low;  // the start field "0": the default
    uint64_t end = EndSector(news[i], lbs, start, high);
    // CreatePartition(): the start aligned again, free, and free up to the end.
    start = gpt.Align(start);
    if (number == 0 || !gpt.space().IsFree(start) || start > end ||
        gpt.space().LastFree(start) < end) {
      out.error = fmt::format("Could not create partition {} from {} to {}", number, start, end);
      out.reasons.push_back(fmt::format(
          "-n 0:0:{}: the largest free area starts at {} and ends at {}, too small: sgdisk "
          "saves nothing",
          SgdiskEndText(news[i]), low, high));
      return out;
    }
    out.reasons.push_back(fmt::format(
        "-n 0:0:{}: partition {} at the first sector of the largest free area moved to a "
        "multiple of {} ({}), ending at {}",
        SgdiskEndText(news[i]), number, g->alignment_sectors, start, end));
    gpt.Add({number, start, end});
    made.push_back({number, start, end});
  }
  out.partitions = made;
  // `sgdisk -v` loads the table and infers its alignment from the starts (ComputeAlignment).
  std::vector<uint64_t> starts;
  for (const SgdiskPartition& p : made) starts.push_back(p.start_sector);
  const uint64_t inferred = GdiskComputeAlignment(version, lbs, t.size_bytes / lbs, starts);
  for (const SgdiskPartition& p : made) {
    if (auto w = GdiskVerifyBeginWarning(t, inferred, p.number, p.start_sector)) {
      out.warnings.push_back(*w);
    }
    if (auto w = GdiskVerifyEndWarning(t, inferred, p.number, p.end_sector)) {
      out.warnings.push_back(*w);
    }
  }
  return out;
}

}  // namespace partalign
