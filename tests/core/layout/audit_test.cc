// SPDX-License-Identifier: GPL-3.0-or-later
// The audit: each criterion with its arithmetic, required versus informational, the tool
// verdicts, and the JSON keys other programs rely on.
#include "partalign/layout/audit.h"
#include "partalign/layout/audit_partition.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/test_topology.h"

#include "partalign/util/units.h"

namespace partalign {
namespace {

Topology Device(uint64_t pbs, uint64_t min_io, uint64_t opt_io, uint64_t offset) {
  return test::MakeTopology(512, pbs, min_io, opt_io, offset);
}

PartitionTable Table(std::vector<std::pair<uint64_t, uint64_t>> extents) {
  PartitionTable t;
  t.label = LabelType::kGpt;
  t.sector_size = 512;
  t.disk_size_sectors = 16777216;
  t.first_usable_lba = 34;
  t.last_usable_lba = 16777182;
  uint32_t n = 1;
  for (auto [start, size] : extents) {
    Partition p;
    p.number = n++;
    p.start_sector = start;
    p.size_sectors = size;
    t.partitions.push_back(p);
  }
  return t;
}

TEST(AuditTest, SixtyThreeShowsItsArithmetic) {
  PartitionTable t = Table({{63, 204800}});
  t.partitions[0].contents.fs_type = "ext4";
  t.partitions[0].contents.fs_block_size = 4096;
  t.partitions[0].contents.proof = ContentProof::kSignature;
  AuditReport r = AuditTable(t, Device(4096, 4096, 0, 0));
  ASSERT_EQ(r.partitions.size(), 1u);
  const PartitionAudit& p = r.partitions[0];
  EXPECT_FALSE(p.aligned);
  EXPECT_EQ(p.Check(Criterion::kGrain).detail,
            "start 63 x 512 = 32256 bytes, 32256 % 1048576 = 32256");
  EXPECT_EQ(p.Check(Criterion::kPhysicalSector).detail,
            "start 63 x 512 = 32256 bytes, 32256 % 4096 = 3584");
  EXPECT_FALSE(p.Check(Criterion::kFilesystemBlock).ok);
  EXPECT_FALSE(p.Check(Criterion::kOptimalIo).applicable);
  EXPECT_FALSE(p.Check(Criterion::kFdiskPhysicalBoundary).ok);
  EXPECT_EQ(p.Check(Criterion::kPartedAlignCheckOpt).detail, "1 not aligned: 63s % 2048s != 0s");
  EXPECT_EQ(r.misaligned_count(), 1u);
  EXPECT_EQ(AuditSummary(r),
            "1 of 1 partition is misaligned (1) (required: grain 1 MiB, physical sector 4096 "
            "bytes, minimum I/O 4096 bytes).");
}

TEST(AuditTest, AlignmentOffsetShiftsEveryCriterion) {
  // Offset 3584: 2055 is physically aligned ((2055 x 512 - 3584) % 4096 = 0), 2048 is not.
  Topology t = Device(4096, 4096, 0, 3584);
  AuditReport r = AuditTable(Table({{2055, 2048}, {8192, 2048}}), t);
  EXPECT_TRUE(r.partitions[0].aligned);
  EXPECT_FALSE(r.partitions[1].aligned);
  EXPECT_EQ(r.partitions[1].Check(Criterion::kPhysicalSector).detail,
            "start 8192 x 512 = 4194304 bytes, (4194304 - 3584) % 4096 = 512");
  EXPECT_EQ(r.alignment.alignment.offset_bytes, 3584u);
}

TEST(AuditTest, OptimalIoIsRequiredOnlyWhenSane) {
  // RAID-5 3 x 64 KiB: 2048 (1 MiB) is not on the 192 KiB stripe; 6144 (3 MiB, their least
  // common multiple) is on both.
  Topology raid = Device(4096, 65536, 196608, 0);
  AuditReport r = AuditTable(Table({{2048, 2048}, {6144, 2048}}), raid);
  EXPECT_FALSE(r.partitions[0].aligned);
  EXPECT_FALSE(r.partitions[0].Check(Criterion::kOptimalIo).ok);
  EXPECT_TRUE(r.partitions[1].aligned);
  // The bridge value is not a stripe: not applicable, and 2048 is aligned.
  AuditReport bridge = AuditTable(Table({{2048, 2048}}), Device(4096, 4096, 33553920, 0));
  EXPECT_TRUE(bridge.partitions[0].aligned);
  EXPECT_FALSE(bridge.partitions[0].Check(Criterion::kOptimalIo).applicable);
  // parted still complains: it takes the bridge value literally.
  EXPECT_FALSE(bridge.partitions[0].Check(Criterion::kPartedAlignCheckOpt).ok);
}

TEST(AuditTest, InformationalChecksDoNotDecideAlignment) {
  // Start aligned, end not: the partition is aligned, end_aligned and gdisk's end check fail.
  AuditReport r = AuditTable(Table({{2048, 1000}}), Device(512, 512, 0, 0));
  const PartitionAudit& p = r.partitions[0];
  EXPECT_TRUE(p.aligned);
  EXPECT_FALSE(p.Check(Criterion::kEndAligned).ok);
  EXPECT_FALSE(p.Check(Criterion::kGdiskVerifyEnd).ok);
  EXPECT_TRUE(r.all_aligned());
  std::vector<std::string> details = AuditDetails(r);
  ASSERT_FALSE(details.empty());
  EXPECT_EQ(details[0], "partition 1 (sectors 2048-3047):");
  EXPECT_NE(details[1].find("(informational)"), std::string::npos) << details[1];
}

TEST(AuditTest, UserGrainIsCheckedAndRaisedForTheEnd) {
  AuditReport r =
      AuditTable(Table({{8192, 8192}}), Device(4096, 4096, 0, 0), {.grain_bytes = 4 * kMiB});
  EXPECT_TRUE(r.partitions[0].aligned);
  AuditReport off =
      AuditTable(Table({{2048, 8192}}), Device(4096, 4096, 0, 0), {.grain_bytes = 4 * kMiB});
  EXPECT_FALSE(off.partitions[0].aligned);
  EXPECT_EQ(off.partitions[0].Check(Criterion::kGrain).detail,
            "start 2048 x 512 = 1048576 bytes, 1048576 % 4194304 = 1048576");
}

TEST(AuditTest, ExtendedPartitionsAreNotAudited) {
  PartitionTable t = Table({{63, 1000}, {2048, 100000}, {2049, 1000}});
  t.label = LabelType::kDos;
  t.partitions[1].kind = PartitionKind::kExtended;
  t.partitions[2].kind = PartitionKind::kLogical;
  t.partitions[2].number = 5;
  AuditReport r = AuditTable(t, Device(512, 512, 0, 0));
  ASSERT_EQ(r.partitions.size(), 2u);
  EXPECT_EQ(r.partitions[1].number, 5u);
  EXPECT_EQ(r.partitions[1].kind, PartitionKind::kLogical);
}

TEST(AuditTest, APartitionNodeKeepsOnlyItsPartitionAndItsVerdict) {
  // The disk: aligned 1, misaligned logical 5. Audited through the node of 5: only 5, misaligned.
  PartitionTable t = Table({{2048, 1000}, {4096, 100000}, {4159, 1000}});
  t.label = LabelType::kDos;
  t.partitions[1].kind = PartitionKind::kExtended;
  t.partitions[2].kind = PartitionKind::kLogical;
  t.partitions[2].number = 5;
  AuditReport r = AuditTable(t, Device(512, 512, 0, 0));
  AuditReport five = r;
  ASSERT_TRUE(KeepOnlyPartitionAt(&five, 4159 * 512));
  ASSERT_EQ(five.partitions.size(), 1u);
  EXPECT_EQ(five.partitions[0].number, 5u);
  EXPECT_FALSE(five.all_aligned());
  EXPECT_EQ(AuditSummary(five),
            "1 of 1 partition is misaligned (5) (required: grain 1 MiB, physical sector 512 "
            "bytes, minimum I/O 512 bytes).");
  // Partition 1 alone is aligned.
  AuditReport one = r;
  ASSERT_TRUE(KeepOnlyPartitionAt(&one, 2048 * 512));
  EXPECT_TRUE(one.all_aligned());
  // The extended container holds no data: not audited, so not kept, and the report unchanged.
  AuditReport extended = r;
  EXPECT_FALSE(KeepOnlyPartitionAt(&extended, 4096 * 512));
  EXPECT_EQ(extended.partitions.size(), 2u);
}

TEST(AuditTest, JsonHasTheStableKeys) {
  PartitionTable t = Table({{63, 2048}, {4096, 2048}});
  AuditReport r = AuditTable(t, Device(4096, 4096, 0, 0));
  DeviceInfo d;
  d.topology = Device(4096, 4096, 0, 0);
  d.identity.path = "disk.img";
  nlohmann::json j = AuditJson(r, d, {}, "xxh64:0123456789abcdef");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["aligned"], false);
  EXPECT_EQ(j["grain_bytes"], kMiB);
  EXPECT_EQ(j["summary"]["misaligned"], 1);
  EXPECT_EQ(j["required_checks"],
            nlohmann::json({"grain", "physical_sector", "minimum_io", "optimal_io"}));
  ASSERT_EQ(j["partitions"].size(), 2u);
  const nlohmann::json& p = j["partitions"][0];
  for (const char* key :
       {"number", "start_sector", "end_sector", "size_bytes", "checks", "aligned"}) {
    EXPECT_TRUE(p.contains(key)) << key;
  }
  EXPECT_EQ(p["start_sector"], 63);
  EXPECT_EQ(p["end_sector"], 63 + 2048 - 1);
  EXPECT_EQ(p["size_bytes"], 2048 * 512);
  for (Criterion c : kAllCriteria) EXPECT_TRUE(p["checks"].contains(CriterionKey(c)));
  EXPECT_EQ(p["checks"]["grain"], false);
  EXPECT_TRUE(p["checks"]["optimal_io"].is_null());
  EXPECT_TRUE(p["checks"]["filesystem_block"].is_null());
  EXPECT_EQ(p["details"]["grain"], "start 63 x 512 = 32256 bytes, 32256 % 1048576 = 32256");
  EXPECT_EQ(j["partitions"][1]["aligned"], true);
}

TEST(AuditTest, RowsHaveOneCellPerColumn) {
  AuditReport r = AuditTable(Table({{63, 2048}}), Device(4096, 4096, 0, 0));
  std::vector<std::vector<std::string>> rows = AuditRows(r);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].size(), AuditColumns().size());
  EXPECT_EQ(rows[0].front(), "1");
  EXPECT_EQ(rows[0].back(), "NO");
}

}  // namespace
}  // namespace partalign
