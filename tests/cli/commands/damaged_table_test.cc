// SPDX-License-Identifier: GPL-3.0-or-later
// Damaged, unusual and hostile tables through the commands (issue 11, items 1, 4, 5, 7, 8): each
// is either read and stated (audit says what is damaged, plan refuses to change it) or refused
// with one line naming the problem; nothing aborts, nothing is written, no partition is lost.
// Image files built byte by byte (tests/support/table_images.h); sfdisk and partx are the
// oracles for what is on them.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "partalign/layout/plan.h"
#include "support/device_test.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/table_images.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::RunCommand;
using test::RunPartalign;

constexpr uint64_t kMiB = 1024 * 1024;
constexpr int kFailure = 1;

// One line on stderr: "partalign: ..." and nothing else.
void ExpectOneLine(const CommandResult& r, const std::string& expected) {
  EXPECT_NE(r.err.find(expected), std::string::npos) << expected << "\n" << r.err;
  EXPECT_EQ(r.err.rfind("partalign: ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

// How many partitions partx (libblkid's reader, not libfdisk) sees on `image`.
size_t PartxCount(const std::string& image) {
  CommandResult r = RunCommand({"partx", "--show", "--noheadings", "-o", "NR", image});
  size_t lines = 0;
  for (char c : r.out) lines += c == '\n';
  return r.exit_code == 0 ? lines : 0;
}

test::GptSpec TwoPartitions() {
  test::GptSpec spec;
  spec.disk_sectors = 64 * kMiB / 512;
  // Partition 2 starts at 18433: misaligned, so a plan would move it.
  spec.entries = {{0, test::kEspGuid, "", 2048, 18431}, {1, test::kLinuxFsGuid, "", 18433, 81919}};
  return spec;
}

struct Image {
  test::TempDir dir;
  std::string path = dir.File("disk.img");
  std::string before = dir.File("before.img");

  explicit Image(const SparseDisk& disk) {
    test::WriteImageFile(disk, path);
    test::RunOrThrow({"cp", "--sparse=always", path, before});
  }
  std::string Unchanged() const { return test::CmpFiles(path, before); }
};

TEST(DamagedTableTest, BothGptCopiesDamagedIsStatedNotReadAsDos) {
  test::GptSpec spec = TwoPartitions();
  SparseDisk disk = test::MakeGptDisk(spec);
  test::CorruptGptHeader(&disk, 512, test::PrimaryHeaderLba());
  test::CorruptGptHeader(&disk, 512, test::BackupHeaderLba(spec));
  Image image(disk);
  for (const char* command : {"audit", "plan"}) {
    CommandResult r = RunPartalign({command, image.path});
    EXPECT_EQ(r.exit_code, kFailure) << command << "\n" << r.out << r.err;
    ExpectOneLine(r, "protective MBR, but no valid GPT: primary: header CRC");
    EXPECT_EQ(r.out.find("0xee"), std::string::npos) << r.out;
  }
  EXPECT_EQ(image.Unchanged(), "");
}

TEST(DamagedTableTest, HybridMbrIsAuditedButNotPlannedAndWithADamagedGptRefused) {
  test::GptSpec spec = TwoPartitions();
  spec.mbr = {{0, 0xEE, 1, 2047}, {0x80, 0x0C, 2048, 16384}};
  {
    Image image(test::MakeGptDisk(spec));
    CommandResult audit = RunPartalign({"audit", "--json", image.path});
    EXPECT_EQ(audit.exit_code, 2) << audit.err;  // partition 2 is misaligned
    nlohmann::json j = nlohmann::json::parse(audit.out);
    EXPECT_EQ(j["table_status"], "read-only");
    EXPECT_EQ(j["table_findings"][0]["code"], "hybrid-mbr");
    EXPECT_EQ(j["partitions"].size(), 2u);
    CommandResult plan = RunPartalign({"plan", "-o", image.dir.File("plan.json"), image.path});
    EXPECT_EQ(plan.exit_code, kFailure) << plan.out << plan.err;
    ExpectOneLine(plan, "hybrid MBR: sector 0 holds partition entries besides the protective one");
    EXPECT_FALSE(std::filesystem::exists(image.dir.File("plan.json")));
    EXPECT_EQ(image.Unchanged(), "");
  }
  {
    // Damaged GPT behind a hybrid MBR: once read as a DOS table, with the 0xEE entry as a
    // partition at sectors 1-2047 that plan moved to 2048.
    SparseDisk disk = test::MakeGptDisk(spec);
    test::CorruptGptHeader(&disk, 512, test::PrimaryHeaderLba());
    test::CorruptGptHeader(&disk, 512, test::BackupHeaderLba(spec));
    Image image(disk);
    CommandResult plan = RunPartalign({"plan", image.path});
    EXPECT_EQ(plan.exit_code, kFailure) << plan.out << plan.err;
    ExpectOneLine(plan, "hybrid MBR, but no valid GPT");
    EXPECT_EQ(plan.out, "");
    EXPECT_EQ(image.Unchanged(), "");
  }
}

TEST(DamagedTableTest, ValidGptWithAZeroedMbrIsNamedNotNoTable) {
  SparseDisk disk = test::MakeGptDisk(TwoPartitions());
  disk.Write(0, std::vector<uint8_t>(512, 0));
  Image image(disk);
  CommandResult r = RunPartalign({"audit", image.path});
  EXPECT_EQ(r.exit_code, kFailure) << r.out << r.err;
  ExpectOneLine(r, "the GPT header at sector 1 is valid, but sector 0 holds no protective MBR");
}

TEST(DamagedTableTest, OneDamagedCopyIsAuditedWithAWarningAndNotPlanned) {
  test::GptSpec spec = TwoPartitions();
  SparseDisk disk = test::MakeGptDisk(spec);
  test::CorruptGptHeader(&disk, 512, test::BackupHeaderLba(spec));
  Image image(disk);
  CommandResult audit = RunPartalign({"audit", image.path});
  EXPECT_EQ(audit.exit_code, 2) << audit.err;
  EXPECT_NE(audit.out.find("warning: the backup GPT is damaged (header CRC"), std::string::npos)
      << audit.out;
  CommandResult plan = RunPartalign({"plan", image.path});
  EXPECT_EQ(plan.exit_code, kFailure);
  ExpectOneLine(plan, "partalign changes only a sound table");
  EXPECT_EQ(image.Unchanged(), "");
}

TEST(DamagedTableTest, TablesLibfdiskAbortsOnAreReadOrRefusedWithoutACrash) {
  {
    // 512 bytes, 55 AA at 510: an empty DOS table (sfdisk -d reads it; libfdisk's free-space
    // listing aborted).
    SparseDisk disk(512);
    disk.Write(510, std::vector<uint8_t>{0x55, 0xAA});
    Image image(disk);
    for (const char* command : {"audit", "plan", "explain"}) {
      CommandResult r = RunPartalign({command, image.path});
      EXPECT_LT(r.exit_code, 128) << command << " was killed\n" << r.err;
      EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.out << r.err;
    }
    EXPECT_EQ(image.Unchanged(), "");
  }
  {
    test::GptSpec spec = TwoPartitions();
    spec.entries[1].end = ~uint64_t{0};
    Image image(test::MakeGptDisk(spec));
    for (const char* command : {"audit", "plan"}) {
      CommandResult r = RunPartalign({command, image.path});
      EXPECT_EQ(r.exit_code, kFailure) << command << "\n" << r.out << r.err;
      ExpectOneLine(r,
                    "partition 2 (sectors 18433-18446744073709551615) ends beyond the end of "
                    "the disk (131072 sectors of 512 bytes)");
    }
    CommandResult explain = RunPartalign({"explain", image.path});
    EXPECT_LT(explain.exit_code, 128) << explain.err;
    EXPECT_EQ(image.Unchanged(), "");
  }
}

TEST(DamagedTableTest, PartitionAtTwoToTheSixtyThreeIsNotAuditedAsByteZero) {
  test::GptSpec spec = TwoPartitions();
  spec.entries[1] = {1, test::kLinuxFsGuid, "", uint64_t{1} << 63, (uint64_t{1} << 63) + 2047};
  Image image(test::MakeGptDisk(spec));
  CommandResult r = RunPartalign({"audit", "--json", image.path});
  EXPECT_EQ(r.exit_code, kFailure) << r.out;
  EXPECT_EQ(r.out, "");
  ExpectOneLine(r, "partition 2 (sectors 9223372036854775808-9223372036854777855) ends beyond");
}

TEST(DamagedTableTest, PastTheEndOverlappingAndAtariAreNamed) {
  struct Case {
    const char* name;
    SparseDisk disk;
    const char* expected;
  };
  test::GptSpec overlap = TwoPartitions();
  overlap.entries[1].start = 10000;
  std::vector<Case> cases;
  cases.push_back({"past-end", test::MakeDosDisk(64 * kMiB, 512, {{0, 0x83, 2048, 200000}}),
                   "partition 1 (sectors 2048-202047) ends beyond the end of the disk"});
  cases.push_back({"overlap", test::MakeGptDisk(overlap),
                   "partitions 1 (sectors 2048-18431) and 2 (sectors 10000-81919) overlap"});
  cases.push_back({"atari", test::MakeAtariDisk(64 * kMiB), "partition table of type 'atari'"});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Image image(c.disk);
    CommandResult r = RunPartalign({"audit", image.path});
    EXPECT_EQ(r.exit_code, kFailure) << r.out << r.err;
    ExpectOneLine(r, c.expected);
    EXPECT_EQ(image.Unchanged(), "");
  }
}

TEST(DamagedTableTest, MoreLogicalPartitionsThanLibfdiskKeepsAreRefusedAndNoneIsLost) {
  PARTALIGN_REQUIRE_DEVICES();  // apply writes (and checks the disk is not in use)
  for (size_t n : {64u, 2001u}) {
    SCOPED_TRACE(n);
    std::vector<test::LogicalSpec> logicals;
    for (uint64_t i = 0; i < n; ++i) logicals.push_back({2049 + i * 64, 63});
    Image image(test::MakeDosDisk(256 * kMiB, 512, {}, logicals, 2048, 2048 + n * 64 + 100));
    const size_t count = PartxCount(image.path);
    EXPECT_EQ(count, n + 1);  // the extended partition and every logical one
    CommandResult plan = RunPartalign({"plan", image.path});
    EXPECT_EQ(plan.exit_code, kFailure) << plan.out << plan.err;
    ExpectOneLine(plan, fmt::format("the EBR chain holds {} logical partitions; libfdisk reads "
                                    "only 56 (partitions 5-60) and would delete the rest",
                                    n));
    // A plan file for this disk (made by hand: partalign makes none) is refused the same way.
    Plan p;
    p.disk = {image.path, 256 * kMiB, 512, "", ""};
    p.topology.logical_sector_size = 512;
    p.topology.physical_sector_size = 512;
    p.topology.size_bytes = 256 * kMiB;
    p.label = LabelType::kDos;
    p.table_fingerprint = "xxh64:0000000000000000";
    p.alignment = {kMiB, 0};
    p.actions = {{5, 2049, 2111, 4096, 4158, ActionKind::kTableOnly, 0, "hand-made"}};
    test::WriteFile(image.dir.File("plan.json"), PlanToJson(p).dump());
    CommandResult apply = RunPartalign(
        {"apply", "--yes", "--backup-dir", image.dir.File("backups"), image.dir.File("plan.json")});
    EXPECT_EQ(apply.exit_code, kFailure) << apply.out << apply.err;
    ExpectOneLine(apply, "libfdisk reads only 56");
    EXPECT_EQ(image.Unchanged(), "");
    EXPECT_EQ(PartxCount(image.path), count);
    EXPECT_TRUE(test::FilesIn(image.dir.File("backups"), ".partalign-backup").empty());
  }
}

TEST(DamagedTableTest, ApplyKeepsAllFiftySixLogicalPartitions) {
  PARTALIGN_REQUIRE_DEVICES();
  // The most libfdisk represents: every partition is there after apply (partx and sfdisk agree).
  std::vector<test::LogicalSpec> logicals;
  for (uint64_t i = 0; i < 56; ++i) logicals.push_back({2049 + i * 4096, 4095});
  Image image(test::MakeDosDisk(512 * kMiB, 512, {}, logicals, 2048, 2048 + 56 * 4096 + 4096));
  ASSERT_EQ(PartxCount(image.path), 57u);
  const std::string plan_file = image.dir.File("plan.json");
  CommandResult plan = RunPartalign({"plan", "-o", plan_file, image.path});
  ASSERT_EQ(plan.exit_code, 0) << plan.out << plan.err;
  CommandResult apply =
      RunPartalign({"apply", "--yes", "--backup-dir", image.dir.File("backups"), plan_file});
  ASSERT_EQ(apply.exit_code, 0) << apply.out << apply.err;
  EXPECT_NE(apply.out.find("(57 partitions,"), std::string::npos) << apply.out;
  EXPECT_EQ(PartxCount(image.path), 57u);
  EXPECT_EQ(test::SfdiskJson(image.path)["partitions"].size(), 57u);
  CommandResult audit = RunPartalign({"audit", image.path});
  EXPECT_EQ(audit.exit_code, 0) << audit.out << audit.err;
}

}  // namespace
}  // namespace partalign
