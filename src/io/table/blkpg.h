// SPDX-License-Identifier: GPL-3.0-or-later
// Telling the kernel about partitions through the BLKPG ioctl (add/delete), and reading what it
// knows from sysfs. This kernel parses no tables and BLKRRPART creates nothing
// (environment.md); BLKPG works here, and on any kernel while other partitions are in use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "partalign/table/kernel_partitions.h"
#include "partalign/util/result.h"

namespace partalign {

/// A partition the kernel knows, with its node name ("loop3p1").
struct KernelPartitionNode {
  KernelPartition partition;
  std::string name;
};

/// The partitions the kernel has for block device `major:minor` (sysfs
/// <disk>/<part>/{partition,start,size}; start and size are in 512-byte units whatever the
/// logical sector size), in number order.
Result<std::vector<KernelPartitionNode>> ReadKernelPartitions(const std::string& sysfs_root,
                                                              uint32_t major, uint32_t minor);

/// Performs `updates` in order on the disk open as `fd` (BLKPG_DEL_PARTITION /
/// BLKPG_ADD_PARTITION). Stops at the first failure; the error names the operation.
Status ApplyKernelUpdates(int fd, const std::string& path,
                          const std::vector<KernelUpdate>& updates);

}  // namespace partalign
