// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/pvcreate_model.h"

#include <gtest/gtest.h>

#include "support/test_topology.h"

#include "partalign/tools/stack_tool_version.h"

namespace partalign {
namespace {

constexpr ToolVersion kLvm2_02_72{2, 2, 72, 3};
constexpr ToolVersion kLvm2_02_166{2, 2, 166, 3};
constexpr ToolVersion kLvm2_03_16{2, 3, 16, 3};  // Debian 12
constexpr ToolVersion kLvm2_03_31{2, 3, 31, 3};

Topology T(uint64_t phys, uint64_t min_io, uint64_t opt_io, uint64_t offset = 0) {
  return test::MakeTopology(512, phys, min_io, opt_io, offset, TopologyOrigin::kAssumed);
}

struct Case {
  const char* name;
  Topology topology;
  ToolVersion version;
  PvcreateOptions options;
  uint64_t pe_start;
};

class PvcreateModelTest : public testing::TestWithParam<Case> {};

TEST_P(PvcreateModelTest, PredictsPeStart) {
  const Case& c = GetParam();
  PvcreatePrediction p = PredictPvcreate(c.topology, c.version, c.options);
  ASSERT_TRUE(p.error.empty()) << p.error;
  EXPECT_EQ(p.pe_start_bytes, c.pe_start) << c.name << "\n" << testing::PrintToString(p.reasons);
}

// The 2.03.16 cases were measured with the real pvcreate on loop devices (notes §3 and the
// oracle test); the other eras follow set_pe_align() and the metadata-area rounding of each
// version's source.
INSTANTIATE_TEST_SUITE_P(
    Cases, PvcreateModelTest,
    testing::Values(
        Case{"plain disk", T(512, 512, 0), kLvm2_03_16, {}, 1048576},
        Case{"512e disk", T(4096, 4096, 0), kLvm2_03_16, {}, 1048576},
        Case{"JMicron bridge: pe_start = the bogus optimal I/O",
             T(4096, 4096, 33553920),
             kLvm2_03_16,
             {},
             33553920},
        Case{"JMicron bridge in 2016", T(4096, 4096, 33553920), kLvm2_02_166, {}, 33553920},
        Case{"JMicron bridge after 2.03.31", T(4096, 4096, 33553920), kLvm2_03_31, {}, 1048576},
        Case{"RAID-5 of 3 x 64 KiB", T(4096, 65536, 196608), kLvm2_03_16, {}, 1179648},
        Case{"RAID-5 of 3 x 64 KiB in 2016: small metadata area",
             T(4096, 65536, 196608),
             kLvm2_02_166,
             {},
             196608},
        Case{"768 KiB minimum I/O", T(512, 786432, 0), kLvm2_03_16, {}, 1572864},
        Case{"alignment offset 3584", T(4096, 4096, 0, 3584), kLvm2_03_16, {}, 1052160},
        Case{"--dataalignment 33553920b", T(512, 512, 0), kLvm2_03_16, {33553920, {}}, 33553920},
        Case{"--dataalignment 768k", T(512, 512, 0), kLvm2_03_16, {786432, {}}, 1572864},
        Case{"--dataalignmentoffset 3584b", T(512, 512, 0), kLvm2_03_16, {{}, 3584}, 1052160},
        Case{"--dataalignment 1m on the bridge",
             T(4096, 4096, 33553920),
             kLvm2_03_16,
             {1048576, {}},
             1048576},
        Case{"before 2.02.73: 64 KiB and 255 sectors of metadata",
             T(512, 512, 0),
             kLvm2_02_72,
             {},
             196608},
        Case{"before 2.02.73: the largest I/O size",
             T(4096, 4096, 33553920),
             kLvm2_02_72,
             {},
             33553920},
        Case{"2.03.31 keeps a 6 KiB optimal I/O (12 sectors pass its & 3 test)",
             T(512, 512, 6144),
             kLvm2_03_31,
             {},
             1050624}));

TEST(PvcreateModelTest2, NamesTheRuleThatDecided) {
  PvcreatePrediction p = PredictPvcreate(T(4096, 4096, 33553920), kLvm2_03_16);
  EXPECT_NE(p.key_reason.find("optimal I/O size 33553920"), std::string::npos) << p.key_reason;
  EXPECT_EQ(p.alignment_bytes, 33553920u);
  EXPECT_EQ(p.era, "lvm2 2.03.03-2.03.30");
}

TEST(PvcreateModelTest2, RefusesAnOffsetLargerThanTheAlignment) {
  PvcreatePrediction p = PredictPvcreate(T(512, 512, 0), kLvm2_03_16, {4096, 8192});
  EXPECT_NE(p.error.find("must not be less than"), std::string::npos);
}

TEST(PvcreateModelTest2, RefusesVersionsOlderThanModelled) {
  PvcreatePrediction p = PredictPvcreate(T(512, 512, 0), ToolVersion{2, 2, 40, 3});
  EXPECT_NE(p.error.find("older than the oldest modelled version 2.02.51"), std::string::npos)
      << p.error;
}

TEST(PvcreateModelTest2, PartitionAlignmentOffsetFollowsTheKernel) {
  // 512e disk whose LBA 0 is 3584 bytes into a physical block (alignment offset 3584).
  const Topology t = T(4096, 4096, 0, 3584);
  EXPECT_EQ(PartitionAlignmentOffset(t, 0), 3584u);
  EXPECT_EQ(PartitionAlignmentOffset(t, 1048576), 3584u);
  EXPECT_EQ(PartitionAlignmentOffset(t, 1048576 + 3584), 0u);  // sector 2055: aligned
  EXPECT_EQ(PartitionAlignmentOffset(T(4096, 4096, 0), 63 * 512), 512u);
  EXPECT_EQ(PartitionAlignmentOffset(T(512, 65536, 0), 2048 * 512), 0u);
}

}  // namespace
}  // namespace partalign
