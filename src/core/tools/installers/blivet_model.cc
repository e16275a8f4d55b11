#include "partalign/tools/installers/blivet_model.h"

#include <fmt/format.h>

#include "partalign/tools/installers/installer_version.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

const ToolVersion kSmallPartitionsMinimalSince{1, 16, 0, 2};
const ToolVersion kBelowMinimalRoundedSince{3, 2, 0, 2};

// The BIOS boot partition of Anaconda's GPT layouts (1 MiB).
constexpr uint64_t kBiosBootBytes = kMiB;

}  // namespace

BlivetAlignments BlivetAlignmentsOf(const PartedModel& parted) {
  return {parted.optimum, parted.minimum, parted.device.sector_size};
}

Result<SectorAlignment> BlivetGetAlignment(const BlivetAlignments& a, const ToolVersion& version,
                                           std::optional<uint64_t> size) {
  if (!size || version < kSmallPartitionsMinimalSince) return a.optimal;
  const auto ss = static_cast<uint64_t>(a.sector_size);
  if (*size < static_cast<uint64_t>(a.minimal.grain_sectors) * ss) {
    return MakeError("requested size cannot be aligned");
  }
  if (*size < static_cast<uint64_t>(a.optimal.grain_sectors) * ss) return a.minimal;
  return a.optimal;
}

SectorAlignment BlivetEndAlignment(const SectorAlignment& start) {
  // ped_alignment_init() keeps offsets modulo the grain.
  int64_t g = start.grain_sectors;
  return {((start.offset_sectors - 1) % g + g) % g, g};
}

namespace {

// The alignment add_partition() and allocate_partitions() use: get_alignment(size), falling
// back to the minimal one below the minimal grain from 3.2.
Result<SectorAlignment> AlignmentForSize(const BlivetAlignments& a, const ToolVersion& version,
                                         std::optional<uint64_t> size) {
  Result<SectorAlignment> r = BlivetGetAlignment(a, version, size);
  if (!r && version >= kBelowMinimalRoundedSince) return a.minimal;
  return r;
}

}  // namespace

uint64_t BlivetAlignSize(const BlivetAlignments& a, const ToolVersion& version, uint64_t size) {
  Result<SectorAlignment> r = AlignmentForSize(a, version, size);
  const auto grain = static_cast<uint64_t>(r ? r->grain_sectors : a.optimal.grain_sectors);
  uint64_t grains = size / grain, rest = size % grain;
  return grains * grain + (rest != 0 ? grain : 0);
}

int64_t BlivetAlignFreeRegionLength(int64_t length, int64_t grain, bool align) {
  return align ? length - length % grain : length;
}

Result<BlivetGeometry> BlivetAddPartition(const BlivetAlignments& a, const ToolVersion& version,
                                          int64_t free_first, int64_t free_last,
                                          std::optional<uint64_t> size,
                                          std::optional<int64_t> start, std::optional<int64_t> end,
                                          bool logical) {
  const int64_t ss = a.sector_size;
  if (start) {
    if (!end) {
      if (!size) return MakeError("an explicit start needs a size or an end");
      end = *start + static_cast<int64_t>(*size / static_cast<uint64_t>(ss)) - 1;
    }
    return BlivetGeometry{*start, *end};
  }
  uint64_t request =
      size ? *size : static_cast<uint64_t>(free_last - free_first + 1) * static_cast<uint64_t>(ss);
  Result<SectorAlignment> align = AlignmentForSize(a, version, request);
  if (!align) return align.error();
  const SectorAlignment end_align = BlivetEndAlignment(*align);
  int64_t s = free_first;
  if (!PedIsAligned(*align, free_first, free_last, s)) {
    std::optional<int64_t> nearest = PedAlignNearest(*align, free_first, free_last, s);
    if (!nearest) return MakeError("no aligned sector in the free region");
    s = *nearest;
  }
  if (logical) s += align->grain_sectors;
  int64_t e = 0;
  if (!size) {
    e = free_last;
  } else {
    e = s + static_cast<int64_t>(*size / static_cast<uint64_t>(ss)) - 1;
    if (!PedIsAligned(end_align, free_first, free_last, e)) {
      std::optional<int64_t> up = PedAlignUp(end_align, free_first, free_last, e);
      if (!up) return MakeError("unable to allocate aligned partition");
      e = *up;
      if (s > e) return MakeError("unable to allocate aligned partition");
    }
  }
  return BlivetGeometry{s, e};
}

