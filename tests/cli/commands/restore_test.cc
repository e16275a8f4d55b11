// SPDX-License-Identifier: GPL-3.0-or-later
// partalign restore: --check tells identical (0) from different (2); a backup for another disk
// is refused (3) and a corrupt one rejected (1), both writing nothing; restore takes its own
// backup first, so that a restore can be undone; image files restore with the backup's sector
// size.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "support/apply_layouts.h"
#include "support/device_test.h"
#include "support/disk_invariant.h"
#include "support/in_use_guards.h"
#include "support/partitioned_loop.h"
#include "support/plan_maker.h"
#include "support/run_command.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::PartitionedLoop;
using test::RunCommand;
using test::RunPartalign;

std::vector<std::string> Backups(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Applies the layout's plan to `disk` and returns the backup apply took.
std::string ApplyPlan(const PartitionedLoop& disk, const std::string& backups) {
  const std::string plan_file = disk.File("plan.json");
  test::WritePlanFile(plan_file, test::MakeTableOnlyPlan(disk.device()));
  CommandResult r = RunPartalign({"apply", "--yes", "--backup-dir", backups, plan_file});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<std::string> files = Backups(backups);
  EXPECT_EQ(files.size(), 1u);
  return files.empty() ? "" : files.front();
}

TEST(RestoreTest, CheckTellsDifferentFromIdentical) {
  PARTALIGN_REQUIRE_DEVICES();
  PartitionedLoop disk(test::ApplyLayoutNamed("dos_512").script, 512);
  const std::string backup = ApplyPlan(disk, disk.File("backups"));
  CommandResult check = RunPartalign({"restore", "--check", backup});
  EXPECT_EQ(check.exit_code, 2) << check.out << check.err;
  EXPECT_NE(check.out.find("MBR"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("what the apply wrote"), std::string::npos) << check.out;
  CommandResult dry = RunPartalign({"restore", "--dry-run", backup});
  EXPECT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_EQ(RunPartalign({"restore", "--check", backup}).exit_code, 2);
  ASSERT_EQ(RunPartalign({"restore", "--yes", "--backup-dir", disk.File("b2"), backup}).exit_code,
            0);
  check = RunPartalign({"restore", "--check", backup});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_NE(check.out.find("holds exactly the table sectors saved in"), std::string::npos);
}

TEST(RestoreTest, RestoreIsUndoneByItsOwnBackup) {
  PARTALIGN_REQUIRE_DEVICES();
  PartitionedLoop disk(test::ApplyLayoutNamed("gpt_512").script, 512);
  const std::string original = disk.Snapshot("original.img");
  const std::string backup = ApplyPlan(disk, disk.File("backups"));
  const std::string applied = disk.Snapshot("applied.img");
  const std::string undo_dir = disk.File("undo");
  CommandResult r = RunPartalign({"restore", "--yes", "--backup-dir", undo_dir, backup});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // Restored: the disk invariant against the disk before the apply (every partition where it
  // was with its bytes, nothing else changed but the table's own sectors).
  for (const std::string& v : test::DiskInvariantViolations(original, disk.device())) {
    ADD_FAILURE() << v;
  }
  std::vector<std::string> undo = Backups(undo_dir);
  ASSERT_EQ(undo.size(), 1u);
  EXPECT_NE(r.out.find(undo[0]), std::string::npos) << r.out;
  r = RunPartalign({"restore", "--yes", "--backup-dir", undo_dir, undo[0]});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(test::CmpFiles(disk.image(), applied), "");
}

TEST(RestoreTest, BackupForAnotherDiskIsRefused) {
  PARTALIGN_REQUIRE_DEVICES();
  PartitionedLoop disk(test::ApplyLayoutNamed("gpt_512").script, 512);
  const std::string backup = ApplyPlan(disk, disk.File("backups"));
  // Same size, same layout: the loop device's backing file tells them apart.
  PartitionedLoop twin(test::ApplyLayoutNamed("gpt_512").script, 512);
  PartitionedLoop bigger(test::ApplyLayoutNamed("gpt_512").script, 512, 128ull << 20);
  const std::string twin_before = twin.Snapshot("before.img");
  const std::string bigger_before = bigger.Snapshot("before.img");
  CommandResult r = RunPartalign(
      {"restore", "--yes", "--backup-dir", disk.File("b2"), "--target", twin.device(), backup});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("the backup was taken from another disk"), std::string::npos) << r.err;
  EXPECT_NE(
      r.err.find("loop backing file: backup '" + disk.image() + "', disk '" + twin.image() + "'"),
      std::string::npos)
      << r.err;
  EXPECT_EQ(test::CmpFiles(twin.image(), twin_before), "");
  r = RunPartalign(
      {"restore", "--yes", "--backup-dir", disk.File("b2"), "--target", bigger.device(), backup});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("size: backup 67108864 bytes, disk 134217728 bytes"), std::string::npos)
      << r.err;
  EXPECT_EQ(test::CmpFiles(bigger.image(), bigger_before), "");
  EXPECT_TRUE(Backups(disk.File("b2")).empty());
}

