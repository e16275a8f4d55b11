// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/topology/alignment.h"

#include <gtest/gtest.h>

#include "support/test_topology.h"

#include "partalign/util/units.h"

namespace partalign {
namespace {

Topology Make(uint64_t log, uint64_t phys, uint64_t min_io, uint64_t opt_io, uint64_t align) {
  return test::MakeTopology(log, phys, min_io, opt_io, align);
}

TEST(AlignmentArithmeticTest, UpDownGcdLcm) {
  EXPECT_EQ(AlignUp(1, 512), 512u);
  EXPECT_EQ(AlignUp(512, 512), 512u);
  EXPECT_EQ(AlignDown(1023, 512), 512u);
  EXPECT_EQ(Gcd(1048576, 196608), 65536u);
  EXPECT_EQ(Lcm(1048576, 196608), 3u * 1048576);
  EXPECT_EQ(Lcm(0, 4096), 0u);
}

TEST(AlignmentArithmeticTest, OffsetAlignmentRoundsAroundTheOffset) {
  Alignment a{.grain_bytes = kMiB, .offset_bytes = 3584};
  EXPECT_TRUE(a.IsAligned(kMiB + 3584));
  EXPECT_FALSE(a.IsAligned(kMiB));
  EXPECT_EQ(a.Up(kMiB), kMiB + 3584);
  EXPECT_EQ(a.Up(kMiB + 3584), kMiB + 3584);
  EXPECT_EQ(a.Down(2 * kMiB), kMiB + 3584);
  EXPECT_EQ(a.Up(0), 3584u);
}

struct Case {
  const char* name;
  Topology topology;
  uint64_t grain_bytes;
  uint64_t offset_bytes;
};

class RecommendTest : public testing::TestWithParam<Case> {};

TEST_P(RecommendTest, GrainAndOffset) {
  const Case& c = GetParam();
  AlignmentRecommendation r = RecommendAlignment(c.topology);
  EXPECT_EQ(r.alignment.grain_bytes, c.grain_bytes) << c.name;
  EXPECT_EQ(r.alignment.offset_bytes, c.offset_bytes) << c.name;
  EXPECT_FALSE(r.reasons.empty());
  // Whatever the rule, every recommended start is physically aligned.
  const Topology& t = c.topology;
  for (uint64_t k = 1; k < 4; ++k) {
    uint64_t start = r.alignment.offset_bytes + k * r.alignment.grain_bytes;
    EXPECT_EQ((start - t.alignment_offset) % t.physical_sector_size, 0u) << c.name;
    EXPECT_EQ(start % t.logical_sector_size, 0u) << c.name;
  }
}

INSTANTIATE_TEST_SUITE_P(
    WorkedExamples, RecommendTest,
    testing::Values(Case{"A_512n", Make(512, 512, 512, 0, 0), kMiB, 0},
                    Case{"B_512e", Make(512, 4096, 4096, 0, 0), kMiB, 0},
                    Case{"C_jmicron", Make(512, 4096, 4096, 33553920, 0), kMiB, 0},
                    Case{"D_opt_1MiB", Make(512, 4096, 4096, kMiB, 0), kMiB, 0},
                    Case{"E_raid0", Make(512, 512, 65536, 131072, 0), kMiB, 0},
                    Case{"F_xp_jumper", Make(512, 4096, 4096, 0, 3584), kMiB, 3584},
                    Case{"G_4kn", Make(4096, 4096, 4096, 0, 0), kMiB, 0},
                    Case{"H_raid5", Make(512, 4096, 65536, 196608, 0), 3 * kMiB, 0},
                    Case{"I_jmicron_512n", Make(512, 512, 512, 33553920, 0), kMiB, 0},
                    Case{"J_opt_4MiB", Make(512, 512, 512, 4 * kMiB, 0), 4 * kMiB, 0},
                    Case{"K_min_192k", Make(512, 512, 196608, 0, 0), 3 * kMiB, 0},
                    Case{"opt_not_multiple_of_phys", Make(512, 4096, 4096, 6144, 0), kMiB, 0},
                    Case{"opt_absurd", Make(512, 512, 512, 1ull << 30, 0), kMiB, 0}),
    [](const testing::TestParamInfo<Case>& param) { return std::string(param.param.name); });

TEST(RecommendTest, BridgeValueIsIgnoredWithAReason) {
  AlignmentRecommendation r = RecommendAlignment(Make(512, 4096, 4096, 33553920, 0));
  bool said = false;
  for (const std::string& s : r.reasons) said |= s.find("0xFFFF x 512") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(RecommendTest, UserGrainIsNeverBelowTheTopologyRequirement) {
  // 64 KiB requested on a RAID-5 with a 192 KiB stripe: raised to 192 KiB.
  AlignmentRecommendation r = RecommendAlignment(Make(512, 4096, 65536, 196608, 0), 64 * kKiB);
  EXPECT_EQ(r.alignment.grain_bytes, 196608u);
  // 4 MiB requested on a plain disk: kept.
  r = RecommendAlignment(Make(512, 4096, 4096, 0, 0), 4 * kMiB);
  EXPECT_EQ(r.alignment.grain_bytes, 4 * kMiB);
  // 512 bytes requested on a 4 KiB-physical disk: raised to 4 KiB.
  r = RecommendAlignment(Make(512, 4096, 4096, 0, 0), 512);
  EXPECT_EQ(r.alignment.grain_bytes, 4096u);
}

// Issue #11 item 7: "--assume min-io=18446744073709551615" gave a grain of
// 18446744073708503040 (the least common multiple with 1 MiB wrapped).
TEST(CheckedLcmTest, RefusesWhatDoesNotFit) {
  EXPECT_EQ(CheckedLcm(4096, 196608), 196608u);
  EXPECT_EQ(CheckedLcm(0, 5), 0u);
  EXPECT_EQ(CheckedLcm(kMiB, ~0ull), std::nullopt);
  EXPECT_EQ(CheckedLcm(1ull << 63, 3), std::nullopt);
  EXPECT_EQ(CheckedLcm(1ull << 63, 1ull << 62), 1ull << 63);
}

TEST(CheckGrainFitsTest, RefusesAGrainWhoseMultipleWithTheTopologyWraps) {
  // Both values are possible on their own (a 2 GiB physical sector, an odd 4 GiB - 512 minimum
  // I/O); with a 1 GiB - 512 grain their least common multiple is far above 2^64.
  const Topology t = Make(512, 1ull << 31, 4294966784, 0, 0);
  EXPECT_TRUE(CheckGrainFits(t));
  Status s = CheckGrainFits(t, kGiB - 512);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message,
            "--grain 1073741312 with physical sector 2147483648 and minimum I/O 4294966784 needs "
            "a grain larger than 2^64 bytes");
  EXPECT_TRUE(CheckGrainFits(Make(512, 4096, 65536, 196608, 0), kGiB));
}

TEST(RecommendTest, GrainIsAlwaysAMultipleOfEverythingItWasRaisedFor) {
  // min-io 4294966784 = 512 x 8388607: the grain must hold it whole, not a wrapped product.
  const Topology t = Make(512, 4096, 4294966784, 0, 0);
  ASSERT_TRUE(CheckGrainFits(t));
  AlignmentRecommendation r = RecommendAlignment(t);
  EXPECT_EQ(r.alignment.grain_bytes % 4294966784u, 0u);
  EXPECT_EQ(r.alignment.grain_bytes % kMiB, 0u);
}

}  // namespace
}  // namespace partalign