Result<BlivetPrediction> PredictBlivet(const Topology& t, const ToolVersion& version,
                                       const ToolVersion& parted_version, LabelType label,
                                       uint64_t first_size) {
  Result<ToolEra> era = InstallerEraOf(Installer::kBlivet, version);
  if (!era) return era.error();
  Result<PartedModel> parted = MakePartedModel(t, parted_version);
  if (!parted) return parted.error();
  BlivetPrediction p;
  p.version = version;
  p.era = *era;
  const BlivetAlignments a = BlivetAlignmentsOf(*parted);
  p.optimal = a.optimal;
  p.minimal = a.minimal;
  p.reasons.push_back(fmt::format(
      "blivet asks libparted {} (pyparted Device.optimumAlignment/minimumAlignment) and "
      "intersects with the label's alignment, which libparted leaves at any sector for GPT and "
      "msdos: optimal grain {} offset {}, minimal grain {} offset {}",
      parted_version.ToString(), a.optimal.grain_sectors, a.optimal.offset_sectors,
      a.minimal.grain_sectors, a.minimal.offset_sectors));
  for (const std::string& r : parted->optimum_reasons) p.reasons.push_back("libparted: " + r);
  p.key_reason = fmt::format(
      "blivet takes libparted's optimal alignment ({} sectors{}), so it inherits parted's rule",
      a.optimal.grain_sectors,
      a.optimal.offset_sectors != 0 ? fmt::format(", offset {}", a.optimal.offset_sectors) : "");
  const PartedRegion free = PartedFreshFreeRegion(*parted, label);
  const std::string where = fmt::format("the fresh {} label's free region starts at {}",
                                        PartedLabelName(label), free.first);
  const uint64_t size = BlivetAlignSize(a, version, first_size);
  Result<BlivetGeometry> first = BlivetAddPartition(a, version, free.first, free.last, size);
  if (!first) {
    p.error = first.error().message;
    p.reasons.push_back(
        fmt::format("{}; a {} partition fails: {}", where, FormatSize(first_size), p.error));
    return p;
  }
  p.first_start = static_cast<uint64_t>(first->start);
  p.reasons.push_back(fmt::format(
      "{}; a {} partition (size rounded up to {} bytes: blivet rounds to the grain taken as "
      "bytes) starts at the nearest aligned sector {} and ends at {} (end aligned up)",
      where, FormatSize(first_size), size, first->start, first->end));
  if (first->end < free.last) {
    Result<BlivetGeometry> second = BlivetAddPartition(a, version, first->end + 1, free.last, size);
    if (second) p.second_start = static_cast<uint64_t>(second->start);
  }
  Result<BlivetGeometry> small = BlivetAddPartition(a, version, free.first, free.last,
                                                    BlivetAlignSize(a, version, kBiosBootBytes));
  if (small) {
    p.small_first_start = static_cast<uint64_t>(small->start);
    if (*p.small_first_start != *p.first_start) {
      p.reasons.push_back(fmt::format(
          "a 1 MiB partition (the BIOS boot partition) is smaller than the optimal grain and "
          "gets the minimal alignment ({} sectors): it starts at {}",
          a.minimal.grain_sectors, *p.small_first_start));
    }
  } else {
    p.reasons.push_back("a 1 MiB partition (the BIOS boot partition) fails: " +
                        small.error().message);
  }
  return p;
}

}  // namespace partalign
