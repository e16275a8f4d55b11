// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/libfdisk_model.h"

#include <algorithm>

#include <fmt/format.h>

#include "partalign/topology/topology_check.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// 2048 * 512: libfdisk's 1 MiB grain and first LBA ("Windows Vista default", alignment.c).
constexpr uint64_t kFdiskDefaultGrain = 2048 * 512;
// GPT_NPARTITIONS x sizeof(struct gpt_entry): the entry array of a new GPT (gpt.c).
constexpr uint64_t kFdiskGptEntryArrayBytes = 128 * 128;
// DOS partition tables address sectors with 32 bits (get_disk_ranges() caps at UINT_MAX).
constexpr uint64_t kFdiskDosLastSector = 0xFFFFFFFFull;

const ToolVersion kPhysFilterSince{2, 27, 0, 2};         // acb7651f8, 68a8648ce
const ToolVersion kTinyAreaRuleSince{2, 36, 0, 2};       // 89c0297bc
const ToolVersion kBridgeFilterSince{2, 37, 0, 2};       // bbb66067c
const ToolVersion kFdiskSmallSegmentSince{2, 38, 0, 2};  // a64e99118

bool BitMaskEra(const LibfdiskContext& c) { return c.version < kPhysFilterSince; }

// (lba * sector) mod granularity, as the era computes it: bit masks before 2.27.
uint64_t ModGranularity(const LibfdiskContext& c, uint64_t value, uint64_t granularity) {
  return BitMaskEra(c) ? value & (granularity - 1) : value % granularity;
}

bool AlignedTo(const LibfdiskContext& c, uint64_t lba, uint64_t granularity) {
  uint64_t offset = ModGranularity(c, lba * c.sector_size, granularity);
  return ModGranularity(c, granularity + c.alignment_offset - offset, granularity) == 0;
}

// lba_is_aligned(): granularity max(grain, physical sector, minimum I/O).
bool LbaIsAligned(const LibfdiskContext& c, uint64_t lba) {
  uint64_t granularity = std::max({c.phy_sector_size, c.min_io_size, c.grain_bytes});
  return AlignedTo(c, lba, granularity);
}

bool IsPowerOfTwoOrZero(uint64_t v) { return (v & (v - 1)) == 0; }

}  // namespace

