// SPDX-License-Identifier: GPL-3.0-or-later
// partalign audit end to end: the two-era disk (63-sector and JMicron-era starts, real
// filesystems), the JSON keys, the exit codes 0/2/1, and the tool verdicts against the real
// parted, sgdisk and fdisk on the same image.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/run_command.h"
#include "support/sfdisk.h"
#include "support/temp_dir.h"
#include "support/two_era_disk.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::RunCommand;
using test::RunPartalign;

constexpr const char* kBridge = "usb-jmicron-0xffff";

void Sfdisk(const std::string& image, const std::string& script) {
  CommandResult r = test::WriteWithSfdisk(image, script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

TEST(AuditCommandTest, TwoEraDiskNamesEveryMisalignedPartitionWithTheArithmetic) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::MakeTwoEraDisk(image);
  std::vector<std::string> args{"audit", "--assume", kBridge, image};
  CommandResult r = RunPartalign(args);
  EXPECT_EQ(r.exit_code, 2) << test::Describe(args, r);
  for (int i = 0; i < 4; ++i) {
    const unsigned long long start = test::kTwoEraStarts[i];
    const unsigned long long end = start + test::kTwoEraSizes[i] - 1;
    EXPECT_NE(r.out.find("partition " + std::to_string(i + 1) + " (sectors " +
                         std::to_string(start) + "-" + std::to_string(end)),
              std::string::npos)
        << r.out;
    // The grain criterion with its arithmetic: start x 512 = bytes, bytes % 1048576 = rest.
    const unsigned long long bytes = start * 512;
    EXPECT_NE(r.out.find("grain 1 MiB: start " + std::to_string(start) +
                         " x 512 = " + std::to_string(bytes) + " bytes, " + std::to_string(bytes) +
                         " % 1048576 = " + std::to_string(bytes % 1048576)),
              std::string::npos)
        << r.out;
  }
  EXPECT_NE(r.out.find("1 not aligned: 63s % 65535s != 0s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4 of 4 partitions are misaligned (1, 2, 3, 4)"), std::string::npos)
      << r.out;
}

TEST(AuditCommandTest, JsonHasTheDocumentedKeysAndWhatBlkidFound) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::MakeTwoEraDisk(image);
  std::vector<std::string> args{"audit", "--json", "--assume", kBridge, image};
  CommandResult r = RunPartalign(args);
  ASSERT_EQ(r.exit_code, 2) << test::Describe(args, r);
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["aligned"], false);
  EXPECT_EQ(j["topology"]["optimal_io_size"], 33553920);
  ASSERT_EQ(j["partitions"].size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const nlohmann::json& p = j["partitions"][i];
    EXPECT_EQ(p["number"], i + 1);
    EXPECT_EQ(p["start_sector"], test::kTwoEraStarts[i]);
    EXPECT_EQ(p["end_sector"], test::kTwoEraStarts[i] + test::kTwoEraSizes[i] - 1);
    EXPECT_EQ(p["size_bytes"], test::kTwoEraSizes[i] * 512);
    EXPECT_EQ(p["aligned"], false);
    ASSERT_TRUE(p["checks"].is_object());
    for (const auto& [key, value] : p["checks"].items()) {
      EXPECT_TRUE(value.is_boolean() || value.is_null()) << key;
    }
    EXPECT_EQ(p["checks"]["grain"], false);
    EXPECT_TRUE(p["checks"]["optimal_io"].is_null());  // 33553920 is no stripe
  }
  const nlohmann::json& legacy = j["partitions"][0];
  EXPECT_EQ(legacy["fs_type"], "ext4");
  EXPECT_EQ(legacy["fs_block_size"], 4096);
  EXPECT_EQ(legacy["fs_size_bytes"], test::kTwoEraSizes[0] * 512);
  EXPECT_EQ(legacy["has_data"], true);
  EXPECT_EQ(j["partitions"][1]["fs_type"], "vfat");
  // Never written but by mkfs.ext4 of partition 3, which zeroes a few blocks past its end:
  // no signature, a zero head, not read in full - not proven empty (audit reads only heads).
  EXPECT_EQ(j["partitions"][3]["has_data"], true);
  EXPECT_EQ(j["partitions"][3]["content_proof"], "unscanned");
  EXPECT_EQ(legacy["content_proof"], "signature");
  EXPECT_EQ(j["summary"]["misaligned"], 4);
}

