// SPDX-License-Identifier: GPL-3.0-or-later
// BSD disklabels inside DOS slices and LDM's markers.
#include "partalign/boot/nested_label.h"

#include <gtest/gtest.h>

#include "support/boot_sectors.h"

namespace partalign {
namespace {

using test::Bytes;

TEST(NestedLabelTest, BsdLabelIsParsedWithItsAbsoluteOffsets) {
  const Bytes sector = test::BsdLabelSectorBytes({{1000, 63}, {0, 0}, {4000, 63}, {2000, 1063}});
  std::optional<BsdDisklabel> label = ParseBsdDisklabel(sector);
  ASSERT_TRUE(label);
  EXPECT_EQ(label->offset_in_sector, 0u);
  EXPECT_EQ(label->sector_size, 512u);
  ASSERT_EQ(label->partitions.size(), 4u);
  EXPECT_EQ(label->partitions[3], (BsdPartitionEntry{2000, 1063, 7}));
  EXPECT_EQ(label->size_bytes(), 148u + 4 * 16);
}

TEST(NestedLabelTest, BsdLabelAtSixtyFourIsFound) {
  Bytes sector(512, 0);
  const Bytes label = test::BsdLabelSectorBytes({{1000, 63}});
  std::copy(label.begin(), label.begin() + 148 + 16, sector.begin() + 64);
  std::optional<BsdDisklabel> parsed = ParseBsdDisklabel(sector);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->offset_in_sector, 64u);
}

TEST(NestedLabelTest, BadChecksumOrMagicIsNotALabel) {
  Bytes sector = test::BsdLabelSectorBytes({{1000, 63}});
  sector[150] ^= 1;
  EXPECT_FALSE(ParseBsdDisklabel(sector));
  sector = test::BsdLabelSectorBytes({{1000, 63}});
  sector[132] = 0;
  EXPECT_FALSE(ParseBsdDisklabel(sector));
  sector = test::BsdLabelSectorBytes({{1000, 63}});
  test::PutLe(sector, 138, 23, 2);  // more partitions than any BSD has
  EXPECT_FALSE(ParseBsdDisklabel(sector));
}

TEST(NestedLabelTest, ShiftMovesOnlyPartitionsInsideTheSliceAndRecomputesTheChecksum) {
  // Slice 63..63+8000; 'a' and 'c' inside, 'd' (whole disk, NetBSD) outside, 'b' unused.
  const Bytes sector =
      test::BsdLabelSectorBytes({{4000, 63}, {0, 0}, {8000, 63}, {100000, 0}, {3000, 4063}});
  std::optional<BsdDisklabel> label = ParseBsdDisklabel(sector);
  ASSERT_TRUE(label);
  std::optional<Bytes> shifted = ShiftBsdDisklabel(sector, *label, 63, 8000, 2048, 8000);
  ASSERT_TRUE(shifted);
  Bytes rewritten = sector;
  std::copy(shifted->begin(), shifted->end(), rewritten.begin());
  std::optional<BsdDisklabel> again = ParseBsdDisklabel(rewritten);
  ASSERT_TRUE(again);  // checksum right
  EXPECT_EQ(again->partitions[0].offset_sectors, 2048u);
  EXPECT_EQ(again->partitions[1].offset_sectors, 0u);
  EXPECT_EQ(again->partitions[2].offset_sectors, 2048u);
  EXPECT_EQ(again->partitions[3].offset_sectors, 0u);
  EXPECT_EQ(again->partitions[4].offset_sectors, 2048u + 4000);
}

TEST(NestedLabelTest, ShiftRefusesAPartitionThatWouldLeaveTheSlice) {
  const Bytes sector = test::BsdLabelSectorBytes({{8000, 63}});
  std::optional<BsdDisklabel> label = ParseBsdDisklabel(sector);
  ASSERT_TRUE(label);
  EXPECT_FALSE(ShiftBsdDisklabel(sector, *label, 63, 8000, 2048, 7000));
  EXPECT_FALSE(ShiftBsdDisklabel(sector, *label, 63, 8000, uint64_t{1} << 32, 8000));
}

TEST(NestedLabelTest, LdmMarkers) {
  EXPECT_TRUE(IsLdmPartitionType("0x42"));
  EXPECT_TRUE(IsLdmPartitionType("5808c8aa-7e8f-42e0-85d2-e1e90434cfb3"));
  EXPECT_TRUE(IsLdmPartitionType("AF9B60A0-1431-4F62-BC68-3311714A69AD"));
  EXPECT_FALSE(IsLdmPartitionType("0x07"));
  Bytes sector(512, 0);
  test::PutText(sector, 0, "PRIVHEAD");
  EXPECT_TRUE(IsLdmPrivateHeader(sector));
  sector[0] = 'p';
  EXPECT_FALSE(IsLdmPrivateHeader(sector));
  EXPECT_TRUE(IsBsdSliceType("0xa5"));
  EXPECT_TRUE(IsBsdSliceType("0xA9"));
  EXPECT_FALSE(IsBsdSliceType("0x83"));
}

}  // namespace
}  // namespace partalign
