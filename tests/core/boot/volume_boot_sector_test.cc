// SPDX-License-Identifier: GPL-3.0-or-later
// The boot sectors' parsers on sectors built by the specifications (tests/support/boot_sectors.h);
// tests/io/boot/volume_records_test.cc runs them on what mkntfs, mkfs.fat and mkfs.exfat write.
#include "partalign/boot/volume_boot_sector.h"

#include <gtest/gtest.h>

#include "support/boot_sectors.h"

namespace partalign {
namespace {

using test::Bytes;

TEST(VolumeBootSectorTest, NtfsFieldsAreRead) {
  std::optional<NtfsBootSector> ntfs = ParseNtfsBootSector(test::NtfsBootSectorBytes(63, 65535));
  ASSERT_TRUE(ntfs);
  EXPECT_EQ(ntfs->bytes_per_sector, 512u);
  EXPECT_EQ(ntfs->hidden_sectors, 63u);
  EXPECT_EQ(ntfs->number_of_sectors, 65535u);
}

TEST(VolumeBootSectorTest, NtfsIsRefusedWhenAFieldIsOutOfRange) {
  struct Case {
    const char* what;
    size_t at;
    uint8_t value;
  };
  for (const Case& c : {Case{"OEM id", 3, 'X'}, Case{"bytes per sector 768", 0x0C, 3},
                        Case{"sectors per cluster 3", 0x0D, 3}, Case{"FATs", 0x10, 2},
                        Case{"reserved sectors", 0x0E, 1}, Case{"MFT record size 3", 0x40, 3},
                        Case{"MFT at cluster 0", 0x30, 0}, Case{"no 55 AA", 510, 0}}) {
    Bytes b = test::NtfsBootSectorBytes(63, 65535);
    b[c.at] = c.value;
    EXPECT_FALSE(ParseNtfsBootSector(b)) << c.what;
  }
  EXPECT_FALSE(ParseNtfsBootSector(Bytes(100, 0)));
  Bytes zero_sectors = test::NtfsBootSectorBytes(63, 0);
  EXPECT_FALSE(ParseNtfsBootSector(zero_sectors));
}

TEST(VolumeBootSectorTest, NtfsClusterCodesAboveOneHundredTwentyEightAreShifts) {
  Bytes b = test::NtfsBootSectorBytes(2048, 1 << 20);
  b[0x0D] = 0xF4;  // 2^12 sectors: 2 MiB clusters, the largest ntfs-3g accepts
  EXPECT_TRUE(ParseNtfsBootSector(b));
  b[0x0D] = 0xF3;  // 4 MiB
  EXPECT_FALSE(ParseNtfsBootSector(b));
}

TEST(VolumeBootSectorTest, FatTypeFollowsTheClusterCount) {
  std::optional<FatBootSector> fat16 =
      ParseFatBootSector(test::FatBootSectorBytes(false, 63, 60000));
  ASSERT_TRUE(fat16);
  EXPECT_EQ(fat16->type, FatType::kFat16);
  EXPECT_EQ(fat16->hidden_sectors, 63u);
  EXPECT_EQ(fat16->backup_boot_sector, 0u);
  EXPECT_EQ(fat16->oem_name, "mkfs.fat");

  std::optional<FatBootSector> fat12 =
      ParseFatBootSector(test::FatBootSectorBytes(false, 63, 4000));
  ASSERT_TRUE(fat12);
  EXPECT_EQ(fat12->type, FatType::kFat12);

  std::optional<FatBootSector> fat32 =
      ParseFatBootSector(test::FatBootSectorBytes(true, 2048, 200000));
  ASSERT_TRUE(fat32);
  EXPECT_EQ(fat32->type, FatType::kFat32);
  EXPECT_EQ(fat32->hidden_sectors, 2048u);
  EXPECT_EQ(fat32->backup_boot_sector, 6u);
}

TEST(VolumeBootSectorTest, Fat32WithoutABackupSaysSo) {
  for (uint16_t none : {uint16_t{0}, uint16_t{0xFFFF}}) {
    std::optional<FatBootSector> fat =
        ParseFatBootSector(test::FatBootSectorBytes(true, 63, 200000, "x", none));
    ASSERT_TRUE(fat);
    EXPECT_EQ(fat->backup_boot_sector, 0u);
  }
  // A backup outside the reserved region is not a FAT32 boot sector partalign writes to.
  EXPECT_FALSE(ParseFatBootSector(test::FatBootSectorBytes(true, 63, 200000, "x", 40)));
}

TEST(VolumeBootSectorTest, FatRefusesNtfsExfatAndNonsense) {
  EXPECT_FALSE(ParseFatBootSector(test::NtfsBootSectorBytes(63, 65535)));
  EXPECT_FALSE(ParseFatBootSector(test::ExfatBootRegionBytes(63, 65536)));
  // Jump, bytes per sector 513, 3 sectors per cluster, no reserved sector, no FAT, media 0x11,
  // no 55 AA.
  for (auto [at, value] : {std::pair<size_t, uint8_t>{0, 0},
                           {0x0B, 1},
                           {0x0D, 3},
                           {0x0E, 0},
                           {0x10, 0},
                           {0x15, 0x11},
                           {510, 0}}) {
    Bytes b = test::FatBootSectorBytes(true, 63, 200000);
    b[at] = value;
    EXPECT_FALSE(ParseFatBootSector(b)) << "byte " << at;
  }
}

TEST(VolumeBootSectorTest, ExfatFieldsAndChecksum) {
  const Bytes region = test::ExfatBootRegionBytes(63, 65536);
  std::optional<ExfatBootSector> exfat = ParseExfatBootSector(region);
  ASSERT_TRUE(exfat);
  EXPECT_EQ(exfat->partition_offset, 63u);
  EXPECT_EQ(exfat->volume_length, 65536u);
  EXPECT_EQ(exfat->bytes_per_sector, 512u);
  EXPECT_EQ(ExfatBootChecksum(region, 512), test::ReferenceExfatChecksum(region, 512));
  // VolumeFlags and PercentInUse are outside the checksum; every other byte is inside.
  Bytes changed = region;
  changed[106] ^= 1;
  changed[112] = 99;
  EXPECT_EQ(ExfatBootChecksum(changed, 512), ExfatBootChecksum(region, 512));
  changed[64] ^= 1;
  EXPECT_NE(ExfatBootChecksum(changed, 512), ExfatBootChecksum(region, 512));
  Bytes later = region;
  later[10 * 512 + 7] ^= 0x40;
  EXPECT_NE(ExfatBootChecksum(later, 512), ExfatBootChecksum(region, 512));
  // Sector 11 (the checksum sector itself) is not covered.
  later = region;
  later[11 * 512] ^= 1;
  EXPECT_EQ(ExfatBootChecksum(later, 512), ExfatBootChecksum(region, 512));
}

TEST(VolumeBootSectorTest, ExfatRefusesWhatTheSpecificationForbids) {
  for (size_t at : {size_t{1}, size_t{3}, size_t{20}, size_t{108}, size_t{511}}) {
    Bytes b = test::ExfatBootRegionBytes(63, 65536);
    b[at] = at == 108 ? 13 : 0x11;
    EXPECT_FALSE(ParseExfatBootSector(b)) << "byte " << at;
  }
  EXPECT_FALSE(ParseExfatBootSector(test::ExfatBootRegionBytes(63, 100)));  // < 1 MiB
}

TEST(VolumeBootSectorTest, SyslinuxNames) {
  Bytes b(512, 0);
  b[0] = 0xEB;
  b[1] = 0x58;
  b[2] = 0x90;
  test::PutText(b, 3, "EXTLINUX");
  test::Sign(b);
  EXPECT_EQ(SyslinuxBootSectorName(b), "EXTLINUX");
  b[510] = 0;
  EXPECT_FALSE(SyslinuxBootSectorName(b));
  EXPECT_FALSE(SyslinuxBootSectorName(test::FatBootSectorBytes(true, 63, 200000)));
  EXPECT_EQ(ToString(FatType::kFat12), "FAT12");
}

}  // namespace
}  // namespace partalign
