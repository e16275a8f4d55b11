// SPDX-License-Identifier: GPL-3.0-or-later
// A partition node given where a disk is expected (issue 40, item 1): read as a disk it looks
// like a disk without a table, and audit said "aligned" of a misaligned partition. probe names
// its disk, audit audits that one partition in its disk's table, and every command that reads
// or writes a table refuses it, naming the disk; nothing is written.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include <nlohmann/json.hpp>

#include "support/device_test.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::PartitionedLoop;
using test::RunPartalign;

// An aligned primary 1, the extended 2, and logical 5 at 24639: 63 sectors past the grain.
constexpr const char* kDosWithLogical =
    "label: dos\n"
    "start=2048, size=20480, type=83\n"
    "start=24576, size=81920, type=5\n"
    "start=24639, size=40000, type=83\n";

TEST(PartitionNodeTest, AuditAuditsThePartitionInItsDisksTable) {
  PARTALIGN_REQUIRE_DEVICES();
  PartitionedLoop disk(kDosWithLogical, 512);
  const std::string five = disk.loop().PartitionPath(5);
  std::vector<std::string> args{"audit", five};
  CommandResult r = RunPartalign(args);
  EXPECT_EQ(r.exit_code, 2) << test::Describe(args, r);
  EXPECT_EQ(r.out.find("No partition table"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("audit of '" + five + "' (partition 5 of '" + disk.device() +
                       "', in its table): dos table"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("1 of 1 partition is misaligned (5)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("start 24639 x 512"), std::string::npos) << r.out;

  // JSON: the one partition, and the disk it belongs to.
  CommandResult j = RunPartalign({"audit", "--json", five});
  ASSERT_EQ(j.exit_code, 2) << j.out << j.err;
  nlohmann::json doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["partition_of"], disk.device());
  ASSERT_EQ(doc["partitions"].size(), 1u);
  EXPECT_EQ(doc["partitions"][0]["number"], 5);
  EXPECT_EQ(doc["aligned"], false);

  // The aligned primary alone is aligned; the whole disk is not.
  CommandResult one = RunPartalign({"audit", disk.loop().PartitionPath(1)});
  EXPECT_EQ(one.exit_code, 0) << one.out << one.err;
  EXPECT_NE(one.out.find("All 1 partition is aligned"), std::string::npos) << one.out;
  CommandResult whole = RunPartalign({"audit", disk.device()});
  EXPECT_EQ(whole.exit_code, 2) << whole.out << whole.err;
  EXPECT_NE(whole.out.find("1 of 2 partitions are misaligned (5)"), std::string::npos) << whole.out;

  // The extended partition is a container: said, with the disk to audit instead.
  CommandResult ext = RunPartalign({"audit", disk.loop().PartitionPath(2)});
  EXPECT_EQ(ext.exit_code, 1) << ext.out << ext.err;
  EXPECT_NE(ext.err.find("is the extended partition 2 of '" + disk.device() + "'"),
            std::string::npos)
      << ext.err;
  EXPECT_NE(ext.err.find("'partalign audit " + disk.device() + "' audits them"), std::string::npos)
      << ext.err;
}

TEST(PartitionNodeTest, ProbeNamesTheDisk) {
  PARTALIGN_REQUIRE_DEVICES();
  PartitionedLoop disk(kDosWithLogical, 512);
  CommandResult r = RunPartalign({"probe", disk.loop().PartitionPath(5)});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("PARTITION-OF +" + disk.device() + "\n")))
      << r.out;
}

TEST(PartitionNodeTest, CommandsThatReadATableRefuseNamingTheDisk) {
  PARTALIGN_REQUIRE_DEVICES();
  PartitionedLoop disk(kDosWithLogical, 512);
  const std::string one = disk.loop().PartitionPath(1);
  const std::string before = disk.Snapshot("before.img");
  const std::string refusal = "'" + one + "' is partition 1 of the disk '" + disk.device() +
                              "', not a disk: partition tables are read and written on the " +
                              "whole disk, give '" + disk.device() + "'";
  const std::string plan_file = disk.File("plan.json");
  CommandResult plan = RunPartalign({"plan", "-o", plan_file, one});
  EXPECT_EQ(plan.exit_code, 1) << plan.out << plan.err;
  EXPECT_NE(plan.err.find(refusal), std::string::npos) << plan.err;
  EXPECT_FALSE(std::filesystem::exists(plan_file));

  // A plan of the disk, applied to the partition node: refused before anything is written.
  CommandResult good = RunPartalign({"plan", "-o", plan_file, disk.device()});
  ASSERT_EQ(good.exit_code, 0) << good.out << good.err;
  const std::string backups = disk.File("backups");
  CommandResult apply =
      RunPartalign({"apply", "--yes", "--backup-dir", backups, "--target", one, plan_file});
  EXPECT_NE(apply.exit_code, 0) << apply.out << apply.err;
  EXPECT_NE(apply.err.find(refusal), std::string::npos) << apply.err;
  EXPECT_FALSE(std::filesystem::exists(backups));

  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"report", "-o", disk.File("r.html"), one},
        std::vector<std::string>{"snapshot", "-o", disk.File("s.json"), one}}) {
    CommandResult r = RunPartalign(args);
    EXPECT_EQ(r.exit_code, 1) << test::Describe(args, r);
    EXPECT_NE(r.err.find(refusal), std::string::npos) << test::Describe(args, r);
  }
  EXPECT_EQ(test::CmpFiles(disk.image(), before), "");
}

}  // namespace
}  // namespace partalign