TEST(RestoreTest, CorruptOrTruncatedBackupIsRejected) {
  PARTALIGN_REQUIRE_DEVICES();
  PartitionedLoop disk(test::ApplyLayoutNamed("gpt_512").script, 512);
  const std::string backup = ApplyPlan(disk, disk.File("backups"));
  const std::string applied = disk.Snapshot("applied.img");
  const std::string good = test::ReadFile(backup);
  const std::string broken = disk.File("broken.partalign-backup");
  auto expect_rejected = [&](const std::string& text, const std::string& message) {
    test::WriteFile(broken, text);
    CommandResult r = RunPartalign({"restore", "--yes", "--backup-dir", disk.File("b2"), broken});
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << message << "\n" << r.err;
    EXPECT_EQ(test::CmpFiles(disk.image(), applied), "");
  };
  expect_rejected(good.substr(0, good.size() - 100), "not valid JSON (truncated or corrupt?)");
  // One saved byte changed (base64 'A' <-> 'B' in the first range's data).
  nlohmann::json j = nlohmann::json::parse(good);
  std::string data = j["ranges"][0]["data_base64"];
  data[0] = data[0] == 'A' ? 'B' : 'A';
  j["ranges"][0]["data_base64"] = data;
  expect_rejected(j.dump(), "ranges[0]: the saved bytes do not match their xxh64");
  j = nlohmann::json::parse(good);
  j["ranges"][0]["length_bytes"] = 1;  // the GPT backup entries: 128 x 128 bytes
  expect_rejected(j.dump(), "ranges[0].data_base64: 16384 bytes, length_bytes says 1");
  EXPECT_TRUE(Backups(disk.File("b2")).empty());
}

TEST(RestoreTest, RefusesADiskInUse) {
  PARTALIGN_REQUIRE_DEVICES();
  PartitionedLoop disk(test::ApplyLayoutNamed("gpt_512").script, 512);
  const std::string backup = ApplyPlan(disk, disk.File("backups"));
  const std::string applied = disk.Snapshot("applied.img");
  {
    test::MountGuard mounted(disk.loop().PartitionPath(3));
    const std::string mounted_state = disk.Snapshot("mounted.img");
    CommandResult r = RunPartalign({"restore", "--yes", "--backup-dir", disk.File("b2"), backup});
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_NE(r.err.find("partition 3 ('" + disk.loop().PartitionPath(3) + "') is mounted on '" +
                         mounted.mount_point() + "'"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(test::CmpFiles(disk.image(), mounted_state), "");
  }
  EXPECT_TRUE(Backups(disk.File("b2")).empty());
}

TEST(RestoreTest, ImageFileRestoresWithTheBackupsSectorSize) {
  PARTALIGN_REQUIRE_DEVICES();
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, 64ull << 20);
  test::SfdiskImage(image, test::ApplyLayoutNamed("gpt_4096").script, 4096);
  const std::string before = dir.File("before.img");
  ASSERT_EQ(RunCommand({"cp", "--sparse=always", image, before}).exit_code, 0);
  const std::string plan_file = dir.File("plan.json");
  test::WritePlanFile(plan_file, test::MakeTableOnlyPlan(image, 4096));
  // An image has no sector size of its own: the plan's must be given again. Read with 512-byte
  // sectors, the validation gate finds the GPT written for 4096 and refuses it.
  CommandResult r = RunPartalign({"apply", "--yes", "--backup-dir", dir.File("b"), plan_file});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("the GPT was written for 4096-byte sectors"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--sector-size 4096"), std::string::npos) << r.err;
  EXPECT_EQ(test::CmpFiles(image, before), "");
  r = RunPartalign(
      {"apply", "--yes", "--sector-size", "4096", "--backup-dir", dir.File("b"), plan_file});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Image file: no kernel partitions to update."), std::string::npos);
  std::vector<std::string> files = Backups(dir.File("b"));
  ASSERT_EQ(files.size(), 1u);
  r = RunPartalign({"restore", "--yes", "--backup-dir", dir.File("b2"), files[0]});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(test::CmpFiles(image, before), "");
}

}  // namespace
}  // namespace partalign