Result<LibfdiskContext> DiscoverLibfdisk(const Topology& t, const ToolVersion& version,
                                         std::optional<uint64_t> user_sector_size) {
  Result<ToolEra> era = EraOf(Tool::kUtilLinux, version);
  if (!era) return era.error();
  LibfdiskContext c;
  c.version = version;
  c.era = *era;
  std::vector<std::string>& why = c.reasons;
  uint64_t phy = 0, min_io = 0, io = 0;
  if (t.origin != TopologyOrigin::kDefault) {
    min_io = t.minimum_io_size;
    c.optimal_io_size = t.optimal_io_size;
    phy = t.physical_sector_size;
    c.alignment_offset = t.alignment_offset;
    io = c.optimal_io_size != 0 ? c.optimal_io_size : min_io;
    why.push_back(fmt::format(
        "libblkid reports physical sector {}, minimum I/O {}, optimal I/O {}, alignment offset "
        "{}; the I/O size libfdisk uses is the optimal I/O, or the minimum I/O when that is 0: "
        "{} (fdisk_discover_topology)",
        phy, min_io, c.optimal_io_size, c.alignment_offset, io));
    // Replaces the I/O size by the physical sector, saying why.
    auto drop = [&](std::string_view why_detail, std::string_view key_detail) {
      why.push_back(
          fmt::format("I/O size {} {}: use the physical sector {} instead", io, why_detail, phy));
      c.key_reason = fmt::format("libfdisk {} ignores the I/O size {}{} and keeps 1 MiB",
                                 version.ToString(), io, key_detail);
      io = phy;
    };
    if (io != 0 && phy != 0 && version >= kPhysFilterSince) {
      if (version >= kBridgeFilterSince && io == kBogusBridgeOptimalIo) {
        drop("is \"always a controller error\" (util-linux >= 2.37, bbb66067c)",
             " (\"always a controller error\")");
      } else if (io % phy != 0) {
        drop("is not a multiple of the physical sector (util-linux >= 2.27, acb7651f8)",
             fmt::format(", not a multiple of the physical sector {},", phy));
      }
    } else if (io == kBogusBridgeOptimalIo) {
      why.push_back(
          fmt::format("util-linux {} takes the I/O size {} as it is", version.ToString(), io));
    }
  } else {
    why.push_back(
        "libblkid reports no topology (an image file, or a device no prober completes for): "
        "libfdisk uses the sector size for every I/O size");
  }
  c.sector_size = t.logical_sector_size;
  c.phy_sector_size = phy != 0 ? phy : c.sector_size;
  c.min_io_size = min_io != 0 ? min_io : c.sector_size;
  c.io_size = io != 0 ? io : c.sector_size;
  c.total_sectors = t.size_bytes / c.sector_size;
  if (user_sector_size) {
    uint64_t old = c.sector_size;
    c.sector_size = c.min_io_size = c.io_size = *user_sector_size;
    if (c.sector_size != old)
      c.total_sectors = c.total_sectors * (old / 512) / (c.sector_size >> 9);
    why.push_back(fmt::format(
        "the caller saved a user sector size {} (fdisk_save_user_sector_size): minimum I/O and "
        "I/O size are reset to it, so a large optimal I/O no longer moves anything",
        *user_sector_size));
  }

  // topology_get_grain()
  c.grain_bytes = std::max(c.io_size, kFdiskDefaultGrain);
  if (c.total_sectors <= c.grain_bytes * 4 / c.sector_size) {
    why.push_back(fmt::format(
        "the device ({} sectors) is at most 4 grains of {}: the grain is the physical sector {}",
        c.total_sectors, FormatSize(c.grain_bytes), c.phy_sector_size));
    c.grain_bytes = c.phy_sector_size;
  } else {
    why.push_back(fmt::format("grain = max(I/O size {}, 1 MiB) = {} = {} sectors", c.io_size,
                              FormatSize(c.grain_bytes), c.grain_bytes / c.sector_size));
  }

  // has_topology() and topology_get_first_lba()
  bool has_topology =
      c.optimal_io_size != 0 || c.alignment_offset != 0 || !IsPowerOfTwoOrZero(c.min_io_size);
  uint64_t x = 0;
  if (has_topology) {
    if (c.alignment_offset != 0) {
      x = c.alignment_offset;
      why.push_back(fmt::format("the alignment offset {} is set: first LBA = {} / {} = {}",
                                c.alignment_offset, x, c.sector_size, x / c.sector_size));
    } else if (c.io_size > kFdiskDefaultGrain) {
      x = c.io_size;
      why.push_back(fmt::format(
          "the device has topology (optimal I/O {}) and I/O size {} > 1 MiB: first LBA = {} / "
          "{} = {}",
          c.optimal_io_size, c.io_size, x, c.sector_size, x / c.sector_size));
    }
  }
  if (x == 0) {
    x = kFdiskDefaultGrain;
    why.push_back(fmt::format("first LBA = 1 MiB / {} = {}", c.sector_size, x / c.sector_size));
  }
  c.first_lba = x / c.sector_size;
  if (c.total_sectors <= c.first_lba * 4) {
    c.first_lba = c.phy_sector_size / c.sector_size;
    why.push_back(fmt::format(
        "the device is at most 4 times the first LBA: first LBA = one physical sector = {}",
        c.first_lba));
  }
  c.last_lba = c.total_sectors - 1;
  if (c.key_reason.empty()) {
    c.key_reason =
        x == kFdiskDefaultGrain
            ? fmt::format("libfdisk {} uses a {} grain and a 1 MiB first LBA (I/O size {})",
                          version.ToString(), FormatSize(c.grain_bytes), c.io_size)
            : fmt::format("libfdisk {} takes its first LBA {} from the topology ({})",
                          version.ToString(), c.first_lba,
                          c.alignment_offset != 0
                              ? fmt::format("alignment offset {}", c.alignment_offset)
                              : fmt::format("I/O size {} > 1 MiB", c.io_size));
  }
  return c;
}

