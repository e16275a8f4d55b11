// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/stack/md_superblock.h"

#include <gtest/gtest.h>

#include <cstring>

#include "support/md_superblock_writer.h"

namespace partalign {
namespace {

using test::MakeMdSuperblock;
using test::MdMemberSpec;

TEST(MdSuperblockTest, ReadsARaid5Member) {
  MdMemberSpec spec;
  spec.role = 2;
  Result<MdSuperblock> sb = ParseMdSuperblock(MakeMdSuperblock(spec), MdSuperblockVersion::k1_2,
                                              4096, spec.member_size_bytes);
  ASSERT_TRUE(sb) << sb.error().message;
  EXPECT_EQ(sb->level, 5);
  EXPECT_EQ(sb->level_name(), "raid5");
  EXPECT_EQ(sb->chunk_bytes, 65536u);
  EXPECT_EQ(sb->raid_disks, 3u);
  EXPECT_EQ(sb->data_disks(), 2u);
  EXPECT_TRUE(sb->striped());
  EXPECT_EQ(sb->data_offset_bytes, 1048576u);
  EXPECT_EQ(sb->role, 2u);
  EXPECT_EQ(sb->array_name, "test:0");
}

TEST(MdSuperblockTest, KnowsWhereEachVersionLives) {
  EXPECT_EQ(MdSuperblockOffset(MdSuperblockVersion::k1_1, 1 << 20), 0u);
  EXPECT_EQ(MdSuperblockOffset(MdSuperblockVersion::k1_2, 1 << 20), 4096u);
  // 1.0: (size in sectors - 16) rounded down to 8 sectors: 100000 sectors -> 99984 sectors.
  EXPECT_EQ(MdSuperblockOffset(MdSuperblockVersion::k1_0, 100000ull * 512), 99984ull * 512);
  EXPECT_EQ(MdSuperblockOffset(MdSuperblockVersion::k1_0, 100003ull * 512), 99984ull * 512);
  EXPECT_FALSE(MdSuperblockOffset(MdSuperblockVersion::k1_0, 8192));
  EXPECT_FALSE(MdSuperblockOffset(MdSuperblockVersion::k1_2, 4096));
}

TEST(MdSuperblockTest, ReadsAMirrorAtTheEnd) {
  MdMemberSpec spec;
  spec.version = "1.0";
  spec.level = 1;
  spec.layout = 0;
  spec.chunk_bytes = 0;
  spec.raid_disks = 2;
  spec.data_offset_bytes = 0;
  const uint64_t at = test::MdSuperblockPosition(spec);
  Result<MdSuperblock> sb = ParseMdSuperblock(MakeMdSuperblock(spec), MdSuperblockVersion::k1_0, at,
                                              spec.member_size_bytes);
  ASSERT_TRUE(sb) << sb.error().message;
  EXPECT_FALSE(sb->striped());
  EXPECT_EQ(sb->data_disks(), 1u);
  EXPECT_EQ(sb->data_offset_bytes, 0u);
}

TEST(MdSuperblockTest, CountsDataDisksPerLevel) {
  MdSuperblock sb;
  sb.raid_disks = 6;
  sb.level = 0;
  EXPECT_EQ(sb.data_disks(), 6u);
  sb.level = 6;
  EXPECT_EQ(sb.data_disks(), 4u);
  sb.level = 10;
  sb.layout = 0x102;  // near 2, far 1
  EXPECT_EQ(sb.data_disks(), 3u);
  sb.level = -1;
  EXPECT_EQ(sb.level_name(), "linear");
}

class MdSuperblockDamageTest : public testing::Test {
 protected:
  Result<MdSuperblock> Parse(std::vector<uint8_t> bytes, uint64_t at = 4096) {
    return ParseMdSuperblock(bytes, MdSuperblockVersion::k1_2, at, spec_.member_size_bytes);
  }
  // Rewrites the checksum after an edit, so that only the edit is wrong.
  static void Resign(std::vector<uint8_t>* b) {
    uint32_t max_dev = 0;
    std::memcpy(&max_dev, b->data() + 220, 4);
    uint32_t csum = MdSuperblockChecksum(*b, max_dev);
    std::memcpy(b->data() + 216, &csum, 4);
  }
  MdMemberSpec spec_;
};

TEST_F(MdSuperblockDamageTest, RefusesABadChecksum) {
  std::vector<uint8_t> b = MakeMdSuperblock(spec_);
  b[128] ^= 8;  // data_offset
  Result<MdSuperblock> sb = Parse(b);
  ASSERT_FALSE(sb);
  EXPECT_NE(sb.error().message.find("checksum mismatch"), std::string::npos);
}

TEST_F(MdSuperblockDamageTest, RefusesASuperblockThatLivesElsewhere) {
  Result<MdSuperblock> sb = Parse(MakeMdSuperblock(spec_), 0);
  ASSERT_FALSE(sb);
  EXPECT_NE(sb.error().message.find("says it lies at byte 4096"), std::string::npos);
}

TEST_F(MdSuperblockDamageTest, RefusesDataPastTheMember) {
  std::vector<uint8_t> b = MakeMdSuperblock(spec_);
  const uint64_t sectors = spec_.member_size_bytes / 512;  // the whole member after 1 MiB
  std::memcpy(b.data() + 136, &sectors, 8);                // data_size
  Resign(&b);
  Result<MdSuperblock> sb = Parse(b);
  ASSERT_FALSE(sb);
  EXPECT_NE(sb.error().message.find("past the member's end"), std::string::npos);
}

TEST_F(MdSuperblockDamageTest, RefusesSizesThatOverflow) {
  std::vector<uint8_t> b = MakeMdSuperblock(spec_);
  const uint64_t huge = ~uint64_t{0} / 256;
  std::memcpy(b.data() + 136, &huge, 8);  // data_size: x 512 passes 2^64
  Resign(&b);
  Result<MdSuperblock> sb = Parse(b);
  ASSERT_FALSE(sb);
  EXPECT_NE(sb.error().message.find("overflows"), std::string::npos);
}

TEST_F(MdSuperblockDamageTest, RefusesTooManyRoles) {
  std::vector<uint8_t> b = MakeMdSuperblock(spec_);
  const uint32_t max_dev = 5000;
  std::memcpy(b.data() + 220, &max_dev, 4);
  Result<MdSuperblock> sb = Parse(b);
  ASSERT_FALSE(sb);
  EXPECT_NE(sb.error().message.find("role table"), std::string::npos);
}

TEST_F(MdSuperblockDamageTest, RefusesAStripedLevelWithoutChunk) {
  spec_.chunk_bytes = 0;
  Result<MdSuperblock> sb = Parse(MakeMdSuperblock(spec_));
  ASSERT_FALSE(sb);
  EXPECT_NE(sb.error().message.find("chunk size of 0"), std::string::npos);
}

TEST_F(MdSuperblockDamageTest, RefusesShortInputAndOtherMagic) {
  std::vector<uint8_t> b = MakeMdSuperblock(spec_);
  b.resize(300);  // the roles are cut
  EXPECT_FALSE(Parse(b));
  EXPECT_FALSE(Parse(std::vector<uint8_t>(4096, 0)));
}

TEST_F(MdSuperblockDamageTest, ASpareHasNoRole) {
  std::vector<uint8_t> b = MakeMdSuperblock(spec_);
  const uint16_t spare = 0xffff;
  std::memcpy(b.data() + 256, &spare, 2);  // dev_roles[dev_number 0]
  Resign(&b);
  Result<MdSuperblock> sb = Parse(b);
  ASSERT_TRUE(sb) << sb.error().message;
  EXPECT_FALSE(sb->role);
}

}  // namespace
}  // namespace partalign
