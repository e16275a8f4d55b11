// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/parted_disk.h"

#include <gtest/gtest.h>

#include "support/test_topology.h"

namespace partalign {
namespace {

const ToolVersion kParted35{3, 5, 0, 2};

PartedModel Model(const Topology& t, ToolVersion v = kParted35) {
  Result<PartedModel> m = MakePartedModel(t, v);
  EXPECT_TRUE(m.has_value()) << (m ? "" : m.error().message);
  return *m;
}

// An image file of `sectors` 512-byte sectors: parted reads no topology (grain 1 with -a
// minimal, like --align=none in the upstream tests), 32 sectors per track.
Topology File(uint64_t sectors) {
  return test::MakeTopology(512, 512, 512, 0, 0, TopologyOrigin::kDefault, sectors * 512);
}

MkpartOutcome Make(PartedDisk& disk, PartedPartType type, const char* start, const char* end,
                   PartedMode mode = PartedMode::kOptimal) {
  MkpartOutcome o = disk.Mkpart(mode, type, start, end);
  EXPECT_TRUE(o.created) << start << " " << end << ": " << o.error;
  return o;
}

// parted tests/t0208-mkpart-end-in-IEC.sh (v3.5): an end in IEC units is the sector before;
// ends in sectors are exact. (The test uses --align=none; -a minimal on an image file has the
// same grain of one sector; its second partition uses a unit-less position, not modelled.)
TEST(PartedDiskTest, UpstreamT0208EndsInIecUnitsStopOneSectorBefore) {
  PartedDisk disk(Model(File(8 * 2048)), LabelType::kGpt);
  MkpartOutcome p1 = Make(disk, PartedPartType::kPrimary, "1MiB", "2MiB", PartedMode::kMinimal);
  EXPECT_EQ(p1.start_sector, 2048);
  EXPECT_EQ(p1.end_sector, 4095);
  MkpartOutcome p3 = Make(disk, PartedPartType::kPrimary, "3MiB", "4MiB", PartedMode::kMinimal);
  EXPECT_EQ(p3.start_sector, 6144);
  EXPECT_EQ(p3.end_sector, 8191);
  EXPECT_EQ(p3.number, 2);
  MkpartOutcome p4 = Make(disk, PartedPartType::kPrimary, "4MiB", "10239s", PartedMode::kMinimal);
  EXPECT_EQ(p4.start_sector, 8192);
  EXPECT_EQ(p4.end_sector, 10239);
}

// parted tests/t0207-IEC-binary-notation.sh: "64KiB 1MiB" is the same as bytes "65536B
// 1048064B" on a 3000-sector file.
TEST(PartedDiskTest, UpstreamT0207IecPositionsEqualTheirBytes) {
  PartedDisk a(Model(File(3000)), LabelType::kGpt);
  MkpartOutcome x = Make(a, PartedPartType::kPrimary, "64KiB", "1MiB", PartedMode::kMinimal);
  PartedDisk b(Model(File(3000)), LabelType::kGpt);
  MkpartOutcome y = Make(b, PartedPartType::kPrimary, "65536B", "1048064B", PartedMode::kMinimal);
  EXPECT_EQ(x.start_sector, 128);
  EXPECT_EQ(x.end_sector, 2047);
  EXPECT_EQ(y.start_sector, x.start_sector);
  EXPECT_EQ(y.end_sector, x.end_sector);
}

// parted tests/t9022-one-unit-snap.sh: on msdos, "0 1MB" (a range of a unit either way,
// snapped) lands where "1s 1000000B" does.
TEST(PartedDiskTest, UpstreamT9022OneUnitSnap) {
  PartedDisk a(Model(File(3000)), LabelType::kDos);
  MkpartOutcome x = Make(a, PartedPartType::kPrimary, "1s", "1000000B", PartedMode::kMinimal);
  PartedDisk b(Model(File(3000)), LabelType::kDos);
  MkpartOutcome y = Make(b, PartedPartType::kPrimary, "0", "1MB", PartedMode::kMinimal);
  EXPECT_EQ(x.start_sector, 1);
  EXPECT_EQ(x.end_sector, 1953);
  EXPECT_EQ(y.start_sector, x.start_sector);
  EXPECT_EQ(y.end_sector, x.end_sector);
}

// parted tests/t2310-dos-extended-2-sector-min-offset.sh: a logical partition may start one
// sector after its extended partition (1 MiB scsi_debug disk, 512-byte sectors).
TEST(PartedDiskTest, UpstreamT2310LogicalOneSectorAfterTheExtendedStart) {
  PartedDisk disk(Model(test::MakeTopology(512, 512, 512, 0, 0, TopologyOrigin::kKernel, 1 << 20)),
                  LabelType::kDos);
  MkpartOutcome e = Make(disk, PartedPartType::kExtended, "64s", "128s", PartedMode::kMinimal);
  EXPECT_EQ(e.number, 1);
  MkpartOutcome l = Make(disk, PartedPartType::kLogical, "65s", "128s", PartedMode::kMinimal);
  EXPECT_EQ(l.number, 5);
  EXPECT_EQ(l.start_sector, 65);
  EXPECT_EQ(l.end_sector, 128);
}

// The MiB layout on a 2 GiB disk, checked against parted 3.5 on a loop device: partitions
// back to back, the extended partition to the end of the disk, each logical partition 1 MiB
// after the previous boundary.
TEST(PartedDiskTest, MibLayoutWithLogicalPartitions) {
  PartedDisk disk(
      Model(test::MakeTopology(512, 512, 512, 0, 0, TopologyOrigin::kKernel, 2ull << 30)),
      LabelType::kDos);
  Make(disk, PartedPartType::kPrimary, "1MiB", "257MiB");
  Make(disk, PartedPartType::kPrimary, "257MiB", "769MiB");
  Make(disk, PartedPartType::kPrimary, "769MiB", "869MiB");
  MkpartOutcome e = Make(disk, PartedPartType::kExtended, "869MiB", "100%");
  MkpartOutcome l5 = Make(disk, PartedPartType::kLogical, "870MiB", "1170MiB");
  MkpartOutcome l6 = Make(disk, PartedPartType::kLogical, "1171MiB", "1371MiB");
  EXPECT_EQ(e.start_sector, 1779712);
  EXPECT_EQ(e.end_sector, 4194303);
  EXPECT_EQ(l5.number, 5);
  EXPECT_EQ(l5.start_sector, 1781760);
  EXPECT_EQ(l5.end_sector, 2396159);
  EXPECT_EQ(l6.start_sector, 2398208);
  EXPECT_EQ(l6.end_sector, 2807807);
  EXPECT_EQ(disk.partitions().size(), 6u);
  // A fifth primary (or second extended) partition is refused; the disk keeps what it has.
  MkpartOutcome fifth =
      disk.Mkpart(PartedMode::kOptimal, PartedPartType::kPrimary, "1400MiB", "1500MiB");
  EXPECT_FALSE(fifth.created);
  EXPECT_NE(fifth.error.find("Too many primary partitions"), std::string::npos) << fifth.error;
  EXPECT_EQ(disk.partitions().size(), 6u);
}

// Found by the layout sweep: before parted 3.5.28 (3f6b723) an end in "KiB" is not moved one
// sector down, because only "kMGTPEZY" (case-sensitive) began an IEC unit; "MiB" always is.
TEST(PartedDiskTest, KibEndsAreExactBeforeParted36) {
  Topology t = test::MakeTopology(512, 512, 512, 0, 0, TopologyOrigin::kKernel, 2ull << 30);
  PartedDisk old_disk(Model(t), LabelType::kGpt);
  MkpartOutcome a = Make(old_disk, PartedPartType::kPrimary, "1MiB", "2207KiB");
  EXPECT_EQ(a.end_sector, 4414);
  PartedDisk new_disk(Model(t, ToolVersion{3, 6, 0, 2}), LabelType::kGpt);
  MkpartOutcome b = Make(new_disk, PartedPartType::kPrimary, "1MiB", "2207KiB");
  EXPECT_EQ(b.end_sector, 4413);
}

// Found by the layout sweep: a block device's msdos track is 1 + logical/512 sectors
// (_device_probe_geometry), so `0% 0%` snaps its end to sector 1, not to 62.
TEST(PartedDiskTest, BlockDeviceTrackIsTwoSectors) {
  Topology t = test::MakeTopology(512, 512, 512, 0, 0, TopologyOrigin::kKernel, 2ull << 30);
  PartedDisk disk(Model(t), LabelType::kDos);
  MkpartOutcome o = Make(disk, PartedPartType::kPrimary, "0%", "0%", PartedMode::kMinimal);
  EXPECT_EQ(o.start_sector, 1);
  EXPECT_EQ(o.end_sector, 1);
}

// parted aligns every start on the bridge's 65535-sector grain it cannot reach in MiB
// positions, so each partition is made exactly where asked, with the warning.
TEST(PartedDiskTest, BridgeGrainWarnsForEveryMibStart) {
  Topology t =
      test::MakeTopology(512, 4096, 4096, 33553920, 0, TopologyOrigin::kKernel, 8ull << 30);
  PartedDisk disk(Model(t), LabelType::kGpt);
  MkpartOutcome p1 = Make(disk, PartedPartType::kPrimary, "1MiB", "257MiB");
  MkpartOutcome p2 = Make(disk, PartedPartType::kPrimary, "257MiB", "100%");
  EXPECT_EQ(p1.start_sector, 2048);
  EXPECT_EQ(p2.start_sector, 526336);
  ASSERT_TRUE(p1.warning);
  EXPECT_NE(p1.warning->find("2048s % 65535s != 0s"), std::string::npos);
  ASSERT_TRUE(p2.warning);
  EXPECT_NE(p2.warning->find("526336s % 65535s != 0s"), std::string::npos);
}

TEST(PartedDiskTest, OverlapIsRefused) {
  PartedDisk disk(Model(File(1 << 16)), LabelType::kGpt);
  Make(disk, PartedPartType::kPrimary, "1MiB", "10MiB");
  MkpartOutcome o = disk.Mkpart(PartedMode::kOptimal, PartedPartType::kPrimary, "5MiB", "20MiB");
  EXPECT_FALSE(o.created);
  EXPECT_EQ(disk.partitions().size(), 1u);
}

}  // namespace
}  // namespace partalign
