// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/luks_format_model.h"

#include <gtest/gtest.h>

#include "support/test_topology.h"

namespace partalign {
namespace {

constexpr ToolVersion kCryptsetup2_3_3{2, 3, 3, 3};
constexpr ToolVersion kCryptsetup2_6_1{2, 6, 1, 3};  // Debian 12

Topology T(uint64_t phys, uint64_t min_io, uint64_t opt_io, uint64_t offset = 0) {
  return test::MakeTopology(512, phys, min_io, opt_io, offset, TopologyOrigin::kAssumed);
}

struct Case {
  const char* name;
  Topology topology;
  ToolVersion version;
  LuksType type;
  uint64_t data_offset;
};

class LuksFormatModelTest : public testing::TestWithParam<Case> {};

TEST_P(LuksFormatModelTest, PredictsThePayloadOffset) {
  const Case& c = GetParam();
  LuksFormatPrediction p = PredictLuksFormat(c.topology, c.version, c.type);
  ASSERT_TRUE(p.error.empty()) << p.error;
  EXPECT_EQ(p.data_offset_bytes, c.data_offset) << c.name << "\n"
                                                << testing::PrintToString(p.reasons);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LuksFormatModelTest,
    testing::Values(Case{"LUKS2 default", T(512, 512, 0), kCryptsetup2_6_1, LuksType::kLuks2,
                         16u << 20},
                    Case{"LUKS1 default: 4040 sectors rounded to 1 MiB", T(512, 512, 0),
                         kCryptsetup2_6_1, LuksType::kLuks1, 2u << 20},
                    Case{"JMicron bridge: not a multiple of the minimum I/O, ignored",
                         T(4096, 4096, 33553920), kCryptsetup2_6_1, LuksType::kLuks2, 16u << 20},
                    Case{"33553920 over 512-byte minimum I/O: ignored since 2.3.4",
                         T(512, 512, 33553920), kCryptsetup2_6_1, LuksType::kLuks2, 16u << 20},
                    Case{"33553920 over 512-byte minimum I/O: taken before 2.3.4",
                         T(512, 512, 33553920), kCryptsetup2_3_3, LuksType::kLuks2, 33553920},
                    Case{"RAID-5 stripe 196608", T(4096, 65536, 196608), kCryptsetup2_6_1,
                         LuksType::kLuks2, 16908288},
                    Case{"RAID-5 stripe 196608, LUKS1", T(4096, 65536, 196608), kCryptsetup2_6_1,
                         LuksType::kLuks1, 2162688},
                    Case{"alignment offset 3584", T(4096, 4096, 0, 3584), kCryptsetup2_6_1,
                         LuksType::kLuks2, (16u << 20) + 3584}));

TEST(LuksFormatModelTest2, RefusesVersionsOlderThanModelled) {
  LuksFormatPrediction p = PredictLuksFormat(T(512, 512, 0), {2, 0, 6, 3}, LuksType::kLuks2);
  EXPECT_NE(p.error.find("older than the oldest modelled version"), std::string::npos);
}

TEST(LuksFormatModelTest2, QuotesCryptsetupsOwnWarning) {
  LuksFormatPrediction p =
      PredictLuksFormat(T(4096, 4096, 33553920), kCryptsetup2_6_1, LuksType::kLuks2);
  EXPECT_NE(testing::PrintToString(p.reasons).find("Ignoring bogus optimal-io size"),
            std::string::npos);
}

}  // namespace
}  // namespace partalign
