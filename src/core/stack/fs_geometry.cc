// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/stack/fs_geometry.h"

#include "partalign/util/byte_order.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

constexpr uint64_t kMinBlock = 512;
constexpr uint64_t kMaxBlock = 64 * 1024;

bool PlausibleBlock(uint64_t size) {
  return IsPowerOfTwo(size) && size >= kMinBlock && size <= kMaxBlock;
}

constexpr size_t kExtSuperblock = 1024;
constexpr uint16_t kExtMagic = 0xEF53;

std::optional<FsGeometry> ExtGeometry(std::string_view type, std::span<const uint8_t> b) {
  if (Le<uint16_t>(b, kExtSuperblock + 0x38) != kExtMagic) return std::nullopt;
  std::optional<uint32_t> log_block = Le<uint32_t>(b, kExtSuperblock + 0x18);
  std::optional<uint16_t> stride = Le<uint16_t>(b, kExtSuperblock + 0x164);
  std::optional<uint32_t> width = Le<uint32_t>(b, kExtSuperblock + 0x170);
  if (!log_block || !stride || !width || *log_block > 6) return std::nullopt;
  FsGeometry g;
  g.type = std::string(type);
  g.block_size_bytes = uint64_t{1024} << *log_block;
  // 16- and 32-bit block counts times a block of at most 64 KiB: no overflow.
  g.stripe_unit_bytes = *stride * g.block_size_bytes;
  g.stripe_width_bytes = *width * g.block_size_bytes;
  return g;
}

std::optional<FsGeometry> XfsFsGeometry(std::span<const uint8_t> b) {
  if (!HasMagic(b, 0, "XFSB")) return std::nullopt;
  std::optional<uint32_t> block = Be<uint32_t>(b, 4);
  std::optional<uint16_t> sector = Be<uint16_t>(b, 102);
  std::optional<uint32_t> unit = Be<uint32_t>(b, 184);
  std::optional<uint32_t> width = Be<uint32_t>(b, 188);
  if (!block || !sector || !unit || !width || !PlausibleBlock(*block) || !PlausibleBlock(*sector)) {
    return std::nullopt;
  }
  FsGeometry g;
  g.type = "xfs";
  g.block_size_bytes = *block;
  g.sector_size_bytes = *sector;
  g.stripe_unit_bytes = uint64_t{*unit} * *block;
  g.stripe_width_bytes = uint64_t{*width} * *block;
  return g;
}

}  // namespace

std::optional<FsGeometry> ReadFsGeometry(std::string_view fs_type, std::span<const uint8_t> head) {
  if (fs_type == "ext2" || fs_type == "ext3" || fs_type == "ext4") {
    return ExtGeometry(fs_type, head);
  }
  if (fs_type == "xfs") return XfsFsGeometry(head);
  return std::nullopt;
}

std::optional<FsGeometry> DetectFsGeometry(std::span<const uint8_t> head) {
  if (Le<uint16_t>(head, kExtSuperblock + 0x38) == kExtMagic) {
    // s_feature_compat at +0x5C (HAS_JOURNAL 0x4), s_feature_incompat at +0x60 (EXTENTS 0x40,
    // 64BIT 0x80, FLEX_BG 0x200): what libblkid's ext probers decide by, simplified.
    const uint32_t compat = Le<uint32_t>(head, kExtSuperblock + 0x5C).value_or(0);
    const uint32_t incompat = Le<uint32_t>(head, kExtSuperblock + 0x60).value_or(0);
    const char* type = (incompat & (0x40 | 0x80 | 0x200)) ? "ext4"
                       : (compat & 0x4)                   ? "ext3"
                                                          : "ext2";
    return ExtGeometry(type, head);
  }
  return XfsFsGeometry(head);
}

}  // namespace partalign
