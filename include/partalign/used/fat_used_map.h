// SPDX-License-Identifier: GPL-3.0-or-later
// FAT12/16/32 (vfat): the used map from the boot sector and the FATs, parsed here (the format is
// small and fixed: Microsoft's FAT specification, "FAT: General Overview of On-Disk Format",
// 2000; dosfstools' boot.c reads the same fields).
#pragma once

#include <cstdint>
#include <span>

#include "partalign/used/byte_source.h"
#include "partalign/used/used_map.h"
#include "partalign/util/result.h"

namespace partalign {

/// What a FAT boot sector says, checked against itself and the partition.
struct FatGeometry {
  uint32_t bytes_per_sector = 0;
  uint32_t sectors_per_cluster = 0;
  uint32_t reserved_sectors = 0;
  uint32_t fat_count = 0;
  uint64_t fat_sectors = 0;       ///< of one FAT
  uint32_t root_dir_sectors = 0;  ///< FAT12/16: the fixed root directory
  uint64_t total_sectors = 0;
  uint64_t cluster_count = 0;  ///< data clusters, numbered 2 .. cluster_count + 1
  uint32_t fat_bits = 0;       ///< 12, 16 or 32, from the cluster count (as the specification says)
  uint64_t data_offset_bytes = 0;
  bool operator==(const FatGeometry&) const = default;
};

/// Parses and checks the boot sector (the first 512 bytes of the partition): a power-of-two
/// sector size of 512..4096, a power-of-two cluster, at least one reserved sector and one FAT,
/// FATs large enough for every cluster, a filesystem no larger than `partition_bytes`. The
/// error names the field.
Result<FatGeometry> ParseFatBootSector(std::span<const uint8_t> sector, uint64_t partition_bytes);

/// The used map of the FAT filesystem in `source`: the first 64 KiB, the reserved sectors, the
/// FATs and the FAT12/16 root directory, every cluster that any FAT marks non-free, and what
/// follows the last cluster (the sectors too few for one, and what follows the filesystem). Whole
/// (with a note) when the boot sector is not valid, a FAT cannot be read, or the filesystem is
/// marked dirty (not cleanly unmounted). Reads each FAT once, in pieces; never fails.
UsedMap FatUsedMap(const ByteSource& source);

}  // namespace partalign
