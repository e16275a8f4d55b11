// SPDX-License-Identifier: GPL-3.0-or-later
// btrfs: the used map from the device extents (the chunks allocated on this device, from the
// device tree) plus the superblock and its mirrors, parsed here. Coarse - a chunk is copied
// whole however full it is - but exact about what btrfs may ever read: nothing outside its
// chunks and superblocks. On-disk format: fs/btrfs/ctree.h and the btrfs wiki's "On-disk
// Format"; the chunk tree is found through the superblock's sys_chunk_array, the device tree
// through the root tree.
#pragma once

#include <cstdint>
#include <span>

#include "partalign/used/byte_source.h"
#include "partalign/used/used_map.h"
#include "partalign/util/result.h"

namespace partalign {

/// The used map of the btrfs filesystem (one device of it) in `source`: the first 1 MiB (btrfs
/// never allocates it; the superblock is at 64 KiB), the superblock mirrors (64 MiB, 256 GiB)
/// inside the device, every device extent of this device, and what follows the device's size.
/// Whole (with a note) when the superblock fails a check (magic, crc32c, sizes), its checksum
/// type is not crc32c, an incompatible feature this parser does not know is set, a tree block
/// fails a check (checksum, address, level, item bounds, each block once) or lives in a striped
/// chunk (RAID0/10/5/6) or on another device, or a read fails. Never fails.
UsedMap BtrfsUsedMap(const ByteSource& source);

}  // namespace partalign
