// SPDX-License-Identifier: GPL-3.0-or-later
// XFS: the used map from the allocation groups' free-space B+trees (the by-block-number "bnobt"
// that xfs_db's freesp and partclone.xfs read), parsed here: what is not free is used. And the
// log must be clean - a dirty log may allocate blocks the trees still call free - so the log's
// head is found and checked to be an unmount record, the way xfsprogs' xlog_find_tail() decides
// (libxlog/xfs_log_recover.c). On-disk formats: "XFS Algorithms & Data Structures" (kernel.org
// xfs-documentation), fs/xfs/libxfs/xfs_format.h and xfs_log_format.h.
#pragma once

#include <cstdint>
#include <span>

#include "partalign/used/byte_source.h"
#include "partalign/used/used_map.h"
#include "partalign/util/result.h"

namespace partalign {

/// The superblock fields the map needs, checked against each other and the partition.
struct XfsGeometry {
  uint32_t block_bytes = 0;
  uint64_t data_blocks = 0;  ///< sb_dblocks
  uint32_t ag_blocks = 0;
  uint32_t ag_count = 0;
  uint32_t ag_block_log = 0;  ///< bits of the AG block number inside a filesystem block number
  uint32_t sector_bytes = 0;
  uint64_t log_start_fsb = 0;  ///< 0: external log
  uint32_t log_blocks = 0;
  bool v5 = false;  ///< CRC-enabled (version 5) metadata
  bool operator==(const XfsGeometry&) const = default;
};

/// Parses and checks the primary superblock (the first sector): magic, a power-of-two block of
/// 512..65536 bytes and sector of 512..32768, AG geometry that adds up to the data blocks, a
/// filesystem that fits `partition_bytes`, an internal log inside it, no mkfs in progress, no
/// incompatible feature this parser does not know, and (version 5) the checksum.
Result<XfsGeometry> ParseXfsSuperblock(std::span<const uint8_t> sector, uint64_t partition_bytes);

/// CRC32C (Castagnoli) as XFS stores it: over `bytes` with the 4 checksum bytes at `crc_offset`
/// taken as zero, seed ~0, stored little-endian inverted. Returns whether it matches.
bool XfsChecksumMatches(std::span<const uint8_t> bytes, size_t crc_offset);

/// The used map of the XFS filesystem in `source`: every block of every AG that its bnobt does
/// not list as free (AG headers, free lists, B+trees, inodes, data, the log), the first 64 KiB,
/// what follows the filesystem. Whole (with a note) when the superblock, an AGF or a bnobt block
/// fails a check, when the log is external or not clean (needs recovery), or a read fails.
/// Reads the superblock, each AGF, each bnobt block once, and the log once; never fails.
UsedMap XfsUsedMap(const ByteSource& source);

}  // namespace partalign
