// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/installers/blivet_model.h"

#include <algorithm>

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

namespace {

// A DOS table holds three primaries before blivet makes the next partition an extended one.
constexpr size_t kBlivetDosPrimaries = 3;
// parted's msdos label: 32-bit start and length (maxPartitionStartSector, maxPartitionLength).
constexpr int64_t kBlivetDosMaxSector = 0xFFFFFFFFll;

struct BlivetRequest {
  uint32_t asked = 0;  // its place in the layout, 1-based
  uint64_t size = 0;   // req_size: the requested size, or the growing base
  bool grow = false;
};

struct BlivetAllocated {
  BlivetRequest request;
  int64_t start = 0;
  int64_t end = 0;
  uint32_t number = 0;
};

// parted's free regions inside the fresh label's one region: the runs no partition holds.
std::vector<PartedRegion> FreeRegions(const PartedRegion& area,
                                      std::vector<BlivetAllocated> parts) {
  std::sort(parts.begin(), parts.end(),
            [](const BlivetAllocated& a, const BlivetAllocated& b) { return a.start < b.start; });
  std::vector<PartedRegion> out;
  int64_t from = area.first;
  for (const BlivetAllocated& q : parts) {
    if (q.start > from) out.push_back({from, q.start - 1});
    from = std::max(from, q.end + 1);
  }
  if (from <= area.last) out.push_back({from, area.last});
  return out;
}

}  // namespace

