// SPDX-License-Identifier: GPL-3.0-or-later
// The size of a filesystem, read from its superblock. libblkid 2.38 (Debian 12) reports a
// filesystem's type, label, UUID and block size, but not its size: the FSSIZE value arrived in
// util-linux 2.39. The planner needs the size to know how far a partition's end may move
// inward without cutting the filesystem, so partalign reads it itself for the common types.
// Pure: the bytes are read in src/io (blkid_probe.cc), parsed here.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace partalign {

/// How many bytes at the start of a partition hold every superblock FilesystemSizeBytes reads:
/// btrfs keeps its superblock at 64 KiB (BTRFS_SUPER_INFO_OFFSET) and it is 4 KiB long; swap
/// keeps its header in the first page (up to 64 KiB pages).
inline constexpr uint64_t kSuperblockProbeBytes = 64 * 1024 + 4096;

/// The size in bytes of the filesystem of type `fs_type` (libblkid's TYPE: "ext2", "ext3",
/// "ext4", "vfat", "swap", "xfs", "btrfs") whose partition starts with `head`; nullopt for
/// other types, a short `head`, a wrong magic or values that make no sense. Formulas:
/// ext2/3/4 s_blocks_count x block size; vfat total sectors x bytes per sector; swap
/// (last_page + 1) x page size; xfs sb_dblocks x sb_blocksize; btrfs dev_item.total_bytes
/// (this device's share, not the sum over a multi-device filesystem).
std::optional<uint64_t> FilesystemSizeBytes(std::string_view fs_type,
                                            std::span<const uint8_t> head);

}  // namespace partalign
