// SPDX-License-Identifier: GPL-3.0-or-later
// A partition node given where a disk is expected (/dev/sda5 for /dev/sda): read as a disk it
// looks like a disk without a partition table. What the kernel says of it, and what a command
// that reads or writes a table says instead.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace partalign {

struct PartitionNode {
  std::string path;                ///< as given
  std::string disk;                ///< the node of its disk, "/dev/sda"
  std::optional<uint32_t> number;  ///< the kernel's number of the partition
  uint64_t start_bytes = 0;        ///< where it starts on its disk
};

/// "'/dev/sda5' is partition 5 of the disk '/dev/sda', not a disk: partition tables are read
/// and written on the whole disk, give '/dev/sda' ('partalign audit /dev/sda5' checks this one
/// partition)".
std::string PartitionNodeRefusal(const PartitionNode& node);

}  // namespace partalign
