// SPDX-License-Identifier: GPL-3.0-or-later
// An MD (software RAID) member's version-1 superblock, read from a region of a disk or image at
// the three places mdadm puts one (1.2 at 4 KiB, 1.1 at 0, 1.0 near the end) and parsed by
// partalign/stack/md_superblock.h. The kernel's md driver is not needed (nor present here).
#pragma once

#include <cstdint>
#include <string>

#include "partalign/stack/md_superblock.h"
#include "partalign/util/result.h"

namespace partalign {

/// The superblock of the member at [offset, offset + size) of `fd`: the first position whose
/// bytes carry the MD magic. An error when none does (0.90 superblocks are not read) or the
/// one found is damaged.
Result<MdSuperblock> ReadMdSuperblock(int fd, const std::string& path, uint64_t offset,
                                      uint64_t size);

}  // namespace partalign
