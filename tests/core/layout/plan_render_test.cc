// SPDX-License-Identifier: GPL-3.0-or-later
// The renderings of a plan: sfdisk script (exact text), disk map, Markdown, table rows.
#include "partalign/layout/plan_render.h"

#include <gtest/gtest.h>

#include "partalign/layout/planner.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

constexpr const char* kLinux = "0FC63DAF-8483-4772-8E79-3D69D8477DE4";

PartitionTable GptTable() {
  PartitionTable t;
  t.label = LabelType::kGpt;
  t.sector_size = 512;
  t.disk_size_sectors = 16384;  // 8 MiB
  t.first_usable_lba = 34;
  t.last_usable_lba = 16350;
  t.disk_id = "3A0B3E5C-7F37-4B43-8C2E-1D7A0F5E9B11";
  t.areas = {{"GPT Entries", 1024, 128 * 128}};
  auto add = [&](uint32_t n, uint64_t start, uint64_t size, const char* uuid) {
    Partition p;
    p.number = n;
    p.start_sector = start;
    p.size_sectors = size;
    p.type_code = kLinux;
    p.uuid = uuid;
    t.partitions.push_back(p);
  };
  add(1, 63, 4096, "11111111-2222-3333-4444-555555555555");
  add(2, 8192, 2048, "66666666-7777-8888-9999-AAAAAAAAAAAA");
  t.partitions[0].name = "say \"hi\"";
  t.partitions[0].contents.proof = ContentProof::kData;
  t.partitions[1].attributes = "RequiredPartition";
  return t;
}

Plan PlanFor(const PartitionTable& t) {
  DeviceInfo d;
  d.identity.path = "disk.img";
  d.topology = DefaultTopology(t.sector_size, t.disk_size_sectors * t.sector_size);
  Result<Plan> p = MakePlan(t, d, {kMiB, 0});
  EXPECT_TRUE(p) << p.error().message;
  return *p;
}

TEST(PlanRenderTest, SfdiskScriptIsTheCompleteNewTable) {
  PartitionTable t = GptTable();
  Result<std::string> script = RenderSfdiskScript(PlanFor(t), t);
  ASSERT_TRUE(script) << script.error().message;
  EXPECT_EQ(*script,
            "# partalign plan for 'disk.img': the new partition table as an sfdisk script.\n"
            "# 2 partitions: 1 unchanged, 0 table-only, 1 move data (2 MiB), 0 impossible\n"
            "# WARNING: partition 1 starts elsewhere in this table, but the data has not been\n"
            "# moved. 'partalign apply' on this plan's file (partalign plan -o) moves it first\n"
            "# (journaled), then writes this table.\n"
            "# Writing this script with sfdisk alone points those partitions at sectors that do\n"
            "# not hold their data.\n"
            "label: gpt\n"
            "label-id: 3A0B3E5C-7F37-4B43-8C2E-1D7A0F5E9B11\n"
            "unit: sectors\n"
            "first-lba: 34\n"
            "last-lba: 16350\n"
            "sector-size: 512\n"
            "\n"
            "1 : start=2048, size=4096, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, "
            "uuid=11111111-2222-3333-4444-555555555555, name=\"say \\x22hi\\x22\"\n"
            "2 : start=8192, size=2048, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, "
            "uuid=66666666-7777-8888-9999-AAAAAAAAAAAA, attrs=\"RequiredPartition\"\n");
}

TEST(PlanRenderTest, NoWarningWithoutDataToMoveAndTableLengthWhenNotDefault) {
  PartitionTable t = GptTable();
  t.partitions[0].contents.proof = ContentProof::kZeros;
  t.areas[0].size_bytes = 256 * 128;
  Result<std::string> script = RenderSfdiskScript(PlanFor(t), t);
  ASSERT_TRUE(script);
  EXPECT_EQ(script->find("WARNING"), std::string::npos) << *script;
  EXPECT_NE(script->find("table-length: 256\n"), std::string::npos) << *script;
}

TEST(PlanRenderTest, DosScriptHasTypeBytesBootFlagsAndTheExtendedPartition) {
  PartitionTable t;
  t.label = LabelType::kDos;
  t.sector_size = 512;
  t.disk_size_sectors = 1 << 20;
  t.first_usable_lba = 2048;
  t.last_usable_lba = (1 << 20) - 1;
  t.disk_id = "0x12345678";
  auto add = [&](uint32_t n, PartitionKind k, uint64_t s, uint64_t size, const char* type) {
    Partition p;
    p.number = n;
    p.kind = k;
    p.start_sector = s;
    p.size_sectors = size;
    p.type_code = type;
    t.partitions.push_back(p);
  };
  add(1, PartitionKind::kPrimary, 2048, 2048, "0x83");
  t.partitions[0].bootable = true;
  add(2, PartitionKind::kExtended, 8192, 100000, "0x05");
  add(5, PartitionKind::kLogical, 10240, 4096, "0x82");
  Result<std::string> script = RenderSfdiskScript(PlanFor(t), t);
  ASSERT_TRUE(script) << script.error().message;
  EXPECT_NE(script->find("label: dos\nlabel-id: 0x12345678\nunit: sectors\nsector-size: 512\n"),
            std::string::npos)
      << *script;
  EXPECT_EQ(script->find("first-lba"), std::string::npos);
  EXPECT_NE(script->find("1 : start=2048, size=2048, type=83, bootable\n"), std::string::npos);
  EXPECT_NE(script->find("2 : start=8192, size=100000, type=5\n"), std::string::npos);
  EXPECT_NE(script->find("5 : start=10240, size=4096, type=82\n"), std::string::npos);
}

