// SPDX-License-Identifier: GPL-3.0-or-later
// A filesystem's own idea of the storage under it: its block size and the RAID stripe geometry
// mkfs recorded (ext4 `-E stride=,stripe_width=`, XFS `-d su=,sw=`), read from the superblock.
// libblkid reports the block size but not the stripe values, so partalign reads them itself.
// Pure: the bytes are read in src/io/stack.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace partalign {

/// How many bytes at a filesystem's start hold both superblocks read here (ext4's at 1024,
/// XFS's at 0).
inline constexpr uint64_t kFsGeometryProbeBytes = 4096;

struct FsGeometry {
  std::string type;  ///< "ext4", "ext3", "ext2", "xfs"
  uint64_t block_size_bytes = 0;
  /// The stripe unit (ext4 s_raid_stride, XFS sb_unit) in bytes; 0 when none is recorded.
  uint64_t stripe_unit_bytes = 0;
  /// The stripe width (ext4 s_raid_stripe_width, XFS sb_width) in bytes; 0 when none.
  uint64_t stripe_width_bytes = 0;
  /// XFS sb_sectsize: the smallest unit the filesystem writes. ext4: nullopt.
  std::optional<uint64_t> sector_size_bytes;
};

/// The geometry of the filesystem of libblkid type `fs_type` whose first bytes are `head`;
/// nullopt for other types, a short `head`, a wrong magic, or values no mkfs writes (a block
/// size that is not a power of two between 512 bytes and 64 KiB).
/// ext2/3/4 (fs/ext4/ext4.h): block 1024 << s_log_block_size (+0x18 of the superblock at
/// 1024), s_raid_stride u16 at +0x164, s_raid_stripe_width u32 at +0x170, both in blocks.
/// XFS (fs/xfs/libxfs/xfs_format.h, big-endian): sb_blocksize at 4, sb_sectsize at 102,
/// sb_unit at 184, sb_width at 188, both in blocks.
std::optional<FsGeometry> ReadFsGeometry(std::string_view fs_type, std::span<const uint8_t> head);

/// The same without libblkid's type: ext2/3/4 or XFS recognised by their magic (ext4 when the
/// superblock has extents, flex_bg or 64bit; ext3 with a journal; else ext2). For the first
/// chunk of a striped LV or array, where libblkid's wider reads would see other devices' data.
std::optional<FsGeometry> DetectFsGeometry(std::span<const uint8_t> head);

}  // namespace partalign
