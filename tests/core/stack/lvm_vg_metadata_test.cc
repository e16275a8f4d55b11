// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/stack/lvm_vg_metadata.h"

#include <gtest/gtest.h>

#include "core/stack/lvm_fixture.h"

namespace partalign {
namespace {

TEST(LvmVgMetadataTest, ReadsTheVgLvm2Wrote) {
  Result<LvmVolumeGroup> vg = ParseLvmVgMetadata(test::kRealVgText);
  ASSERT_TRUE(vg) << vg.error().message;
  EXPECT_EQ(vg->name, "vgfix");
  EXPECT_EQ(vg->extent_size_bytes, 4u << 20);
  ASSERT_EQ(vg->physical_volumes.size(), 2u);
  EXPECT_EQ(vg->physical_volumes[0].name, "pv0");
  EXPECT_EQ(vg->physical_volumes[0].pe_start_bytes, 1048576u);
  EXPECT_EQ(vg->physical_volumes[0].uuid.size(), 38u);  // 32 characters and 6 dashes
  ASSERT_EQ(vg->logical_volumes.size(), 2u);
  const LvmLogicalVolume& lin = vg->logical_volumes[0];
  EXPECT_EQ(lin.name, "lin");
  ASSERT_EQ(lin.segments.size(), 1u);
  EXPECT_EQ(lin.segments[0].type, "striped");
  EXPECT_EQ(lin.segments[0].stripe_count, 1u);
  EXPECT_EQ(lin.segments[0].extent_count, 2u);
  ASSERT_EQ(lin.segments[0].stripes.size(), 1u);
  EXPECT_EQ(lin.segments[0].stripes[0].pv_name, "pv0");
  const LvmLogicalVolume& str = vg->logical_volumes[1];
  ASSERT_EQ(str.segments.size(), 1u);
  EXPECT_EQ(str.segments[0].stripe_count, 2u);
  EXPECT_EQ(str.segments[0].stripe_size_bytes, 8192u);
  ASSERT_EQ(str.segments[0].stripes.size(), 2u);
  EXPECT_EQ(str.segments[0].stripes[0].pv_name, "pv0");
  EXPECT_EQ(str.segments[0].stripes[0].start_extent, 2u);
  EXPECT_EQ(str.segments[0].stripes[1].pv_name, "pv1");
  EXPECT_EQ(str.segments[0].stripes[1].start_extent, 0u);
  EXPECT_NE(vg->FindPvByUuid(vg->physical_volumes[1].uuid), nullptr);
  EXPECT_EQ(vg->FindPvByUuid("nope"), nullptr);
}

constexpr std::string_view kSmall = R"(# comment
vg1 {
  id = "a\"b"
  seqno = 7
  extent_size = 2048    # 1 MiB
  physical_volumes {
    pv0 { id = "x" device = "/dev/sda2" pe_start = 67584 pe_count = 10 }
  }
  logical_volumes {
    lv { segment_count = 2
      segment2 { start_extent = 5 extent_count = 5 type = "striped" stripe_count = 1
                 stripes = [ "pv0", 0 ] }
      segment1 { start_extent = 0 extent_count = 5 type = "striped" stripe_count = 1
                 stripes = [ "pv0", 5 ] }
    }
    pool { segment1 { start_extent = 0 extent_count = 1 type = "thin-pool" } }
  }
}
contents = "Text Format Volume Group"
version = 1
)";

TEST(LvmVgMetadataTest, ReadsSegmentsInNumericOrderAndTypesWithoutStripes) {
  Result<LvmVolumeGroup> vg = ParseLvmVgMetadata(kSmall);
  ASSERT_TRUE(vg) << vg.error().message;
  EXPECT_EQ(vg->seqno, 7u);
  EXPECT_EQ(vg->physical_volumes[0].pe_start_bytes, 67584u * 512);
  ASSERT_EQ(vg->logical_volumes.size(), 2u);
  const LvmLogicalVolume& lv = vg->logical_volumes[0];
  ASSERT_EQ(lv.segments.size(), 2u);
  EXPECT_EQ(lv.segments[0].start_extent, 0u);
  EXPECT_EQ(lv.segments[1].start_extent, 5u);
  const LvmLogicalVolume& pool = vg->logical_volumes[1];
  EXPECT_EQ(pool.segments[0].type, "thin-pool");
  EXPECT_TRUE(pool.segments[0].stripes.empty());
}

struct BadCase {
  const char* text;
  const char* error;
};

class LvmVgMetadataBadTest : public testing::TestWithParam<BadCase> {};

TEST_P(LvmVgMetadataBadTest, RefusesWithAReason) {
  Result<LvmVolumeGroup> vg = ParseLvmVgMetadata(GetParam().text);
  ASSERT_FALSE(vg) << GetParam().text;
  EXPECT_NE(vg.error().message.find(GetParam().error), std::string::npos) << vg.error().message;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LvmVgMetadataBadTest,
    testing::Values(
        BadCase{"", "no volume group"},
        BadCase{"a { seqno = 1 extent_size = 8 }  b { seqno = 1 extent_size = 8 }",
                "more than one volume group"},
        BadCase{"vg { seqno = 1 extent_size = 0 }", "extent size of 0"},
        BadCase{"vg { seqno = 1 }", "has no extent_size"},
        BadCase{"vg { seqno = -1 extent_size = 8 }", "not a non-negative integer"},
        BadCase{"vg { seqno = 1 extent_size = 36028797018963968 }", "overflows"},
        BadCase{"vg { seqno = 1 extent_size = 8 ", "not closed"},
        BadCase{"vg { seqno = 1 extent_size = 8 }}", "'}' without a section"},
        BadCase{"vg { seqno 1 }", "neither '=' nor '{'"},
        BadCase{"vg { id = \"abc }", "string is not closed"},
        BadCase{"vg { x = [1, 2 }", "neither ',' nor ']'"},
        BadCase{"vg { x = 12ab }", "is not a number"},
        BadCase{"a{b{c{d{e{f{g{h{i{j{ }}}}}}}}}}", "nested too deep"},
        BadCase{"vg { seqno = 1 extent_size = 8 logical_volumes { lv { segment1 { start_extent = "
                "0 extent_count = 2 type = \"striped\" stripe_count = 2 stripes = [\"pv0\", 0] "
                "} } } }",
                "does not list 2 (pv, extent) pairs"},
        BadCase{"vg { seqno = 1 extent_size = 8 logical_volumes { lv { segment1 { start_extent = "
                "0 extent_count = 2 type = \"striped\" stripe_count = 1 stripes = [\"pv9\", 0] "
                "} } } }",
                "refers to 'pv9'"},
        BadCase{"vg { seqno = 1 extent_size = 8 logical_volumes { lv { segment1 { "
                "extent_count = 2 type = \"striped\" } } } }",
                "has no start_extent"}));

TEST(LvmVgMetadataTest, RefusesTextOverTheLimit) {
  std::string huge(kLvmMaxMetadataTextBytes + 1, ' ');
  Result<LvmVolumeGroup> vg = ParseLvmVgMetadata(huge);
  ASSERT_FALSE(vg);
  EXPECT_NE(vg.error().message.find("larger than"), std::string::npos);
}

}  // namespace
}  // namespace partalign