uint64_t FdiskAlignLba(const LibfdiskContext& c, uint64_t lba, AlignDirection direction) {
  if (LbaIsAligned(c, lba)) return lba;
  const uint64_t g = c.grain_bytes / c.sector_size;
  uint64_t res;
  if (lba < c.first_lba) {
    res = c.first_lba;
  } else if (direction == AlignDirection::kUp) {
    res = (lba + g) / g * g;
  } else if (direction == AlignDirection::kDown) {
    res = lba / g * g;
  } else {
    res = (lba + g / 2) / g * g;
  }
  if (c.alignment_offset != 0 && !LbaIsAligned(c, res) &&
      res > c.alignment_offset / c.sector_size) {
    // Physical blocks start at LBA -1 on such disks: move down by the rest of a block.
    res -= (std::max(c.phy_sector_size, c.min_io_size) - c.alignment_offset) / c.sector_size;
    if (direction == AlignDirection::kUp && res < lba) res += g;
  }
  return res;
}

uint64_t FdiskAlignLbaInRange(const LibfdiskContext& c, uint64_t lba, uint64_t start,
                              uint64_t stop) {
  const uint64_t g = c.grain_bytes / c.sector_size;
  if (c.version >= kTinyAreaRuleSince) {
    if (start + g <= stop) {
      start = FdiskAlignLba(c, start, AlignDirection::kUp);
      stop = FdiskAlignLba(c, stop, AlignDirection::kDown);
    }
    if (start + g > stop) return lba;  // an area smaller than a grain is not aligned
  } else {
    start = FdiskAlignLba(c, start, AlignDirection::kUp);
    stop = FdiskAlignLba(c, stop, AlignDirection::kDown);
    if (c.version >= kPhysFilterSince && lba > start && lba < stop && lba - start < g) {
      return lba;
    }
  }
  lba = FdiskAlignLba(c, lba, AlignDirection::kNearest);
  if (lba < start) return start;
  if (lba > stop) return stop;
  return lba;
}

bool FdiskLbaIsPhyAligned(const LibfdiskContext& c, uint64_t lba) {
  return AlignedTo(c, lba, std::max(c.phy_sector_size, c.min_io_size));
}

std::string FdiskPhysBoundaryWarning(int number) {
  return fmt::format("Partition {} does not start on physical sector boundary.", number);
}

Result<LibfdiskLabel> CreateLibfdiskLabel(const LibfdiskContext& cxt, LabelType label) {
  LibfdiskLabel l;
  l.label = label;
  l.cxt = cxt;
  if (label == LabelType::kGpt) {
    const uint64_t esects = (kFdiskGptEntryArrayBytes + cxt.sector_size - 1) / cxt.sector_size;
    if (cxt.total_sectors < 2 + esects + 2 + esects) {
      return MakeError("the device is too small for a GPT");
    }
    const uint64_t uefi_first = 2 + esects;
    const uint64_t last = cxt.total_sectors - 2 - esects;
    const bool topology_first_fits = uefi_first < cxt.first_lba && cxt.first_lba < last;
    l.first_usable_lba = topology_first_fits ? cxt.first_lba : uefi_first;
    l.last_usable_lba = last;
    if (topology_first_fits) {
      l.reasons.push_back(fmt::format(
          "a new GPT gets FirstUsableLBA = the first LBA {}, which lies between the UEFI "
          "minimum {} (2 + {}/{}) and LastUsableLBA {} (count_first_last_lba)",
          cxt.first_lba, uefi_first, kFdiskGptEntryArrayBytes, cxt.sector_size, last));
    } else {
      l.reasons.push_back(fmt::format(
          "the first LBA {} is not above the UEFI minimum {} (2 + {}/{}): FirstUsableLBA = {}",
          cxt.first_lba, uefi_first, kFdiskGptEntryArrayBytes, cxt.sector_size, uefi_first));
    }
    l.cxt.first_lba = std::max(cxt.first_lba, l.first_usable_lba);
    l.cxt.last_lba = std::min(cxt.last_lba, last);
  } else {
    l.first_usable_lba = cxt.first_lba;
    l.last_usable_lba = std::min(cxt.total_sectors - 1, kFdiskDosLastSector);
    l.reasons.push_back(fmt::format(
        "a new DOS label starts partitions at the first LBA {} (DOS-compatible mode, which would "
        "use sector 63, is off by default since util-linux 2.18)",
        cxt.first_lba));
  }
  return l;
}

