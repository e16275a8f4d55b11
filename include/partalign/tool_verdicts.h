// What parted, fdisk and gdisk say about an existing partition's start (and gdisk about its
// end): the three small checks `partalign audit` reports as each tool's verdict. Restated from
// the upstream sources (alignment-heuristics.md §2.3-2.4, §3.4, §3.6, §4); no upstream code
// is copied.
//
// The explain work (parted_model.h, libfdisk_model.h, gdisk_model.h) models the same tools in
// full; these are the audit's three verdicts only, kept here until the two are reconciled.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "partalign/topology.h"

namespace partalign {

/// One tool's verdict on one partition.
struct ToolVerdict {
  bool ok = true;
  /// What the tool prints, without a "Warning: " prefix; empty when it says nothing.
  std::string message;
  bool operator==(const ToolVerdict&) const = default;
};

/// libparted's optimum alignment in sectors: the sectors `offset + k * grain`.
struct PartedAlignment {
  uint64_t grain_sectors = 1;
  uint64_t offset_sectors = 0;
  bool operator==(const PartedAlignment&) const = default;
};

/// linux_get_optimum_alignment() (libparted/arch/linux.c) for a device reporting `topology`;
/// the device.c default (1 MiB, offset 0) when there is no topology (origin kDefault: image
/// files, where parted's init_file() never probes, or libblkid returned NULL).
PartedAlignment PartedOptimumAlignment(const Topology& topology);

/// `parted DEV align-check opt N` (do_align_check / partition_align_check, parted/parted.c):
/// start % grain == offset. Interactive output "N aligned" or, since parted 3.3,
/// "N not aligned: 63s % 2048s != 0s".
ToolVerdict PartedAlignCheckOpt(const Topology& topology, uint32_t number, uint64_t start_sector);

/// `fdisk -l`'s "Partition N does not start on physical sector boundary." (list_disklabel in
/// disk-utils/fdisk-list.c): lba_is_phy_aligned() in libfdisk/src/alignment.c, i.e.
/// (start * sector size - alignment offset) % max(physical sector, minimum I/O) == 0 with
/// libfdisk's topology (logical sector size for both when there is no topology).
ToolVerdict FdiskPhysicalBoundary(const Topology& topology, uint32_t number, uint64_t start_sector);

/// GPT fdisk's ComputeAlignment() (gpt.cc): the largest power of two, at most 1 MiB in
/// sectors, that divides every start of the table; raised to MIN_AF_ALIGNMENT (8) on disks of
/// at least SMALLEST_ADVANCED_FORMAT (585937500) sectors.
uint64_t GdiskComputeAlignment(uint64_t logical_sector_size, uint64_t disk_sectors,
                               const std::vector<uint64_t>& starts);

/// Verify()'s testAlignment (gpt.cc): max(physical / logical sector, sectorAlignment). gdisk
/// reads the physical sector with BLKPBSZGET only, which image files (origin kDefault) lack.
uint64_t GdiskTestAlignment(const Topology& topology, uint64_t sector_alignment);

/// `sgdisk -v`: "Caution: Partition N doesn't begin on a T-sector boundary. ..." when
/// start % T != 0.
ToolVerdict GdiskVerifyStart(uint32_t number, uint64_t start_sector, uint64_t test_alignment);

/// `sgdisk -v`: "Caution: Partition N doesn't end on a T-sector boundary. ..." when
/// (end + 1) % T != 0.
ToolVerdict GdiskVerifyEnd(uint32_t number, uint64_t end_sector, uint64_t test_alignment);

}  // namespace partalign
