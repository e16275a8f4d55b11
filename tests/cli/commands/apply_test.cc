// SPDX-License-Identifier: GPL-3.0-or-later
// partalign apply end to end on loop devices: table-only plans on GPT and DOS (with logical
// partitions), 512- and 4096-byte sectors, checked against the plan, sfdisk and the kernel;
// backup + restore gives the disk back byte for byte; --dry-run prints exactly the bytes apply
// writes and writes nothing.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "io/table/fdisk_table.h"
#include "partalign/util/base64.h"
#include "support/apply_layouts.h"
#include "support/device_test.h"
#include "support/disk_invariant.h"
#include "support/partitioned_loop.h"
#include "support/plan_maker.h"
#include "support/run_command.h"

namespace partalign {
namespace {

using test::ApplyLayout;
using test::CommandResult;
using test::KernelStartSize;
using test::PartitionedLoop;
using test::RunCommand;
using test::RunPartalign;
using test::SfdiskJson;

class ApplyLayoutTest : public ::testing::TestWithParam<ApplyLayout> {};

TEST_P(ApplyLayoutTest, AppliesThePlanAndRestoreBringsBackEveryByte) {
  PARTALIGN_REQUIRE_DEVICES();
  const ApplyLayout& layout = GetParam();
  PartitionedLoop disk(layout.script, layout.sector_size);
  const std::string before = disk.Snapshot("before.img");
  nlohmann::json old_json = SfdiskJson(disk.device());
  Plan plan = test::MakeTableOnlyPlan(disk.device());
  const std::string plan_file = disk.File("plan.json");
  test::WritePlanFile(plan_file, plan);
  const std::string backups = disk.File("backups");

  CommandResult r = RunPartalign({"apply", "--yes", "--backup-dir", backups, plan_file});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<std::string> files = test::FilesIn(backups, ".partalign-backup");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_NE(r.out.find("Backup of the table sectors: " + files[0]), std::string::npos) << r.out;

  // sfdisk (the oracle) reads the plan's table; everything else is as it was.
  nlohmann::json new_json = SfdiskJson(disk.device());
  ASSERT_EQ(new_json["partitions"].size(), old_json["partitions"].size());
  EXPECT_EQ(new_json["id"], old_json["id"]);
  int moved = 0;
  for (size_t i = 0; i < new_json["partitions"].size(); ++i) {
    nlohmann::json p = new_json["partitions"][i];
    nlohmann::json q = old_json["partitions"][i];
    ASSERT_EQ(p["node"], q["node"]);
    uint64_t number = std::stoull(p["node"].get<std::string>().substr(disk.device().size() + 1));
    uint64_t start = q["start"], end = q["start"].get<uint64_t>() + q["size"].get<uint64_t>() - 1;
    for (const PlanAction& a : plan.actions) {
      if (a.partition == number && a.kind == ActionKind::kTableOnly) {
        start = a.new_start_sector;
        end = a.new_end_sector;
        ++moved;
      }
    }
    EXPECT_EQ(p["start"], start) << p;
    EXPECT_EQ(p["start"].get<uint64_t>() + p["size"].get<uint64_t>() - 1, end) << p;
    for (const char* key : {"type", "uuid", "name", "attrs", "bootable"}) {
      EXPECT_EQ(p.value(key, nlohmann::json()), q.value(key, nlohmann::json())) << key << p;
    }
    // The kernel was told (BLKPG); sysfs counts 512-byte units. Extended partitions are
    // registered with their first sector only.
    if (p["type"] != "5") {
      auto [k_start, k_size] = KernelStartSize(disk.loop(), static_cast<int>(number));
      EXPECT_EQ(k_start, start * layout.sector_size / 512) << p;
      EXPECT_EQ(k_size, (end - start + 1) * layout.sector_size / 512) << p;
    }
  }
  EXPECT_GE(moved, 2);
  for (const std::string& v : test::DiskInvariantViolations(
           before, disk.device(), test::InvariantOptionsForPlan(plan_file, layout.sector_size))) {
    ADD_FAILURE() << v;
  }
  if (layout.name.rfind("gpt", 0) == 0) {
    CommandResult v = RunCommand({"sgdisk", "--verify", disk.device()});
    EXPECT_NE(v.out.find("No problems found"), std::string::npos) << v.out << v.err;
  }

  // Back, byte for byte: the whole image, not only the table areas.
  CommandResult back = RunPartalign({"restore", "--yes", "--backup-dir", backups, files[0]});
  ASSERT_EQ(back.exit_code, 0) << back.out << back.err;
  EXPECT_EQ(test::CmpFiles(disk.image(), before), "");
  EXPECT_EQ(SfdiskJson(disk.device()), old_json);
  auto [k_start, k_size] = KernelStartSize(disk.loop(), 1);
  EXPECT_EQ(k_start, old_json["partitions"][0]["start"].get<uint64_t>() * layout.sector_size / 512);
  CommandResult check = RunPartalign({"restore", "--check", files[0]});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}

TEST_P(ApplyLayoutTest, DryRunPrintsExactlyWhatApplyWritesAndWritesNothing) {
  PARTALIGN_REQUIRE_DEVICES();
  const ApplyLayout& layout = GetParam();
  PartitionedLoop disk(layout.script, layout.sector_size);
  const std::string before = disk.Snapshot("before.img");
  const std::string plan_file = disk.File("plan.json");
  test::WritePlanFile(plan_file, test::MakeTableOnlyPlan(disk.device()));

  CommandResult text = RunPartalign({"apply", "--dry-run", plan_file});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("Dry run: nothing was written."), std::string::npos) << text.out;
  const char* first_write = layout.name.rfind("gpt", 0) == 0 ? "GPT backup entries" : "MBR";
  EXPECT_NE(text.out.find(first_write), std::string::npos) << text.out;
  CommandResult json = RunPartalign({"apply", "--dry-run", "--json", plan_file});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(test::CmpFiles(disk.image(), before), "");
  nlohmann::json doc = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << json.out;

  CommandResult r = RunPartalign({"apply", "--yes", "--backup-dir", disk.File("b"), plan_file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Every byte of the disk that changed lies in a range the dry run listed, and holds the
  // bytes it listed.
  test::RunCommand({"sync"});
  std::string after = test::ReadFile(disk.image());
  std::string old = test::ReadFile(before);
  std::vector<bool> listed(after.size(), false);
  int changed = 0;
  for (const nlohmann::json& range : doc["table_write"]["ranges"]) {
    uint64_t offset = range["offset_bytes"], length = range["length_bytes"];
    for (uint64_t i = offset; i < offset + length; ++i) listed[i] = true;
    if (!range["changed"].get<bool>()) {
      EXPECT_EQ(after.substr(offset, length), old.substr(offset, length)) << range["area"];
      continue;
    }
    ++changed;
    std::optional<std::vector<uint8_t>> bytes =
        Base64Decode(range["new_data_base64"].get<std::string>());
    ASSERT_TRUE(bytes);
    EXPECT_EQ(after.substr(offset, length), std::string(bytes->begin(), bytes->end()))
        << range["area"];
  }
  EXPECT_GE(changed, 2);
  for (size_t i = 0; i < after.size(); ++i) {
    if (!listed[i] && after[i] != old[i]) {
      ADD_FAILURE() << "byte " << i << " changed outside the listed ranges";
      break;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, ApplyLayoutTest, ::testing::ValuesIn(test::ApplyLayouts()),
                         [](const auto& param_info) { return param_info.param.name; });

}  // namespace
}  // namespace partalign
