// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/installers/blivet_model.h"

#include <gtest/gtest.h>

#include "core/tools/section6_cases.h"
#include "partalign/tools/installers/installer_version.h"
#include "partalign/tools/parted_model.h"

namespace partalign {
namespace {

using test::MakeTopology;

// The topology matrix: alignment-heuristics.md §6 rows A-K, the bridge on 512/512, 4Kn with a
// 4 MiB optimal I/O, and an image file (no topology).
std::vector<Topology> Matrix() {
  std::vector<Topology> m;
  for (const test::Section6Row& r :
       {test::kRowA, test::kRowB, test::kRowC, test::kRowD, test::kRowE, test::kRowF, test::kRowG,
        test::kRowH, test::kRowI, test::kRowJ, test::kRowK}) {
    m.push_back(r.topology());
  }
  m.push_back(MakeTopology(4096, 4096, 4096, 4194304, 0));
  m.push_back(MakeTopology(512, 512, 512, 0, 0, TopologyOrigin::kDefault));
  return m;
}

TEST(BlivetModelTest, AlignmentEqualsThePartedOptimumOnTheWholeMatrix) {
  const ToolVersion blivet = NewestKnownInstallerVersion(Installer::kBlivet);
  for (const ToolVersion& parted : {ToolVersion{2, 4, 0, 2}, ToolVersion{3, 2, 0, 2},
                                    ToolVersion{3, 5, 0, 2}, ToolVersion{3, 6, 0, 2}}) {
    for (const Topology& t : Matrix()) {
      Result<PartedModel> m = MakePartedModel(t, parted);
      ASSERT_TRUE(m);
      Result<BlivetPrediction> b = PredictBlivet(t, blivet, parted, LabelType::kGpt, 100ull << 20);
      ASSERT_TRUE(b) << b.error().message;
      SCOPED_TRACE(testing::Message()
                   << "parted " << parted.ToString() << " lbs " << t.logical_sector_size << " opt "
                   << t.optimal_io_size << " off " << t.alignment_offset);
      EXPECT_EQ(b->optimal, m->optimum);
      EXPECT_EQ(b->minimal, m->minimum);
      // The first start of a partition larger than the grain lies on parted's optimum.
      ASSERT_TRUE(b->first_start);
      EXPECT_TRUE(PedIsAligned(m->optimum, 0, INT64_MAX, static_cast<int64_t>(*b->first_start)));
    }
  }
}

TEST(BlivetModelTest, TheBridgeGivesTheParted65535Grain) {
  Topology t = test::kRowC.topology();
  Result<BlivetPrediction> b =
      PredictBlivet(t, NewestKnownInstallerVersion(Installer::kBlivet), ToolVersion{3, 5, 0, 2},
                    LabelType::kGpt, 100ull << 20);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->optimal.grain_sectors, 65535);
  EXPECT_EQ(b->first_start, 65535u);
  // 100 MiB ends at 270334 and is aligned up to the grain: the next partition starts at 5 x 65535.
  EXPECT_EQ(b->second_start, 5u * 65535);
  // A 1 MiB BIOS boot partition is below the 65535-sector grain: minimal alignment (8).
  EXPECT_EQ(b->small_first_start, 40u);
}

TEST(BlivetModelTest, SmallPartitionsFollowTheEra) {
  BlivetAlignments a{{0, 8192}, {0, 2048}, 512};
  // Before 1.16 every partition gets the optimum.
  EXPECT_EQ(*BlivetGetAlignment(a, {1, 15, 0, 2}, 2u << 20), (SectorAlignment{0, 8192}));
  // 1.16-3.1: below the minimal grain is an error, and add_partition fails.
  EXPECT_FALSE(BlivetGetAlignment(a, {3, 1, 0, 2}, 512u << 10));
  EXPECT_FALSE(BlivetAddPartition(a, {3, 1, 0, 2}, 63, 102399, 512u << 10));
  // From 3.2 the minimal alignment, and the end aligned up to a whole grain.
  Result<BlivetGeometry> g = BlivetAddPartition(a, {3, 2, 0, 2}, 63, 102399, 512u << 10);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->start, 2048);
  EXPECT_EQ(g->length(), 2048);
}

TEST(BlivetModelTest, SizesAreRoundedToTheGrainTakenAsBytes) {
  BlivetAlignments a{{0, 65535}, {0, 8}, 512};
  // 100 MiB is not a multiple of 65535 bytes: blivet rounds up to 1601 x 65535 bytes.
  EXPECT_EQ(BlivetAlignSize(a, {3, 14, 0, 3}, 100ull << 20), 1601ull * 65535);
}

}  // namespace
}  // namespace partalign