TEST(AuditCommandTest, AlignedDiskExitsZero) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, 256ull << 20);
  Sfdisk(image, "label: gpt\n,100M\n,\n");
  CommandResult r = RunPartalign({"audit", image});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("All 2 partitions are aligned"), std::string::npos) << r.out;
  // The same disk against a 4 MiB grain: 1 MiB starts are not on it.
  CommandResult grain = RunPartalign({"audit", "--grain", "4M", image});
  EXPECT_EQ(grain.exit_code, 2) << grain.out;
  // A disk without partitions has nothing misaligned.
  const std::string empty = dir.File("empty.img");
  test::CreateSparseFile(empty, 64ull << 20);
  CommandResult none = RunPartalign({"audit", "--json", empty});
  EXPECT_EQ(none.exit_code, 0) << none.out << none.err;
  EXPECT_TRUE(nlohmann::json::parse(none.out)["partitions"].empty());
}

TEST(AuditCommandTest, ErrorsExitOneWithOneLine) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, 64ull << 20);
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  // A GPT written for 4096-byte sectors, read as 512: every position would be misread.
  const std::string bridge4k = dir.File("4k.img");
  test::CreateSparseFile(bridge4k, 64ull << 20);
  ASSERT_EQ(RunCommand({"parted", "-s", bridge4k, "mklabel", "gpt", "mkpart", "p", "1MiB", "9MiB"},
                       "", {{"PARTED_SECTOR_SIZE", "4096"}})
                .exit_code,
            0);
  for (const Case& c : std::vector<Case>{
           {{"audit", dir.File("missing.img")}, "cannot open"},
           {{"audit", "--grain", "100", image}, "--grain: '100' is not a size between"},
           {{"audit", "--grain", "1X", image}, "--grain"},
           {{"audit", bridge4k}, "written for 4096-byte sectors"},
       }) {
    CommandResult r = RunPartalign(c.args);
    EXPECT_EQ(r.exit_code, 1) << test::Describe(c.args, r);
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_EQ(r.err.rfind("partalign: ", 0), 0u) << r.err;
  }
  // Read as the bridge presented it, the same table audits fine.
  CommandResult ok = RunPartalign({"audit", "--sector-size", "4096", bridge4k});
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
}

TEST(AuditCommandTest, ToolVerdictsAgreeWithTheRealTools) {
  // On an image file the tools see no topology: parted aligns to 1 MiB, gdisk infers 8 sectors
  // from these starts, fdisk checks 512-byte sectors. Partition 1 ends off gdisk's boundary.
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, 64ull << 20);
  Sfdisk(image,
         "label: gpt\nstart=2048, size=2052\nstart=10248, size=4096\n"
         "start=16392, size=1000\n");
  CommandResult r = RunPartalign({"audit", "--json", image});
  ASSERT_EQ(r.exit_code, 2) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["gdisk_test_alignment_sectors"], 8);
  CommandResult sgdisk = RunCommand({"sgdisk", "-v", image});
  CommandResult fdisk = RunCommand({"fdisk", "-l", image});
  ASSERT_EQ(fdisk.exit_code, 0) << fdisk.err;
  for (const nlohmann::json& p : j["partitions"]) {
    const std::string n = std::to_string(p["number"].get<int>());
    CommandResult parted = RunCommand({"parted", "-s", image, "align-check", "opt", n});
    EXPECT_EQ(p["checks"]["parted_align_check_opt"].get<bool>(), parted.exit_code == 0)
        << "partition " << n << ": parted exit " << parted.exit_code;
    const bool gdisk_begin_caution =
        sgdisk.out.find("Partition " + n + " doesn't begin on a") != std::string::npos;
    const bool gdisk_end_caution =
        sgdisk.out.find("Partition " + n + " doesn't end on a") != std::string::npos;
    EXPECT_EQ(p["checks"]["gdisk_verify_start"].get<bool>(), !gdisk_begin_caution) << sgdisk.out;
    EXPECT_EQ(p["checks"]["gdisk_verify_end"].get<bool>(), !gdisk_end_caution) << sgdisk.out;
    const bool fdisk_warns =
        fdisk.out.find("Partition " + n + " does not start on physical") != std::string::npos ||
        fdisk.err.find("Partition " + n + " does not start on physical") != std::string::npos;
    EXPECT_EQ(p["checks"]["fdisk_physical_boundary"].get<bool>(), !fdisk_warns);
  }
  // The oracle saw something to disagree about: partition 1's end and partitions 2-3 for parted.
  EXPECT_NE(sgdisk.out.find("Partition 1 doesn't end on a 8-sector boundary"), std::string::npos)
      << sgdisk.out;
  EXPECT_EQ(j["partitions"][1]["checks"]["parted_align_check_opt"], false);
}

}  // namespace
}  // namespace partalign
