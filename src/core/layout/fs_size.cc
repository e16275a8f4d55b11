// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/layout/fs_size.h"

#include <array>
#include <limits>

#include "partalign/util/byte_order.h"

namespace partalign {
namespace {

// a * b, or nullopt on overflow or when either is 0 (a filesystem of size 0 is not one).
std::optional<uint64_t> Product(uint64_t a, uint64_t b) {
  if (a == 0 || b == 0 || a > std::numeric_limits<uint64_t>::max() / b) return std::nullopt;
  return a * b;
}

// ext2/3/4 (linux fs/ext4/ext4.h, struct ext4_super_block): the superblock starts at byte
// 1024; s_blocks_count_lo at +0x04, s_log_block_size at +0x18 (block = 1024 << it), s_magic
// 0xEF53 at +0x38, s_feature_incompat at +0x60, s_blocks_count_hi at +0x150 (64bit feature).
constexpr size_t kFsSizeExtSuperblock = 1024;
constexpr uint16_t kFsSizeExtMagic = 0xEF53;
constexpr uint32_t kExtIncompat64Bit = 0x80;
constexpr uint32_t kExtMaxLogBlockSize = 6;  // 64 KiB blocks, the largest ext4 allows

std::optional<uint64_t> ExtSize(std::span<const uint8_t> b) {
  if (Le<uint16_t>(b, kFsSizeExtSuperblock + 0x38) != kFsSizeExtMagic) return std::nullopt;
  std::optional<uint32_t> lo = Le<uint32_t>(b, kFsSizeExtSuperblock + 0x04);
  std::optional<uint32_t> log_block = Le<uint32_t>(b, kFsSizeExtSuperblock + 0x18);
  std::optional<uint32_t> incompat = Le<uint32_t>(b, kFsSizeExtSuperblock + 0x60);
  if (!lo || !log_block || !incompat || *log_block > kExtMaxLogBlockSize) return std::nullopt;
  uint64_t blocks = *lo;
  if (*incompat & kExtIncompat64Bit) {
    std::optional<uint32_t> hi = Le<uint32_t>(b, kFsSizeExtSuperblock + 0x150);
    if (!hi) return std::nullopt;
    blocks |= static_cast<uint64_t>(*hi) << 32;
  }
  return Product(blocks, uint64_t{1024} << *log_block);
}

// FAT boot sector (Microsoft FAT specification): BPB_BytsPerSec at 0x0B, BPB_TotSec16 at
// 0x13, BPB_TotSec32 at 0x20; the 0x55AA signature at 510.
std::optional<uint64_t> VfatSize(std::span<const uint8_t> b) {
  if (Le<uint16_t>(b, 510) != 0xAA55) return std::nullopt;
  std::optional<uint16_t> bytes_per_sector = Le<uint16_t>(b, 0x0B);
  std::optional<uint16_t> total16 = Le<uint16_t>(b, 0x13);
  std::optional<uint32_t> total32 = Le<uint32_t>(b, 0x20);
  if (!bytes_per_sector || !total16 || !total32) return std::nullopt;
  if (*bytes_per_sector < 512 || *bytes_per_sector > 4096 ||
      (*bytes_per_sector & (*bytes_per_sector - 1)) != 0) {
    return std::nullopt;
  }
  return Product(*total16 != 0 ? *total16 : *total32, *bytes_per_sector);
}

// Linux swap (include/linux/swap.h, union swap_header): "SWAPSPACE2" in the last 10 bytes of
// the first page; version (1) at byte 1024, last_page at 1028, in the writer's byte order. The
// page size is not recorded: it is wherever the magic is.
std::optional<uint64_t> SwapSize(std::span<const uint8_t> b) {
  constexpr std::array<uint64_t, 4> kPageSizes{4096, 8192, 16384, 65536};
  for (uint64_t page : kPageSizes) {
    if (!HasMagic(b, page - 10, "SWAPSPACE2")) continue;
    std::optional<uint32_t> version = Le<uint32_t>(b, 1024);
    std::optional<uint32_t> last_page = Le<uint32_t>(b, 1028);
    if (version != 1u) {  // written by a big-endian machine
      version = Be<uint32_t>(b, 1024);
      last_page = Be<uint32_t>(b, 1028);
    }
    if (version != 1u || !last_page) return std::nullopt;
    return Product(uint64_t{*last_page} + 1, page);
  }
  return std::nullopt;
}

// XFS (fs/xfs/libxfs/xfs_format.h, struct xfs_sb, big-endian): "XFSB" at 0, sb_blocksize at 4,
// sb_dblocks (data section blocks) at 8.
std::optional<uint64_t> XfsSize(std::span<const uint8_t> b) {
  if (!HasMagic(b, 0, "XFSB")) return std::nullopt;
  std::optional<uint32_t> block_size = Be<uint32_t>(b, 4);
  std::optional<uint64_t> data_blocks = Be<uint64_t>(b, 8);
  if (!block_size || !data_blocks) return std::nullopt;
  return Product(*data_blocks, *block_size);
}

// btrfs (fs/btrfs/ctree.h, struct btrfs_super_block at 64 KiB): magic "_BHRfS_M" at +0x40;
// dev_item at +0xC9 starts with devid (8 bytes) then total_bytes: the size of this device's
// part of the filesystem. (The superblock's own total_bytes at +0x70 sums all devices.)
constexpr size_t kBtrfsSuperblock = 64 * 1024;

std::optional<uint64_t> BtrfsSize(std::span<const uint8_t> b) {
  if (!HasMagic(b, kBtrfsSuperblock + 0x40, "_BHRfS_M")) return std::nullopt;
  std::optional<uint64_t> device_bytes = Le<uint64_t>(b, kBtrfsSuperblock + 0xC9 + 8);
  if (!device_bytes || *device_bytes == 0) return std::nullopt;
  return device_bytes;
}

}  // namespace

std::optional<uint64_t> FilesystemSizeBytes(std::string_view fs_type,
                                            std::span<const uint8_t> head) {
  if (fs_type == "ext2" || fs_type == "ext3" || fs_type == "ext4" || fs_type == "ext4dev") {
    return ExtSize(head);
  }
  if (fs_type == "vfat") return VfatSize(head);
  if (fs_type == "swap") return SwapSize(head);
  if (fs_type == "xfs") return XfsSize(head);
  if (fs_type == "btrfs") return BtrfsSize(head);
  return std::nullopt;
}

}  // namespace partalign
