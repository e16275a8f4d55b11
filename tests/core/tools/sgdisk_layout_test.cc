// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/sgdisk_layout.h"

#include <gtest/gtest.h>

#include "support/test_topology.h"

namespace partalign {
namespace {

const ToolVersion kGptfdisk109{1, 0, 9, 3};

Topology Disk(uint64_t lbs, uint64_t bytes, uint64_t pbs = 0) {
  return test::MakeTopology(lbs, pbs ? pbs : lbs, pbs ? pbs : lbs, 0, 0, TopologyOrigin::kKernel,
                            bytes);
}

SgdiskNew Plus(uint64_t n, int power) { return {n, power}; }

// Checked against sgdisk 1.0.9 on a 2 GiB loop device: `-n 0:0:+256M -n 0:0:+512M -n 0:0:0`.
TEST(SgdiskLayoutTest, BackToBackAndTheRestToLastUsable) {
  SgdiskLayout s = PredictSgdiskLayout(Disk(512, 2ull << 30), kGptfdisk109,
                                       {Plus(256, 2), Plus(512, 2), SgdiskNew{}});
  ASSERT_TRUE(s.error.empty()) << s.error;
  ASSERT_EQ(s.partitions.size(), 3u);
  EXPECT_EQ(s.partitions[0], (SgdiskPartition{1, 2048, 526335}));
  EXPECT_EQ(s.partitions[1], (SgdiskPartition{2, 526336, 1574911}));
  EXPECT_EQ(s.partitions[2], (SgdiskPartition{3, 1574912, 4194270}));
}

// An odd size leaves the next start on the next multiple of the alignment above, because
// Align() cannot move it down into partition 1 (checked on the same device: +1000K gives
// 2048-4047, then 4096).
TEST(SgdiskLayoutTest, OddSizeMovesTheNextStartUp) {
  SgdiskLayout s = PredictSgdiskLayout(Disk(512, 2ull << 30), kGptfdisk109,
                                       {Plus(1000, 1), Plus(512, 2), SgdiskNew{}});
  ASSERT_EQ(s.partitions.size(), 3u);
  EXPECT_EQ(s.partitions[0].end_sector, 4047u);
  EXPECT_EQ(s.partitions[1].start_sector, 4096u);
  // sgdisk -v infers 2048 from the starts: partition 1's end is off it.
  ASSERT_FALSE(s.warnings.empty());
  EXPECT_NE(s.warnings[0].find("Partition 1 doesn't end on a 2048-sector boundary"),
            std::string::npos)
      << s.warnings[0];
}

// Checked on the same device: +1800M then +512M does not fit; sgdisk saves nothing.
TEST(SgdiskLayoutTest, APartitionThatDoesNotFitSavesNothing) {
  SgdiskLayout s = PredictSgdiskLayout(Disk(512, 2ull << 30), kGptfdisk109,
                                       {Plus(1800, 2), Plus(512, 2), SgdiskNew{}});
  EXPECT_TRUE(s.partitions.empty());
  EXPECT_EQ(s.error, "Could not create partition 2 from 3688448 to 4737023");
}

// 4Kn: 1 MiB is 256 sectors; K sizes are divided down to sectors (IeeeToInt).
TEST(SgdiskLayoutTest, FourKnSizes) {
  SgdiskLayout s =
      PredictSgdiskLayout(Disk(4096, 1ull << 30), kGptfdisk109, {Plus(1, 2), Plus(10, 1)});
  ASSERT_EQ(s.partitions.size(), 2u);
  EXPECT_EQ(s.partitions[0], (SgdiskPartition{1, 256, 511}));
  EXPECT_EQ(s.partitions[1].start_sector, 512u);
  EXPECT_EQ(s.partitions[1].end_sector, 513u);  // 10 KiB = 2 whole 4 KiB sectors
  EXPECT_EQ(SgdiskEndText(Plus(10, 1)), "+10K");
  EXPECT_EQ(SgdiskEndText(SgdiskNew{}), "0");
}

TEST(SgdiskLayoutTest, SizeTextUsesTheLargestExactUnit) {
  EXPECT_EQ(SgdiskEndText(SgdiskSizeOf(256ull << 20, 512)), "+256M");
  EXPECT_EQ(SgdiskEndText(SgdiskSizeOf(3ull << 30, 512)), "+3G");
  EXPECT_EQ(SgdiskEndText(SgdiskSizeOf(1536 * 1024, 512)), "+1536K");
  EXPECT_EQ(SgdiskEndText(SgdiskSizeOf(1000 * 512 + 512, 512)), "+1001");
  // On 4Kn a size that is no whole KiB multiple of the sector is rounded up to sectors.
  EXPECT_EQ(SgdiskEndText(SgdiskSizeOf(6144, 4096)), "+2");
}

}  // namespace
}  // namespace partalign