LayoutPrediction BlivetLayoutPrediction(const Topology& t, const ToolVersion& version,
                                        const ToolVersion& parted_version, const LayoutRequest& r) {
  LayoutPrediction p = NewInstallerLayoutPrediction(Installer::kBlivet, version);
  if (!p.error.empty()) return p;
  Result<PartedModel> parted = MakePartedModel(t, parted_version);
  if (!parted) {
    p.error = parted.error().message;
    return p;
  }
  const BlivetAlignments a = BlivetAlignmentsOf(*parted);
  const auto ss = static_cast<uint64_t>(a.sector_size);
  const bool dos = r.label == LabelType::kDos;
  const size_t count = r.sizes_bytes.size();
  if (dos && count > kBlivetDosPrimaries) {
    for (size_t i = 0; i < count; ++i) {
      p.omitted.push_back(
          {static_cast<uint32_t>(i + 1), false,
           "with four or more partitions on msdos blivet makes the fourth one it allocates an "
           "extended partition (get_next_partition_type); where the requests then go is not "
           "modelled"});
    }
    return p;
  }
  const PartedRegion area = PartedFreshFreeRegion(*parted, r.label);
  p.reasons.push_back(fmt::format(
      "libparted {}: optimal alignment grain {} offset {}, minimal grain {} offset {}; the fresh "
      "{} label's free region is {}-{}",
      parted_version.ToString(), a.optimal.grain_sectors, a.optimal.offset_sectors,
      a.minimal.grain_sectors, a.minimal.offset_sectors, PartedLabelName(r.label), area.first,
      area.last));
  std::vector<BlivetRequest> requests;
  for (size_t i = 0; i < count; ++i) {
    const std::optional<uint64_t>& size = r.sizes_bytes[i];
    requests.push_back({static_cast<uint32_t>(i + 1), size ? *size : kBlivetGrowBaseBytes, !size});
  }
  // partition_compare(): fixed sizes before growing ones, larger base sizes first; Python's
  // sort keeps the order of equals.
  std::stable_sort(requests.begin(), requests.end(),
                   [](const BlivetRequest& x, const BlivetRequest& y) {
                     if (x.grow != y.grow) return !x.grow;
                     return x.size > y.size;
                   });
  std::vector<BlivetAllocated> parts;
  for (const BlivetRequest& q : requests) {
    const uint64_t size = BlivetAlignSize(a, version, q.size);
    // get_best_free_space_region(): the smallest region that holds it, the largest for a
    // growing request; the first of equals.
    std::optional<PartedRegion> best;
    for (const PartedRegion& f : FreeRegions(area, parts)) {
      const uint64_t bytes = static_cast<uint64_t>(f.last - f.first + 1) * ss;
      if (bytes < size || (dos && f.first > kBlivetDosMaxSector)) continue;
      const int64_t length = f.last - f.first, best_length = best ? best->last - best->first : 0;
      if (!best || (q.grow ? length > best_length : length < best_length)) best = f;
    }
    if (!best) {
      p.error = fmt::format(
          "partition {}: no free region holds {} (get_best_free_space_region): \"Unable to "
          "allocate requested partition scheme.\"",
          q.asked, FormatSize(size));
      break;
    }
    Result<BlivetGeometry> g = BlivetAddPartition(a, version, best->first, best->last, size);
    if (!g) {
      p.error = fmt::format("partition {}: add_partition: {}", q.asked, g.error().message);
      break;
    }
    if (dos && g->length() > kBlivetDosMaxSector) {
      p.error = fmt::format("partition {}: requested size exceeds maximum allowed", q.asked);
      break;
    }
    parts.push_back({q, g->start, g->end, static_cast<uint32_t>(parts.size() + 1)});
    p.reasons.push_back(fmt::format(
        "partition {} ({}{}): size {} bytes as allocated (align_size_for_disklabel), in the "
        "free region {}-{}: {}-{}",
        q.asked, q.grow ? "grows, base " : "", FormatSize(q.size), size, best->first, best->last,
        g->start, g->end));
  }
  const bool grows = std::any_of(parts.begin(), parts.end(),
                                 [](const BlivetAllocated& q) { return q.request.grow; });
  if (p.error.empty() && grows) {
    // grow_partitions(): the chunk is the free region as it was before allocation, aligned;
    // do_partitioning() lists only free regions of at least the optimal grain
    // (get_free_regions()), so on a disk smaller than that nothing grows.
    const uint64_t area_bytes = static_cast<uint64_t>(area.last - area.first + 1) * ss;
    const bool listed = area.last - area.first + 1 >= a.optimal.grain_sectors;
    Result<SectorAlignment> align = BlivetGetAlignment(a, version, area_bytes);
    std::optional<int64_t> first, last;
    if (listed && align) {
      first = PedAlignUp(*align, area.first, area.last, area.first);
      last = PedAlignDown(BlivetEndAlignment(*align), area.first, area.last, area.last);
    }
    if (!first || !last || *first >= *last || *last - *first + 1 < align->grain_sectors) {
      p.reasons.push_back(
          listed ? "the free region holds no aligned chunk: nothing grows"
                 : "the free region is smaller than the optimal grain, so do_partitioning() does "
                   "not list it (get_free_regions()): nothing grows");
    } else {
      const int64_t chunk_last = dos ? std::min(*last, kBlivetDosMaxSector) : *last;
      int64_t pool = chunk_last - *first + 1;
      for (const BlivetAllocated& q : parts) pool -= q.end - q.start + 1;
      std::sort(parts.begin(), parts.end(), [](const BlivetAllocated& x, const BlivetAllocated& y) {
        return x.start < y.start;
      });
      int64_t start = *first;
      if (!PedIsAligned(a.optimal, *first, *last, start)) {
        start = PedAlignUp(a.optimal, *first, *last, start).value_or(start);
      }
      uint32_t number = 0;
      for (BlivetAllocated& q : parts) {
        int64_t length = q.end - q.start + 1;
        if (q.request.grow) length += pool;
        Result<SectorAlignment> al = BlivetGetAlignment(a, version, length * ss);
        if (!al) {
          p.error = fmt::format("partition {}: growing: {}", q.request.asked, al.error().message);
          break;
        }
        const SectorAlignment end_align = BlivetEndAlignment(*al);
        int64_t end = start + length - 1;
        if (!PedIsAligned(end_align, *first, *last, end)) {
          end = PedAlignDown(end_align, *first, *last, end).value_or(end);
        }
        if (end < start) {
          p.error = fmt::format("partition {}: growing leaves it no sector", q.request.asked);
          break;
        }
        q.start = start;
        q.end = end;
        q.number = ++number;
        start = end + 1;
      }
      p.reasons.push_back(fmt::format(
          "grow_partitions(): the chunk {}-{} laid out again from {}, each end aligned down; "
          "the growing partition takes the {} sectors left",
          *first, *last, *first, pool));
    }
  }
  // do_partitioning() raises PartitioningError: Anaconda makes none of the requests.
  if (!p.error.empty()) parts.clear();
  for (const BlivetAllocated& q : parts) {
    p.partitions.push_back({q.number, PlacedKind::kPrimary, static_cast<uint64_t>(q.start),
                            static_cast<uint64_t>(q.end)});
  }
  std::sort(p.partitions.begin(), p.partitions.end(),
            [](const PlacedPartition& x, const PlacedPartition& y) {
              return x.start_sector < y.start_sector;
            });
  return p;
}

}  // namespace partalign
