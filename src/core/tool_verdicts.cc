#include "partalign/tool_verdicts.h"

#include <algorithm>

#include <fmt/format.h>

#include "partalign/units.h"

namespace partalign {
namespace {

// gpt.h: DEFAULT_ALIGNMENT (sectors of 512 bytes, i.e. 1 MiB), MIN_AF_ALIGNMENT and
// SMALLEST_ADVANCED_FORMAT ("smallest Advanced Format drive I know of is 320GB in size").
constexpr uint64_t kGdiskDefaultAlignmentBytes = 2048 * 512;
constexpr uint64_t kGdiskMinAfAlignment = 8;
constexpr uint64_t kGdiskSmallestAdvancedFormat = 585937500;

// The mathematical (non-negative) remainder of (value - offset) modulo m.
uint64_t OffsetMod(uint64_t value, uint64_t offset, uint64_t m) {
  return (value % m + m - offset % m) % m;
}

}  // namespace

PartedAlignment PartedOptimumAlignment(const Topology& t) {
  const uint64_t lbs = std::max<uint64_t>(t.logical_sector_size, 1);
  PartedAlignment a;
  if (t.origin == TopologyOrigin::kDefault) {
    a.grain_sectors = std::max<uint64_t>(kMiB / lbs, 1);  // ped_device_get_optimum_alignment
    return a;
  }
  const uint64_t min = t.minimum_io_size;
  const uint64_t opt = t.optimal_io_size;
  // The "default to 1MiB alignment when possible" test of parted 2.4 (commit c749046).
  const bool use_mib =
      (opt == 0 && min == 0) || (opt != 0 && kMiB % opt == 0 && min != 0 && kMiB % min == 0) ||
      (min == 0 && opt != 0 && kMiB % opt == 0) || (opt == 0 && min != 0 && kMiB % min == 0);
  uint64_t grain_bytes;
  if (use_mib) {
    grain_bytes = kMiB;
  } else if (opt == 0) {
    // linux_get_minimum_alignment(): minimum I/O, or the physical sector when it is 0.
    grain_bytes = min != 0 ? min : t.physical_sector_size;
  } else {
    grain_bytes = opt;  // taken literally: 33553920 gives 65535 sectors
  }
  a.grain_sectors = std::max<uint64_t>(grain_bytes / lbs, 1);
  // ped_alignment_init() normalises the offset into [0, grain).
  a.offset_sectors = (t.alignment_offset / lbs) % a.grain_sectors;
  return a;
}

ToolVerdict PartedAlignCheckOpt(const Topology& topology, uint32_t number, uint64_t start_sector) {
  PartedAlignment a = PartedOptimumAlignment(topology);
  uint64_t rest = start_sector % a.grain_sectors;
  if (rest == a.offset_sectors) return {true, fmt::format("{} aligned", number)};
  return {false, fmt::format("{} not aligned: {}s % {}s != {}s", number, start_sector,
                             a.grain_sectors, a.offset_sectors)};
}

ToolVerdict FdiskPhysicalBoundary(const Topology& t, uint32_t number, uint64_t start_sector) {
  const uint64_t ss = t.logical_sector_size;
  uint64_t phy = ss;
  uint64_t min_io = ss;
  uint64_t offset = 0;
  if (t.origin != TopologyOrigin::kDefault) {
    // fdisk_discover_topology(): values libblkid reports as 0 fall back to the sector size.
    phy = t.physical_sector_size != 0 ? t.physical_sector_size : ss;
    min_io = t.minimum_io_size != 0 ? t.minimum_io_size : ss;
    offset = t.alignment_offset;
  }
  const uint64_t granularity = std::max<uint64_t>(std::max(phy, min_io), 1);
  if (OffsetMod(start_sector * ss, offset, granularity) == 0) return {true, ""};
  return {false, fmt::format("Partition {} does not start on physical sector boundary.", number)};
}

uint64_t GdiskComputeAlignment(uint64_t logical_sector_size, uint64_t disk_sectors,
                               const std::vector<uint64_t>& starts) {
  uint64_t align = kGdiskDefaultAlignmentBytes / std::max<uint64_t>(logical_sector_size, 1);
  // exponent = log2(align): gdisk truncates, so a non-power-of-two default rounds down.
  uint64_t exponent = 0;
  while ((uint64_t{2} << exponent) <= align) ++exponent;
  for (uint64_t start : starts) {
    while (exponent > 0 && start % (uint64_t{1} << exponent) != 0) --exponent;
    align = uint64_t{1} << exponent;
  }
  if (align < kGdiskMinAfAlignment && disk_sectors >= kGdiskSmallestAdvancedFormat) {
    align = kGdiskMinAfAlignment;
  }
  return align;
}

uint64_t GdiskTestAlignment(const Topology& t, uint64_t sector_alignment) {
  uint64_t test = sector_alignment;
  if (t.origin != TopologyOrigin::kDefault && t.physical_sector_size != 0 &&
      t.logical_sector_size != 0) {
    test = t.physical_sector_size / t.logical_sector_size;
  }
  test = std::max(test, sector_alignment);
  return test == 0 ? std::max<uint64_t>(sector_alignment, 1) : test;
}

ToolVerdict GdiskVerifyStart(uint32_t number, uint64_t start_sector, uint64_t test_alignment) {
  if (start_sector % test_alignment == 0) return {true, ""};
  return {false, fmt::format("Caution: Partition {} doesn't begin on a {}-sector boundary. This "
                             "may result in degraded performance on some modern (2009 and "
                             "later) hard disks.",
                             number, test_alignment)};
}

ToolVerdict GdiskVerifyEnd(uint32_t number, uint64_t end_sector, uint64_t test_alignment) {
  if ((end_sector + 1) % test_alignment == 0) return {true, ""};
  return {false, fmt::format("Caution: Partition {} doesn't end on a {}-sector boundary. This "
                             "may result in problems with some disk encryption tools.",
                             number, test_alignment)};
}

}  // namespace partalign
