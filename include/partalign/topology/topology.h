// SPDX-License-Identifier: GPL-3.0-or-later
// The I/O limits of a block device (or what an image file is assumed to have), in bytes.
// Semantics follow the kernel's queue limits (Documentation/ABI/stable/sysfs-block) as libblkid
// returns them; see ../shared/docs/alignment-heuristics.md §1.
#pragma once

#include <cstdint>
#include <string_view>

namespace partalign {

/// Where the I/O limits came from. Partitioners behave differently when libblkid reports no
/// topology at all (parted and libfdisk then use their built-in defaults), so this is an input
/// of every tool model, not just a label.
enum class TopologyOrigin {
  kKernel,   ///< libblkid returned a topology for a block device
  kDefault,  ///< nothing was reported (image file, or libblkid returned NULL): defaults
  kAssumed,  ///< at least one value was supplied by --assume / --sector-size
};

std::string_view ToString(TopologyOrigin origin);

struct Topology {
  /// BLKSSZGET: the unit of every LBA in a partition table.
  uint64_t logical_sector_size = 512;
  /// BLKPBSZGET: the smallest unit the device writes atomically.
  uint64_t physical_sector_size = 512;
  /// BLKIOMIN: preferred minimum request size (RAID chunk); 0 = not reported.
  uint64_t minimum_io_size = 512;
  /// BLKIOOPT: preferred streaming unit (RAID stripe); 0 = not reported.
  uint64_t optimal_io_size = 0;
  /// BLKALIGNOFF: bytes by which LBA 0 is offset from the natural physical alignment.
  uint64_t alignment_offset = 0;
  /// Size of the device or image in bytes.
  uint64_t size_bytes = 0;
  TopologyOrigin origin = TopologyOrigin::kDefault;

  uint64_t size_sectors() const { return size_bytes / logical_sector_size; }
  bool operator==(const Topology&) const = default;
};

/// The topology of an image file or a device that reports nothing: every size equals the
/// logical sector size, no optimal I/O, no offset (what parted's init_file() and libfdisk's
/// fallbacks use).
Topology DefaultTopology(uint64_t logical_sector_size, uint64_t size_bytes);

}  // namespace partalign
