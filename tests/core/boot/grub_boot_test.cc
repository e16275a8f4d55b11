// SPDX-License-Identifier: GPL-3.0-or-later
// GRUB's boot.img and diskboot.img parsers on sectors laid out as GRUB's boot.S, diskboot.S and
// setup.c write them; tests/io/boot/qemu_boot_test.cc runs them on grub-mkimage's output and
// boots the result.
#include "partalign/boot/grub_boot.h"

#include <gtest/gtest.h>

#include "support/boot_sectors.h"

namespace partalign {
namespace {

using test::Bytes;

TEST(GrubBootTest, BootImageGivesCoreImageSector) {
  std::optional<GrubBootImage> boot = ParseGrubBootImage(test::GrubBootImageBytes(34));
  ASSERT_TRUE(boot);
  EXPECT_EQ(boot->generation, GrubGeneration::kGrub2);
  EXPECT_EQ(boot->next_sector, 34u);
}

TEST(GrubBootTest, LegacyStage1IsRecognisedByItsJump) {
  Bytes b = test::GrubBootImageBytes(0);
  b[1] = 0x48;
  test::PutLe(b, 0x44, 1, 4);
  std::optional<GrubBootImage> boot = ParseGrubBootImage(b);
  ASSERT_TRUE(boot);
  EXPECT_EQ(boot->generation, GrubGeneration::kLegacy);
  EXPECT_EQ(boot->next_sector, 1u);
}

TEST(GrubBootTest, OtherBootCodeIsNotGrub) {
  Bytes b = test::GrubBootImageBytes(1);
  b[1] = 0x3C;
  EXPECT_FALSE(ParseGrubBootImage(b));
  b = test::GrubBootImageBytes(1);
  b[0x180] = 'g';  // "gRUB "
  EXPECT_FALSE(ParseGrubBootImage(b));
  EXPECT_FALSE(ParseGrubBootImage(Bytes(512, 0)));
  // The messages past the partition table (0x1B8) are not boot code.
  b = Bytes(512, 0);
  b[0] = 0xEB;
  b[1] = 0x63;
  test::PutText(b, 0x1C0, std::string_view("GRUB \0Geom\0Hard Disk\0Read\0 Error", 32));
  EXPECT_FALSE(ParseGrubBootImage(b));
}

TEST(GrubBootTest, DiskbootBlocklistInLoadOrder) {
  std::optional<GrubDiskboot> d = ParseGrubDiskboot(test::GrubDiskbootBytes({{35, 52}, {900, 3}}));
  ASSERT_TRUE(d);
  ASSERT_EQ(d->blocks.size(), 2u);
  EXPECT_EQ(d->blocks[0], (GrubBlock{35, 52, 0x820, 0x1F4}));
  EXPECT_EQ(d->blocks[1], (GrubBlock{900, 3, 0x820 + 52 * 0x20, 0x1E8}));
}

TEST(GrubBootTest, DiskbootRefusesWhatGrubSetupDoesNotWrite) {
  // A segment out of sequence, a block at sector 0, no block at all, no messages.
  Bytes b = test::GrubDiskbootBytes({{35, 52}, {900, 3}});
  test::PutLe(b, 0x1E8 + 10, 0x1000, 2);
  EXPECT_FALSE(ParseGrubDiskboot(b));
  EXPECT_FALSE(ParseGrubDiskboot(test::GrubDiskbootBytes({{0, 52}})));
  EXPECT_FALSE(ParseGrubDiskboot(test::GrubDiskbootBytes({})));
  b = test::GrubDiskbootBytes({{35, 52}});
  b[0x11B] = 'L';
  EXPECT_FALSE(ParseGrubDiskboot(b));
}

TEST(GrubBootTest, DiskbootBlocklistStopsAtTheCode) {
  // Entries all the way down into the messages: the parser stops before the code and the
  // blocks it kept are consecutive.
  std::vector<test::GrubBlockSpec> many;
  for (uint64_t i = 0; i < 40; ++i) many.push_back({100 + i * 10, 1});
  Bytes b = test::GrubDiskbootBytes({});
  uint16_t segment = 0x820;
  for (size_t i = 0; i < many.size(); ++i) {
    const size_t at = 0x1F4 - 12 * i;
    if (at < 0x11B + 30) break;
    test::PutLe(b, at, many[i].start, 8);
    test::PutLe(b, at + 8, 1, 2);
    test::PutLe(b, at + 10, segment, 2);
    segment += 0x20;
  }
  std::optional<GrubDiskboot> d = ParseGrubDiskboot(b);
  ASSERT_TRUE(d);
  for (const GrubBlock& blk : d->blocks) EXPECT_GE(blk.offset_in_sector, 0x11Bu + 30);
}

}  // namespace
}  // namespace partalign
