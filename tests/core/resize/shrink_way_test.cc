// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/resize/shrink_way.h"

#include <gtest/gtest.h>

namespace partalign {
namespace {

TEST(ShrinkWayTest, EachFilesystemHasItsToolOrAReason) {
  EXPECT_EQ(ShrinkWayFor("ext2").tool, ShrinkTool::kResize2fs);
  EXPECT_EQ(ShrinkWayFor("ext3").tool, ShrinkTool::kResize2fs);
  EXPECT_EQ(ShrinkWayFor("ext4").tool, ShrinkTool::kResize2fs);
  EXPECT_EQ(ShrinkWayFor("ntfs").tool, ShrinkTool::kNtfsresize);
  EXPECT_EQ(ShrinkWayFor("vfat").tool, ShrinkTool::kFatResize);
  EXPECT_EQ(ShrinkWayFor("swap").tool, ShrinkTool::kMkswap);
  for (const char* type : {"xfs", "btrfs", "swsuspend", "crypto_LUKS", "LVM2_member", "", "zfs"}) {
    const ShrinkWay way = ShrinkWayFor(type);
    EXPECT_FALSE(way.tool) << type;
    EXPECT_FALSE(way.reason.empty()) << type;
  }
  EXPECT_NE(ShrinkWayFor("xfs").reason.find("cannot be shrunk"), std::string::npos);
  EXPECT_NE(ShrinkWayFor("swsuspend").reason.find("hibernation"), std::string::npos);
}

TEST(ShrinkWayTest, ToolNamesRoundTrip) {
  for (ShrinkTool tool : {ShrinkTool::kResize2fs, ShrinkTool::kNtfsresize, ShrinkTool::kFatResize,
                          ShrinkTool::kMkswap}) {
    EXPECT_EQ(ShrinkToolFromString(ToString(tool)), tool);
  }
  EXPECT_FALSE(ShrinkToolFromString("fatresize"));
}

TEST(ShrinkWayTest, NtfsLeavesTheLastSectorForItsBackupBootSector) {
  EXPECT_EQ(ShrunkContentsBytes(ShrinkTool::kNtfsresize, 1 << 20, 512), (1u << 20) - 512);
  EXPECT_EQ(ShrunkContentsBytes(ShrinkTool::kNtfsresize, 1 << 20, 4096), (1u << 20) - 4096);
  EXPECT_EQ(ShrunkContentsBytes(ShrinkTool::kResize2fs, 1 << 20, 512), 1u << 20);
  EXPECT_EQ(ShrunkContentsBytes(ShrinkTool::kMkswap, 1 << 20, 512), 1u << 20);
}

TEST(ShrinkWayTest, TheFloorKeepsTheUsedBytesAndAReserve) {
  // 100 MiB used of 1 GiB: 100 MiB and a twentieth of the filesystem.
  EXPECT_EQ(ShrinkFloorBytes(ShrinkTool::kResize2fs, 100 * kMiB, 1024 * kMiB),
            100 * kMiB + 1024 * kMiB / 20);
  // A small filesystem: the 16 MiB reserve, never more than the filesystem.
  EXPECT_EQ(ShrinkFloorBytes(ShrinkTool::kFatResize, 10 * kMiB, 64 * kMiB), 26 * kMiB);
  EXPECT_EQ(ShrinkFloorBytes(ShrinkTool::kNtfsresize, 60 * kMiB, 64 * kMiB), 64 * kMiB);
  // Swap uses nothing worth keeping but its header.
  EXPECT_EQ(ShrinkFloorBytes(ShrinkTool::kMkswap, 64 * kKiB, 512 * kMiB), kMinSwapBytes);
}

// A FAT boot sector with these BPB fields (Microsoft's FAT specification).
std::vector<uint8_t> FatBoot(uint16_t reserved, uint16_t root_entries, uint16_t fat16,
                             uint32_t fat32, uint32_t total, uint8_t per_cluster) {
  std::vector<uint8_t> b(512, 0);
  auto put16 = [&](size_t at, uint16_t v) {
    b[at] = static_cast<uint8_t>(v);
    b[at + 1] = static_cast<uint8_t>(v >> 8);
  };
  auto put32 = [&](size_t at, uint32_t v) {
    put16(at, static_cast<uint16_t>(v));
    put16(at + 2, static_cast<uint16_t>(v >> 16));
  };
  put16(0x0B, 512);
  b[0x0D] = per_cluster;
  put16(0x0E, reserved);
  b[0x10] = 2;
  put16(0x11, root_entries);
  put16(0x16, fat16);
  put32(0x20, total);
  put32(0x24, fat32);
  b[510] = 0x55;
  b[511] = 0xAA;
  return b;
}

TEST(ShrinkWayTest, FatKeepsItsTypesClusterCount) {
  // FAT32: 65525 clusters after the reserved sectors and both FATs.
  EXPECT_EQ(FatTypeFloorBytes(FatBoot(32, 0, 0, 600, 200000, 1)), (32 + 1200 + 65525) * 512u);
  // FAT16: 4085 clusters of 4 sectors after the root directory (512 entries: 32 sectors).
  EXPECT_EQ(FatTypeFloorBytes(FatBoot(4, 512, 64, 0, 60000, 4)), (4 + 128 + 32 + 4085 * 4) * 512u);
  std::vector<uint8_t> no_signature = FatBoot(32, 0, 0, 600, 200000, 1);
  no_signature[510] = 0;
  EXPECT_FALSE(FatTypeFloorBytes(no_signature));
  EXPECT_FALSE(FatTypeFloorBytes(FatBoot(32, 0, 0, 600, 1000, 1)));    // FATs past the end
  EXPECT_FALSE(FatTypeFloorBytes(FatBoot(32, 0, 0, 600, 200000, 3)));  // 3 sectors a cluster
  EXPECT_FALSE(FatTypeFloorBytes(std::vector<uint8_t>(100, 0)));
}

TEST(ShrinkWayTest, AResizedFatBootSectorKeepsItsNameAndPlace) {
  std::vector<uint8_t> old = FatBoot(32, 0, 0, 600, 200000, 8);
  std::copy_n("mkfs.fat", 8, old.begin() + 3);
  old[0x1C] = 63;                                      // hidden sectors
  std::copy_n("DATA       ", 11, old.begin() + 0x47);  // the volume label
  std::vector<uint8_t> resized = FatBoot(38, 0, 0, 590, 190000, 8);
  std::copy_n("MSWIN4.1", 8, resized.begin() + 3);
  std::copy_n("NO NAME    ", 11, resized.begin() + 0x47);
  resized[0x2C] = 9;  // the root cluster moved
  const std::vector<uint8_t> merged = FatBootSectorAfterResize(old, resized);
  ASSERT_EQ(merged.size(), 512u);
  EXPECT_EQ(std::string(merged.begin() + 3, merged.begin() + 11), "mkfs.fat");
  EXPECT_EQ(merged[0x1C], 63);
  EXPECT_EQ(std::string(merged.begin() + 0x47, merged.begin() + 0x52), "DATA       ");
  EXPECT_EQ(merged[0x0E], 38);  // reserved sectors
  EXPECT_EQ(merged[0x24] | merged[0x25] << 8, 590);
  EXPECT_EQ(merged[0x20] | merged[0x21] << 8 | merged[0x22] << 16, 190000);
  EXPECT_EQ(merged[0x2C], 9);
}

TEST(ShrinkWayTest, ChangesAreSectorAlignedSortedAndMerged) {
  const std::vector<ByteExtent> changes = {{5000, 10}, {100, 1}, {600, 100}, {1 << 20, 512}};
  EXPECT_EQ(CoalesceChanges(changes, 512, 0, 100),
            (std::vector<ByteExtent>{{0, 1024}, {4608, 512}, {1 << 20, 512}}));
  EXPECT_EQ(CoalesceChanges(changes, 512, 4096, 100),
            (std::vector<ByteExtent>{{0, 5120}, {1 << 20, 512}}));
  // Too many ranges: the gap grows until they fit, and every change stays covered.
  std::vector<ByteExtent> many;
  for (uint64_t i = 0; i < 1000; ++i) many.push_back({i * 100000, 1});
  const std::vector<ByteExtent> merged = CoalesceChanges(many, 512, 4096, 10);
  EXPECT_LE(merged.size(), 10u);
  for (const ByteExtent& c : many) {
    bool covered = false;
    for (const ByteExtent& m : merged)
      covered |= m.offset_bytes <= c.offset_bytes && c.end() <= m.end();
    EXPECT_TRUE(covered) << c.offset_bytes;
  }
  EXPECT_TRUE(CoalesceChanges({}, 512, 4096, 10).empty());
}

}  // namespace
}  // namespace partalign
