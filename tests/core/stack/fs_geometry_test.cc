// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/stack/fs_geometry.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace partalign {
namespace {

// An ext4 superblock: 4 KiB blocks (log 2), stride and stripe width in blocks, extents on.
std::vector<uint8_t> Ext(uint32_t log_block, uint16_t stride, uint32_t width,
                         uint32_t incompat = 0x40) {
  std::vector<uint8_t> b(4096, 0);
  const uint16_t magic = 0xEF53;
  std::memcpy(b.data() + 1024 + 0x38, &magic, 2);
  std::memcpy(b.data() + 1024 + 0x18, &log_block, 4);
  std::memcpy(b.data() + 1024 + 0x60, &incompat, 4);
  std::memcpy(b.data() + 1024 + 0x164, &stride, 2);
  std::memcpy(b.data() + 1024 + 0x170, &width, 4);
  return b;
}

void PutBe32(std::vector<uint8_t>* b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) (*b)[at + i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}

std::vector<uint8_t> Xfs(uint32_t block, uint16_t sector, uint32_t unit, uint32_t width) {
  std::vector<uint8_t> b(4096, 0);
  std::memcpy(b.data(), "XFSB", 4);
  PutBe32(&b, 4, block);
  b[102] = static_cast<uint8_t>(sector >> 8);
  b[103] = static_cast<uint8_t>(sector);
  PutBe32(&b, 184, unit);
  PutBe32(&b, 188, width);
  return b;
}

TEST(FsGeometryTest, ReadsExt4StrideAndStripeWidth) {
  // mkfs.ext4 -b 4096 -E stride=2,stripe_width=4: 8 KiB units, 16 KiB wide.
  std::optional<FsGeometry> g = ReadFsGeometry("ext4", Ext(2, 2, 4));
  ASSERT_TRUE(g);
  EXPECT_EQ(g->block_size_bytes, 4096u);
  EXPECT_EQ(g->stripe_unit_bytes, 8192u);
  EXPECT_EQ(g->stripe_width_bytes, 16384u);
  EXPECT_FALSE(g->sector_size_bytes);
}

TEST(FsGeometryTest, ReadsXfsSunitAndSwidth) {
  // mkfs.xfs -d su=64k,sw=2: sb_unit 16 and sb_width 32 blocks of 4 KiB.
  std::optional<FsGeometry> g = ReadFsGeometry("xfs", Xfs(4096, 512, 16, 32));
  ASSERT_TRUE(g);
  EXPECT_EQ(g->stripe_unit_bytes, 65536u);
  EXPECT_EQ(g->stripe_width_bytes, 131072u);
  EXPECT_EQ(g->sector_size_bytes, 512u);
}

TEST(FsGeometryTest, NoStripeGeometryIsZero) {
  std::optional<FsGeometry> g = ReadFsGeometry("ext4", Ext(2, 0, 0));
  ASSERT_TRUE(g);
  EXPECT_EQ(g->stripe_unit_bytes, 0u);
  EXPECT_EQ(g->stripe_width_bytes, 0u);
}

TEST(FsGeometryTest, RefusesWhatNoMkfsWrites) {
  EXPECT_FALSE(ReadFsGeometry("ext4", Ext(7, 1, 1)));         // 128 KiB blocks
  EXPECT_FALSE(ReadFsGeometry("xfs", Xfs(3000, 512, 0, 0)));  // not a power of two
  EXPECT_FALSE(ReadFsGeometry("xfs", Xfs(4096, 256, 0, 0)));  // sectors below 512 bytes
  EXPECT_FALSE(ReadFsGeometry("xfs", Ext(2, 1, 1)));          // wrong magic
  EXPECT_FALSE(ReadFsGeometry("btrfs", Ext(2, 1, 1)));        // not a type read here
  std::vector<uint8_t> shortened = Ext(2, 2, 4);
  shortened.resize(1024 + 0x165);
  EXPECT_FALSE(ReadFsGeometry("ext4", shortened));
}

TEST(FsGeometryTest, DetectsTheTypeByMagic) {
  EXPECT_EQ(DetectFsGeometry(Ext(2, 2, 4))->type, "ext4");
  EXPECT_EQ(DetectFsGeometry(Ext(0, 0, 0, /*incompat=*/0))->type, "ext2");
  EXPECT_EQ(DetectFsGeometry(Xfs(4096, 4096, 2, 4))->type, "xfs");
  EXPECT_FALSE(DetectFsGeometry(std::vector<uint8_t>(4096, 0)));
}

}  // namespace
}  // namespace partalign