namespace {

// gpt.c find_first_in_largest(): the free segments of a GPT with one partition [s, e].
struct FdiskSegment {
  uint64_t first;
  uint64_t last;
};

FdiskSegment LargestFree(uint64_t first_usable, uint64_t last_usable, uint64_t s, uint64_t e) {
  std::vector<FdiskSegment> free;
  if (s > first_usable) free.push_back({first_usable, s - 1});
  if (e < last_usable) free.push_back({e + 1, last_usable});
  FdiskSegment best{0, 0};
  uint64_t best_size = 0;
  for (const FdiskSegment& f : free) {
    if (f.last - f.first + 1 > best_size) {
      best = f;
      best_size = f.last - f.first + 1;
    }
  }
  return best;
}

}  // namespace

SfdiskPlacement PredictSfdisk(const LibfdiskLabel& l, std::optional<uint64_t> first_size) {
  SfdiskPlacement p;
  const LibfdiskContext& c = l.cxt;
  const uint64_t g = c.grain_bytes / c.sector_size;
  const bool alignment_required = c.grain_bytes != c.sector_size;
  if (l.label == LabelType::kGpt) {
    uint64_t f = l.first_usable_lba, last = l.last_usable_lba;
    if (c.version >= kFdiskSmallSegmentSince && last - f + 1 < g) {
      p.error = "No enough free sectors available.";
      p.reasons.push_back(fmt::format(
          "the free area {}..{} is smaller than a grain of {} sectors: sfdisk refuses a default "
          "start (util-linux >= 2.38)",
          f, last, g));
      return p;
    }
    uint64_t start = FdiskAlignLbaInRange(c, f, f, last);
    p.first_start = start;
    p.reasons.push_back(
        fmt::format("the default start is the first free sector {} aligned within {}..{}: {}", f, f,
                    last, start));
    if (first_size) {
      uint64_t max_l = last;
      uint64_t dflt_l = FdiskAlignLbaInRange(c, max_l, start, max_l) - 1;
      uint64_t user_l = start + *first_size - 1;
      if (user_l != dflt_l && alignment_required && user_l - start > g) {
        user_l = FdiskAlignLbaInRange(c, user_l, start, dflt_l);
        if (user_l > start) user_l -= 1;
      }
      if (user_l <= max_l) {
        FdiskSegment next = LargestFree(f, last, start, user_l);
        if (next.last >= next.first &&
            !(c.version >= kFdiskSmallSegmentSince && next.last - next.first + 1 < g)) {
          p.second_start = FdiskAlignLbaInRange(c, next.first, next.first, next.last);
        }
      }
    }
  } else {
    uint64_t f = c.first_lba, limit = l.last_usable_lba;
    uint64_t start = FdiskAlignLbaInRange(c, f, f, limit);
    if (start >= limit) start = f;
    p.first_start = start;
    p.reasons.push_back(
        fmt::format("the default start is the first free sector {} aligned within {}..{}: {}", f, f,
                    limit, start));
    if (first_size) {
      uint64_t stop = start + *first_size;
      bool isrel = true;
      if (!alignment_required && stop > start) stop -= 1;
      stop = std::min(stop, limit);
      if (stop - start < g) isrel = false;
      if (stop < limit && isrel && alignment_required) {
        stop = FdiskAlignLbaInRange(c, stop, start, limit);
        if (stop > start) stop -= 1;
        stop = std::min(stop, limit);
      }
      if (stop < limit) {
        // dos.c add_partition(): the aligned default, or the first free sector when the
        // aligned one is not below the limit.
        uint64_t next = FdiskAlignLbaInRange(c, stop + 1, stop + 1, limit);
        p.second_start = next < limit ? next : stop + 1;
      }
    }
  }
  p.first_start_phys_aligned = FdiskLbaIsPhyAligned(c, *p.first_start);
  uint64_t granularity = std::max(c.phy_sector_size, c.min_io_size);
  if (p.first_start_phys_aligned) {
    p.reasons.push_back(fmt::format(
        "{} starts on a boundary of max(physical sector, minimum I/O) = {} after the alignment "
        "offset {}: no warning",
        *p.first_start, granularity, c.alignment_offset));
  } else {
    p.reasons.push_back(fmt::format(
        "{} x {} - {} is not a multiple of max(physical sector, minimum I/O) = {}: fdisk -l says "
        "\"{}\"",
        *p.first_start, c.sector_size, c.alignment_offset, granularity,
        FdiskPhysBoundaryWarning(1)));
  }
  return p;
}

}  // namespace partalign
