// SPDX-License-Identifier: GPL-3.0-or-later
// The table's findings and its comparison with the validation gate's scan.
#include "partalign/layout/partition_table.h"

#include <gtest/gtest.h>

#include "support/table_images.h"

namespace partalign {
namespace {

constexpr uint64_t kMiB = 1024 * 1024;

TEST(PartitionTableTest, ScanVersusTableNamesEveryDifference) {
  test::GptSpec spec;
  spec.disk_sectors = 64 * kMiB / 512;
  spec.entries = {{0, test::kEspGuid, "", 2048, 18431}, {1, test::kLinuxFsGuid, "", 18432, 81919}};
  TableScan scan = ScanTable(test::MakeGptDisk(spec), 512);
  PartitionTable table;
  table.label = LabelType::kGpt;
  table.disk_id = "a1b2c3d4-0000-4000-8000-000000000001";  // case does not matter
  table.first_usable_lba = scan.first_usable_lba;
  table.last_usable_lba = scan.last_usable_lba;
  for (const ScannedPartition& s : scan.partitions) {
    Partition p;
    p.number = s.number;
    p.start_sector = s.start_sector;
    p.size_sectors = s.size_sectors;
    table.partitions.push_back(p);
  }
  EXPECT_TRUE(ScanVersusTable(scan, table).empty());
  table.partitions.back().size_sectors -= 1;
  EXPECT_EQ(ScanVersusTable(scan, table).size(), 1u);
  table.partitions.pop_back();
  std::vector<std::string> off = ScanVersusTable(scan, table);
  ASSERT_EQ(off.size(), 1u);
  EXPECT_EQ(off[0], "partition 2: found by the scan, not by libfdisk");
  table.label = LabelType::kDos;
  EXPECT_EQ(ScanVersusTable(scan, table).front(),
            "libfdisk reads a dos table, the scan a gpt table");
}

TEST(PartitionTableTest, FindingsDecideTheStatusAndWhetherTheTableMayChange) {
  PartitionTable table;
  EXPECT_EQ(TableStatus(table.findings), "ok");
  EXPECT_TRUE(CheckChangeable(table));
  table.findings = {{"a", TableSeverity::kNote, "just a note"}};
  EXPECT_EQ(TableStatus(table.findings), "ok");
  EXPECT_TRUE(CheckChangeable(table));
  table.findings.push_back({"b", TableSeverity::kReadOnly, "the backup GPT is damaged"});
  table.findings.push_back({"c", TableSeverity::kReadOnly, "hybrid MBR"});
  EXPECT_EQ(TableStatus(table.findings), "read-only");
  Status s = CheckChangeable(table);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message.rfind("the backup GPT is damaged (and 1 more problem); partalign "
                                    "changes only a sound table",
                                    0),
            0u)
      << s.error().message;
  table.findings.push_back({"d", TableSeverity::kUnreadable, "loop"});
  EXPECT_EQ(TableStatus(table.findings), "unreadable");
  EXPECT_EQ(DescribeFindings(table.findings, TableSeverity::kUnreadable), "loop");
}

}  // namespace
}  // namespace partalign
