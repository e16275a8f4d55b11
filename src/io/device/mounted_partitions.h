// SPDX-License-Identifier: GPL-3.0-or-later
// Which partitions of a disk are mounted, and where (the mount table and sysfs): the journal
// partition of a plan staged for the next boot is one (docs/at-boot.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partalign/util/result.h"

namespace partalign {

struct MountedPartition {
  uint32_t number = 0;      ///< the kernel's partition number
  std::string mount_point;  ///< the first mount of it in the mount table
  std::string fstype;
  bool read_only = false;  ///< that mount is read-only
};

/// The partitions of the disk `disk` ("/dev/sda", a loop device) mounted now, one entry per
/// partition, in the mount table's order.
Result<std::vector<MountedPartition>> MountedPartitionsOf(
    const std::string& disk, const std::string& mountinfo = "/proc/self/mountinfo",
    const std::string& sysfs_root = "/sys");

/// The partition whose filesystem holds `dir`, and its disk ("/dev/vda"): nullopt when `dir` is
/// not on a partition of a disk (tmpfs, a whole-disk filesystem).
struct HoldingPartition {
  std::string disk;
  uint32_t number = 0;
};
Result<std::optional<HoldingPartition>> PartitionHolding(const std::string& dir,
                                                         const std::string& sysfs_root = "/sys");

}  // namespace partalign