TEST(PlanRenderTest, LayoutScriptCreatesTheTable) {
  Plan plan;
  plan.disk = {"disk.img", 8 * kGiB, 512, "", ""};
  plan.alignment = {kMiB, 0};
  plan.layout =
      PlanLayout{LabelType::kGpt,
                 2048,
                 16777182,
                 {{1, 2048, 1050623, "C12A7328-F81F-11D2-BA4B-00A0C93EC93B", "ESP", "", false},
                  {2, 1050624, 16775167, kLinux, "", "", false}}};
  Result<std::string> script = RenderSfdiskScript(plan, PartitionTable{});
  ASSERT_TRUE(script) << script.error().message;
  EXPECT_NE(script->find("label: gpt\nunit: sectors\nfirst-lba: 2048\nlast-lba: 16777182\n"),
            std::string::npos)
      << *script;
  EXPECT_NE(script->find("1 : start=2048, size=1048576, type=C12A7328-F81F-11D2-BA4B-"
                         "00A0C93EC93B, name=\"ESP\"\n"),
            std::string::npos);
  EXPECT_NE(script->find("2 : start=1050624, size=15724544, type=" + std::string(kLinux) + "\n"),
            std::string::npos);
  EXPECT_EQ(script->find("label-id"), std::string::npos);
}

TEST(PlanRenderTest, ActionsForPartitionsTheTableLacksAreAnError) {
  PartitionTable t = GptTable();
  Plan plan = PlanFor(t);
  plan.actions[1].partition = 9;
  EXPECT_FALSE(RenderSfdiskScript(plan, t));
}

TEST(PlanRenderTest, DiskMapDrawsStartsAgainstMiBBoundaries) {
  PartitionTable t = GptTable();
  std::vector<std::string> map = DiskMap(PlanFor(t), t);
  // 8 MiB in 64 characters: 128 KiB each. Partition 1 covers 31.5 KiB to 2 MiB + 31.5 KiB
  // before (so it reaches into a 17th cell) and 1 MiB to 3 MiB after; partition 2 4 to 5 MiB.
  ASSERT_GE(map.size(), 8u);
  EXPECT_EQ(map[0],
            "whole disk, 1 character = 128 KiB; digits and letters are partition numbers, '.' is "
            "free space");
  EXPECT_EQ(map[1], "  before |11111111111111111...............22222222........................|");
  EXPECT_EQ(map[2], "  after  |........1111111111111111........22222222........................|");
  EXPECT_EQ(map[3], "starts in detail, 1 character = 64 KiB, '|' = a 1 MiB boundary");
  EXPECT_EQ(map[4], "  partition 1: start 63 -> 2048");
  EXPECT_EQ(map[5], "         0 MiB            1 MiB            2 MiB");
  EXPECT_EQ(map[6], "  before |1111111111111111|1111111111111111|1...............|");
  EXPECT_EQ(map[7], "  after  |................|1111111111111111|1111111111111111|");
}

TEST(PlanRenderTest, MarkdownHasTheActionTableAndTheMap) {
  PartitionTable t = GptTable();
  std::string md =
      RenderPlanMarkdown(PlanFor(t), t, {"partalign plan -o my.json disk.img", "", "my.json"});
  EXPECT_EQ(md.rfind("# Alignment plan for `disk.img`\n", 0), 0u) << md;
  EXPECT_NE(md.find("| 1 | move-data | 63 | 4158 | 2048 | 6143 | 2097152 | start 63 -> 2048"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| 2 | none | 8192 | 10239 | 8192 | 10239 | 0 | aligned |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("```text\nwhole disk"), std::string::npos);
  EXPECT_NE(md.find("moves the data of the `move-data` partitions"), std::string::npos);
  // Issue #30 item 4: the command that writes this plan, and the file apply takes.
  EXPECT_NE(md.find("Save the plan with `partalign plan -o my.json disk.img`, then apply it with "
                    "`partalign apply my.json`"),
            std::string::npos)
      << md;
}

TEST(PlanRenderTest, RowsAndSymbols) {
  PartitionTable t = GptTable();
  std::vector<std::vector<std::string>> rows = PlanRows(PlanFor(t));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"1", "move-data", "63", "4158", "2048", "6143",
                                               "+1985", "2 MiB", "2 MiB"}));
  EXPECT_EQ(rows[0].size(), PlanColumns().size());
  EXPECT_EQ(PartitionSymbol(1), '1');
  EXPECT_EQ(PartitionSymbol(10), 'a');
  EXPECT_EQ(PartitionSymbol(36), 'A');
  EXPECT_EQ(PartitionSymbol(128), '#');
}

}  // namespace
}  // namespace partalign
