// SPDX-License-Identifier: GPL-3.0-or-later
// audit --all: the whole disks this machine has, from /sys/block.
#pragma once

#include <string>
#include <vector>

#include "partalign/util/result.h"

namespace partalign {

/// "/dev/NAME" for every entry of `sys_block` (normally /sys/block) that is a disk that can
/// hold a partition table: not a loop, RAM, zram, floppy or optical device, not device-mapper
/// or MD (their tables live on the disks below), and not empty (size 0: no medium). Sorted by
/// name.
Result<std::vector<std::string>> ListWholeDisks(const std::string& sys_block = "/sys/block");

}  // namespace partalign
