// SPDX-License-Identifier: GPL-3.0-or-later
// Filesystem sizes from synthetic superblocks laid out as each filesystem's header defines
// them (the device tests compare with real mkfs output).
#include "partalign/layout/fs_size.h"

#include <gtest/gtest.h>

#include <vector>

namespace partalign {
namespace {

std::vector<uint8_t> Head() { return std::vector<uint8_t>(kSuperblockProbeBytes, 0); }

void PutLe(std::vector<uint8_t>& b, size_t at, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}
void PutBe(std::vector<uint8_t>& b, size_t at, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * (bytes - 1 - i)));
}
void PutText(std::vector<uint8_t>& b, size_t at, std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) b[at + i] = static_cast<uint8_t>(s[i]);
}

TEST(FsSizeTest, Ext4BlocksTimesBlockSize) {
  std::vector<uint8_t> b = Head();
  PutLe(b, 1024 + 0x38, 0xEF53, 2);
  PutLe(b, 1024 + 0x04, 262144, 4);  // blocks
  PutLe(b, 1024 + 0x18, 2, 4);       // 1024 << 2 = 4096
  EXPECT_EQ(FilesystemSizeBytes("ext4", b), 262144ull * 4096);
  EXPECT_EQ(FilesystemSizeBytes("ext2", b), 262144ull * 4096);
  // The 64bit feature adds the high word.
  PutLe(b, 1024 + 0x60, 0x80, 4);
  PutLe(b, 1024 + 0x150, 1, 4);
  EXPECT_EQ(FilesystemSizeBytes("ext4", b), ((1ull << 32) + 262144) * 4096);
  // Without the magic, or with an impossible block size: unknown.
  std::vector<uint8_t> bad = b;
  bad[1024 + 0x38] = 0;
  EXPECT_FALSE(FilesystemSizeBytes("ext4", bad));
  bad = b;
  PutLe(bad, 1024 + 0x18, 40, 4);
  EXPECT_FALSE(FilesystemSizeBytes("ext4", bad));
}

TEST(FsSizeTest, VfatTotalSectorsTimesSectorSize) {
  std::vector<uint8_t> b = Head();
  PutLe(b, 510, 0xAA55, 2);
  PutLe(b, 0x0B, 512, 2);
  PutLe(b, 0x13, 0, 2);
  PutLe(b, 0x20, 1048576, 4);
  EXPECT_EQ(FilesystemSizeBytes("vfat", b), 1048576ull * 512);
  PutLe(b, 0x13, 20000, 2);  // the 16-bit count wins when set
  EXPECT_EQ(FilesystemSizeBytes("vfat", b), 20000ull * 512);
  PutLe(b, 0x0B, 1000, 2);  // not a power of two
  EXPECT_FALSE(FilesystemSizeBytes("vfat", b));
}

TEST(FsSizeTest, SwapPagesInEitherByteOrder) {
  std::vector<uint8_t> b = Head();
  PutText(b, 4096 - 10, "SWAPSPACE2");
  PutLe(b, 1024, 1, 4);
  PutLe(b, 1028, 16383, 4);
  EXPECT_EQ(FilesystemSizeBytes("swap", b), 16384ull * 4096);
  std::vector<uint8_t> be = Head();
  PutText(be, 65536 - 10, "SWAPSPACE2");  // 64 KiB pages
  PutBe(be, 1024, 1, 4);
  PutBe(be, 1028, 99, 4);
  EXPECT_EQ(FilesystemSizeBytes("swap", be), 100ull * 65536);
}

TEST(FsSizeTest, XfsAndBtrfs) {
  std::vector<uint8_t> x = Head();
  PutText(x, 0, "XFSB");
  PutBe(x, 4, 4096, 4);
  PutBe(x, 8, 81920, 8);
  EXPECT_EQ(FilesystemSizeBytes("xfs", x), 81920ull * 4096);
  std::vector<uint8_t> b = Head();
  PutText(b, 65536 + 0x40, "_BHRfS_M");
  PutLe(b, 65536 + 0x70, 3ull << 30, 8);      // all devices
  PutLe(b, 65536 + 0xC9 + 8, 1ull << 30, 8);  // this device
  EXPECT_EQ(FilesystemSizeBytes("btrfs", b), 1ull << 30);
}

TEST(FsSizeTest, UnknownTypesAndShortHeadsAreUnknown) {
  std::vector<uint8_t> b = Head();
  EXPECT_FALSE(FilesystemSizeBytes("crypto_LUKS", b));
  EXPECT_FALSE(FilesystemSizeBytes("", b));
  std::vector<uint8_t> shorter(100, 0xFF);
  EXPECT_FALSE(FilesystemSizeBytes("ext4", shorter));
  EXPECT_FALSE(FilesystemSizeBytes("btrfs", shorter));
}

}  // namespace
}  // namespace partalign
