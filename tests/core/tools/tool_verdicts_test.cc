// SPDX-License-Identifier: GPL-3.0-or-later
// The three tool verdicts against the worked examples of alignment-heuristics.md §2-§4 and §6
// (topologies written lbs/pbs/min_io/opt_io/align_off).
#include "partalign/tools/tool_verdicts.h"

#include <gtest/gtest.h>

#include "support/test_topology.h"

namespace partalign {
namespace {

Topology Device(uint64_t lbs, uint64_t pbs, uint64_t min_io, uint64_t opt_io, uint64_t offset) {
  return test::MakeTopology(lbs, pbs, min_io, opt_io, offset, TopologyOrigin::kKernel);
}

TEST(ToolVerdictsTest, PartedAlignCheckPrintsTheArithmetic) {
  // Scenario C: parted's own complaint about a 1 MiB start (raspiblitz#2583).
  ToolVerdict v = PartedAlignCheckOpt(Device(512, 4096, 4096, 33553920, 0), 1, 2048);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.message, "1 not aligned: 2048s % 65535s != 0s");
  EXPECT_EQ(PartedAlignCheckOpt(Device(512, 4096, 4096, 0, 3584), 2, 2055),
            (ToolVerdict{true, "2 aligned"}));
  EXPECT_EQ(PartedAlignCheckOpt(Device(512, 4096, 4096, 0, 3584), 2, 2048).message,
            "2 not aligned: 2048s % 2048s != 7s");
}

TEST(ToolVerdictsTest, FdiskWarnsOnlyAboutPhysicalBoundaries) {
  // F: an explicit start of 2048 on the offset disk warns; 2047 (libfdisk's own) does not.
  Topology f = Device(512, 4096, 4096, 0, 3584);
  ToolVerdict v = FdiskPhysicalBoundary(f, 1, 2048);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.message, "Partition 1 does not start on physical sector boundary.");
  EXPECT_TRUE(FdiskPhysicalBoundary(f, 1, 2047).ok);
  // K: fdisk warns about its own default, 2048, since 1 MiB is not a multiple of 192 KiB.
  EXPECT_FALSE(FdiskPhysicalBoundary(Device(512, 512, 196608, 0, 0), 1, 2048).ok);
  // H: no warning for 2048 (the check uses min_io 64 KiB, not the 192 KiB stripe).
  EXPECT_TRUE(FdiskPhysicalBoundary(Device(512, 4096, 65536, 196608, 0), 1, 2048).ok);
  // 63 on a 512e disk: misaligned.
  EXPECT_FALSE(FdiskPhysicalBoundary(Device(512, 4096, 4096, 0, 0), 3, 63).ok);
  // Without topology libfdisk uses the sector size for both: nothing to warn about.
  Topology image = Device(512, 4096, 4096, 0, 0);
  image.origin = TopologyOrigin::kDefault;
  EXPECT_TRUE(FdiskPhysicalBoundary(image, 1, 63).ok);
}

TEST(ToolVerdictsTest, GdiskInfersItsVerifyBoundaryFromTheStarts) {
  const Topology plain = Device(512, 512, 512, 0, 0);
  // 8 GiB disk with a partition at 63: alignment 1 ([run] in §4).
  EXPECT_EQ(GdiskVerifyAlignment(plain, 16777216, {63, 204863}), 1u);
  // 400 GB disk: never below 8 sectors.
  EXPECT_EQ(GdiskVerifyAlignment(plain, 781250000, {63}), 8u);
  EXPECT_EQ(GdiskVerifyAlignment(plain, 16777216, {2048, 4096, 1050624}), 2048u);
  EXPECT_EQ(GdiskVerifyAlignment(plain, 16777216, {2048, 65535}), 1u);
  EXPECT_EQ(GdiskVerifyAlignment(plain, 16777216, {}), 2048u);
  EXPECT_EQ(GdiskVerifyAlignment(Device(4096, 4096, 4096, 0, 0), 2097152, {}), 256u);
  EXPECT_EQ(GdiskVerifyAlignment(plain, 16777216, {2056}), 8u);
  // The physical sector raises the boundary when it is larger than the inferred alignment.
  EXPECT_EQ(GdiskVerifyAlignment(Device(512, 4096, 4096, 0, 0), 16777216, {63}), 8u);
  Topology image = Device(512, 4096, 4096, 0, 0);
  image.origin = TopologyOrigin::kDefault;  // BLKPBSZGET fails on a file
  EXPECT_EQ(GdiskVerifyAlignment(image, 16777216, {63}), 1u);
}

TEST(ToolVerdictsTest, GdiskVerifyCautionsAreOneLine) {
  const Topology t = Device(512, 4096, 4096, 0, 0);
  ToolVerdict start = GdiskVerifyStart(t, 1, 63, 8);
  EXPECT_FALSE(start.ok);
  EXPECT_EQ(start.message,
            "Caution: Partition 1 doesn't begin on a 8-sector boundary. This may result in "
            "degraded performance on some modern (2009 and later) hard disks.");
  EXPECT_TRUE(GdiskVerifyStart(t, 1, 2048, 8).ok);
  ToolVerdict end = GdiskVerifyEnd(t, 2, 4094, 2048);
  EXPECT_FALSE(end.ok);
  EXPECT_EQ(end.message,
            "Caution: Partition 2 doesn't end on a 2048-sector boundary. This may result in "
            "problems with some disk encryption tools.");
  EXPECT_TRUE(GdiskVerifyEnd(t, 2, 4095, 2048).ok);
}

}  // namespace
}  // namespace partalign
