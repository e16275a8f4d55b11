// SPDX-License-Identifier: GPL-3.0-or-later
// Identity of a block device from sysfs: transport, vendor/model/serial/WWN, the USB bridge
// (walking up the device path to the nearest USB device), rotational, discard granularity.
// There is no udev database on every machine (this one has none), but sysfs is always there.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "partalign/topology/device.h"
#include "partalign/topology/partition_node.h"
#include "partalign/util/result.h"

namespace partalign {

/// Reads the identity of block device `major:minor` under `sysfs_root` ("/sys" normally; tests
/// pass a fake tree). Fills every field of Identity except `path`. Missing attributes stay empty.
Result<Identity> ReadSysfsIdentity(const std::string& sysfs_root, uint32_t major, uint32_t minor);

/// What the kernel says of `path` when it is a partition node (its disk, number and start);
/// nullopt for a whole disk or an image file. Opens `path` read-only.
Result<std::optional<PartitionNode>> PartitionNodeOf(const std::string& path,
                                                     const std::string& sysfs_root = "/sys");

/// The same for the block device `major:minor` (a filesystem's st_dev: the partition that holds
/// a directory); `path` is left empty.
Result<std::optional<PartitionNode>> PartitionNodeOfDevice(uint32_t major, uint32_t minor,
                                                           const std::string& sysfs_root = "/sys");

}  // namespace partalign
