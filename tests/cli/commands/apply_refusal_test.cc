// SPDX-License-Identifier: GPL-3.0-or-later
// Every refusal of partalign apply: a stale plan, a plan for another disk, a truncated or
// corrupt plan, a data move, a holder of a partition the plan changes, an exclusive opener, a
// flock, an image attached to a loop device, no confirmation (and a mounted partition or swap
// the plan leaves alone, which is not refused: issue #29). Each exits non-zero with its
// message and leaves the disk byte-identical; without its protection each would have written
// (the same plan applies cleanly once the obstacle is gone, which every test checks last).
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>

#include "partalign/layout/plan.h"
#include "support/apply_layouts.h"
#include "support/device_test.h"
#include "support/disk_invariant.h"
#include "support/in_use_guards.h"
#include "support/loop_device.h"
#include "support/partitioned_loop.h"
#include "support/plan_maker.h"
#include "support/run_command.h"
#include "support/table_readers.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::PartitionedLoop;
using test::RunCommand;
using test::RunPartalign;

constexpr int kRefused = 3;
constexpr int kFailure = 1;

// A GPT disk (gpt_512) with a plan that moves partitions 1 and 2; partition 3 is aligned.
struct PlannedDisk {
  PartitionedLoop disk{test::ApplyLayoutNamed("gpt_512").script, 512};
  std::string plan_file = disk.File("plan.json");
  std::string backups = disk.File("backups");

  void MakePlan() { test::WritePlanFile(plan_file, test::MakeTableOnlyPlan(disk.device())); }
  std::string Node(int number) const { return disk.loop().PartitionPath(number); }
  CommandResult Apply(std::vector<std::string> extra = {}) const {
    std::vector<std::string> args{"apply", "--yes", "--backup-dir", backups};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(plan_file);
    return RunPartalign(args);
  }
  bool NoBackups() const {
    std::error_code ec;
    return !std::filesystem::exists(backups, ec) || std::filesystem::is_empty(backups, ec);
  }
};

// The refusal: its exit code, its message on stderr, "nothing was written", and no backup.
void ExpectRefusal(const CommandResult& r, int code, const std::string& message,
                   const PlannedDisk& d) {
  EXPECT_EQ(r.exit_code, code) << r.out << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos) << "expected: " << message << "\n" << r.err;
  EXPECT_NE(r.err.find("nothing was written"), std::string::npos) << r.err;
  EXPECT_TRUE(d.NoBackups());
}

void ExpectAppliesNow(const PlannedDisk& d) {
  CommandResult r = d.Apply();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST(ApplyRefusalTest, StalePlanNamesTheChange) {
  PARTALIGN_REQUIRE_DEVICES();
  PlannedDisk d;
  d.MakePlan();
  // The table changes after the plan was made: partition 3 gets another name.
  CommandResult s = RunCommand({"sfdisk", "--part-label", d.disk.device(), "3", "renamed"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const std::string before = d.disk.Snapshot("before.img");
  CommandResult r = d.Apply();
  ExpectRefusal(r, kRefused, "table fingerprint: plan xxh64:", d);
  // The same disk (its GUID), changed: said, and the command that plans it again.
  EXPECT_NE(r.err.find("it is the plan's disk (the same disk GUID "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("), but it changed since the plan was made:"), std::string::npos) << r.err;
  const std::string again = "partalign plan --output " + d.plan_file + " " + d.disk.device();
  EXPECT_NE(r.err.find("partalign: plan it again as it is now: " + again + "\n"), std::string::npos)
      << r.err;
  EXPECT_EQ(test::CmpFiles(d.disk.image(), before), "");
  // The command, run as printed, makes the plan that applies.
  CommandResult advice = test::RunAdvice(again, d.disk.dir().path());
  ASSERT_EQ(advice.exit_code, 0) << advice.out << advice.err;
  ExpectAppliesNow(d);
}

TEST(ApplyRefusalTest, PlanForAnotherDiskIsRefusedByIdentity) {
  PARTALIGN_REQUIRE_DEVICES();
  PlannedDisk d;
  d.MakePlan();
  // Same layout, same size: only the table's identity (GUIDs) tells them apart.
  PartitionedLoop twin(test::ApplyLayoutNamed("gpt_512").script, 512);
  PartitionedLoop bigger(test::ApplyLayoutNamed("gpt_512").script, 512, 128ull << 20);
  const std::string twin_before = twin.Snapshot("before.img");
  const std::string bigger_before = bigger.Snapshot("before.img");
  CommandResult r = d.Apply({"--target", twin.device()});
  ExpectRefusal(r, kRefused, "table fingerprint: plan xxh64:", d);
  // Which case it is (the GUIDs differ: another disk) and the command that plans that disk.
  EXPECT_NE(r.err.find("it is another disk than the plan's '" + d.disk.device() +
                       "' (its table's disk GUID is '"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("changed since the plan was made"), std::string::npos) << r.err;
  const std::string own = d.disk.File("plan-" + twin.loop().name() + ".json");
  const std::string plan_twin = "partalign plan --output " + own + " " + twin.device();
  EXPECT_NE(r.err.find("partalign: to align '" + twin.device() +
                       "', plan it (the plan stays right for its own disk): " + plan_twin + "\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(test::CmpFiles(twin.image(), twin_before), "");
  r = d.Apply({"--target", bigger.device()});
  ExpectRefusal(r, kRefused, "size: plan 67108864 bytes, disk 134217728 bytes", d);
  EXPECT_NE(r.err.find("it is another disk than the plan's"), std::string::npos) << r.err;
  EXPECT_EQ(test::CmpFiles(bigger.image(), bigger_before), "");
  // The printed command plans the twin into a file of its own; the plan file stays.
  const std::string plan_before = test::ReadFile(d.plan_file);
  CommandResult advice = test::RunAdvice(plan_twin, d.disk.dir().path());
  ASSERT_EQ(advice.exit_code, 0) << advice.out << advice.err;
  EXPECT_TRUE(std::filesystem::exists(own));
  EXPECT_EQ(test::ReadFile(d.plan_file), plan_before);
  ExpectAppliesNow(d);
}

TEST(ApplyRefusalTest, TruncatedOrCorruptPlanIsRejected) {
  PARTALIGN_REQUIRE_DEVICES();
  PlannedDisk d;
  d.MakePlan();
  const std::string good = test::ReadFile(d.plan_file);
  const std::string before = d.disk.Snapshot("before.img");
  test::WriteFile(d.plan_file, good.substr(0, good.size() / 2));
  ExpectRefusal(d.Apply(), kFailure, "not valid JSON (truncated or corrupt?)", d);
  nlohmann::json j = nlohmann::json::parse(good);
  j.erase("table_fingerprint");
  test::WriteFile(d.plan_file, j.dump());
  ExpectRefusal(d.Apply(), kFailure, "table_fingerprint: missing", d);
  j = nlohmann::json::parse(good);
  j["actions"][0]["new_start_sector"] = "2048";
  test::WriteFile(d.plan_file, j.dump());
  ExpectRefusal(d.Apply(), kFailure, "actions[0].new_start_sector: not a non-negative integer", d);
  EXPECT_EQ(test::CmpFiles(d.disk.image(), before), "");
  test::WriteFile(d.plan_file, good);
  ExpectAppliesNow(d);
}

TEST(ApplyRefusalTest, DataMoveRefusesAJournalAPowerFailureWouldErase) {
  PARTALIGN_REQUIRE_DEVICES();
  PlannedDisk d;
  CommandResult mkfs = RunCommand({"mkfs.ext4", "-q", "-F", d.Node(1)});
  ASSERT_EQ(mkfs.exit_code, 0) << mkfs.err;
  // partition 1 holds a filesystem and starts off the grain: a real plan moves its data.
  CommandResult plan = RunPartalign({"plan", "-o", d.plan_file, d.disk.device()});
  ASSERT_EQ(plan.exit_code, 0) << plan.out << plan.err;
  ASSERT_NE(test::ReadFile(d.plan_file).find("\"move-data\""), std::string::npos);
  const std::string before = d.disk.Snapshot("before.img");
  const std::map<std::string, std::string> env{{"PARTALIGN_STATE_DIR", d.disk.File("state")}};
  // /dev/shm is tmpfs: a journal there is gone after a power failure, with the move half done.
  const std::string volatile_dir = "/dev/shm/partalign-test-journals-" + std::to_string(getpid());
  const std::vector<std::string> args{"apply", "--yes", "--backup-dir", d.backups, "--journal-dir"};
  std::vector<std::string> on_tmpfs = args;
  on_tmpfs.insert(on_tmpfs.end(), {volatile_dir, d.plan_file});
  CommandResult r = RunPartalign(on_tmpfs, "", env);
  ExpectRefusal(r, kRefused, "tmpfs", d);
  EXPECT_FALSE(std::filesystem::exists(volatile_dir));
  EXPECT_EQ(test::CmpFiles(d.disk.image(), before), "");
  // The journal on the test's own disk: the same plan applies.
  std::vector<std::string> on_disk = args;
  on_disk.insert(on_disk.end(), {d.disk.File("journals"), d.plan_file});
  CommandResult ok = RunPartalign(on_disk, "", env);
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
}

TEST(ApplyRefusalTest, UnfinishedMoveOnTheDiskBlocksApplyAndRestore) {
  PARTALIGN_REQUIRE_DEVICES();
  PlannedDisk d;
  d.MakePlan();  // table-only
  const std::map<std::string, std::string> env{{"PARTALIGN_STATE_DIR", d.disk.File("state")}};
  const std::string journal = d.disk.File("move.journal");
  // A move inside partition 1 (it holds nothing), killed after its 3rd write: its journal is
  // registered for the disk and the disk is part-way.
  std::map<std::string, std::string> kill = env;
  kill["PARTALIGN_TEST_KILL_AFTER"] = "move:3";
  CommandResult killed =
      RunPartalign({"move", d.disk.device(), "--from", "32256", "--to", "1MiB", "--length", "4MiB",
                    "--chunk", "256KiB", "--journal", journal, "--yes"},
                   "", kill);
  ASSERT_EQ(killed.exit_code, 128 + 9) << killed.out << killed.err;
  const std::string before = d.disk.Snapshot("before.img");
  CommandResult r =
      RunPartalign({"apply", "--yes", "--backup-dir", d.backups, d.plan_file}, "", env);
  // An unfinished move is one exit status, 4, whoever finds it (issue #37).
  ExpectRefusal(r, 4, "has an unfinished move (journal '" + journal + "')", d);
  EXPECT_EQ(test::CmpFiles(d.disk.image(), before), "");

  // Undo the move; the plan applies, and restore of its backup is blocked by a new unfinished
  // move the same way.
  CommandResult back = RunPartalign({"resume", "--rollback", journal, "--yes"}, "", env);
  ASSERT_EQ(back.exit_code, 0) << back.out << back.err;
  CommandResult ok =
      RunPartalign({"apply", "--yes", "--backup-dir", d.backups, d.plan_file}, "", env);
  ASSERT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  const std::vector<std::string> backups = test::FilesIn(d.backups, ".partalign-backup");
  ASSERT_EQ(backups.size(), 1u);
  killed = RunPartalign({"move", d.disk.device(), "--from", "1MiB", "--to", "2MiB", "--length",
                         "4MiB", "--chunk", "256KiB", "--journal", journal, "--yes"},
                        "", kill);
  ASSERT_EQ(killed.exit_code, 128 + 9) << killed.out << killed.err;
  CommandResult restore =
      RunPartalign({"restore", "--yes", "--backup-dir", d.disk.File("undo"), backups[0]}, "", env);
  EXPECT_EQ(restore.exit_code, 4) << restore.out << restore.err;
  EXPECT_NE(restore.err.find("has an unfinished move"), std::string::npos) << restore.err;
  EXPECT_FALSE(std::filesystem::exists(d.disk.File("undo")));
}

// fdisk's DOS layout of old: logical partition 5 at 65598 holds ext4, the EBR of partition 6
// sits in the 63-sector gap after it. The plan moves partition 5 up to 69632, over that EBR,
// which the table on the disk needs until the step's table is written: killed in between (or
// rolled back) the disk would keep a table without partition 6. Refused before anything is
// written.
// fdisk's DOS layout of old: partition 5 moves up over the sector where the EBR of partition 6
// (empty) is. This was refused before issue 38 ("would overwrite sector 163964, the EBR of
// partition 6 (old place)"); a table-only step now writes the table alone first, which puts
// that EBR out of the way, and the move follows.
TEST(ApplyRefusalTest, AnEbrInTheWayOfAMoveIsMovedByATableStepFirst) {
  PARTALIGN_REQUIRE_DEVICES();
  PartitionedLoop disk(
      "label: dos\n"
      "start=63, size=65472, type=83\n"
      "start=65535, size=114814, type=5\n"
      "start=65598, size=98304, type=83\n"
      "start=163965, size=16384, type=83\n",
      512, 100ull << 20);
  for (int n : {1, 5}) test::RunOrThrow({"mkfs.ext4", "-q", "-F", disk.loop().PartitionPath(n)});
  const std::string plan = disk.File("plan.json");
  CommandResult p = RunPartalign({"plan", disk.device(), "-o", plan});
  ASSERT_EQ(p.exit_code, 0) << p.out << p.err;
  ASSERT_NE(test::ReadFile(plan).find("move-data"), std::string::npos);
  const std::string before = disk.Snapshot("before.img");
  const std::string journals = disk.File("journals");
  CommandResult r = RunPartalign(
      {"apply", "--yes", "--backup-dir", disk.File("backups"), "--journal-dir", journals, plan}, "",
      {{"PARTALIGN_STATE_DIR", disk.File("state")}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Step 1/3: the table alone"), std::string::npos) << r.out;
  for (int n : {1, 5}) {
    CommandResult fsck = RunCommand({"e2fsck", "-fn", disk.loop().PartitionPath(n)});
    EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
  }
  EXPECT_EQ(test::DiskInvariantViolations(before, disk.device(),
                                          test::InvariantOptionsForPlan(plan, 512)),
            std::vector<std::string>{});
  EXPECT_EQ(test::TableReaderProblems(disk.loop(), 512), std::vector<std::string>{});
}

TEST(ApplyRefusalTest, FreshLayoutOverAPartitionWithDataIsRefused) {
  PARTALIGN_REQUIRE_DEVICES();
  PlannedDisk d;
  // Partition 2 (sector 40000) holds data: a fresh table would orphan it.
  {
    std::fstream f(d.disk.image(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40000ll * 512);
    f.write("not empty", 9);
  }
  d.MakePlan();
  nlohmann::json j = nlohmann::json::parse(test::ReadFile(d.plan_file));
  j["actions"] = nlohmann::json::array();
  j["layout"] = {{"label", "gpt"},
                 {"first_usable_lba", 2048},
                 {"last_usable_lba", 100000},
                 {"partitions",
                  {{{"partition", 1},
                    {"start_sector", 2048},
                    {"end_sector", 4095},
                    {"type", "0FC63DAF-8483-4772-8E79-3D69D8477DE4"},
                    {"name", nullptr},
                    {"attributes", nullptr},
                    {"bootable", false}}}}};
  test::WriteFile(d.plan_file, j.dump());
  const std::string before = d.disk.Snapshot("before.img");
  CommandResult r = d.Apply();
  ExpectRefusal(r, kRefused, "partition 2 of '" + d.disk.device() + "' holds data", d);
  EXPECT_EQ(test::CmpFiles(d.disk.image(), before), "");
}

// A partition the plan neither moves nor writes may stay in use (issue #29): apply goes ahead,
// names it as left alone, and leaves it mounted (or swap) throughout.
TEST(ApplyRefusalTest, AMountedPartitionThePlanLeavesAloneStaysMounted) {
  PARTALIGN_REQUIRE_DEVICES();
  PlannedDisk d;
  test::MountGuard mounted(d.Node(3));
  d.MakePlan();
  CommandResult r = d.Apply();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("In use, left alone: partition 3 ('" + d.Node(3) + "') is mounted on '" +
                       mounted.mount_point() + "'"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(RunCommand({"mountpoint", "-q", mounted.mount_point()}).exit_code, 0);
  EXPECT_EQ(test::SfdiskJson(d.disk.device())["partitions"][0]["start"], 2048) << r.out;
}

TEST(ApplyRefusalTest, ActiveSwapThePlanLeavesAloneStays) {
  PARTALIGN_REQUIRE_DEVICES();
  PlannedDisk d;
  test::SwapGuard swap(d.Node(3));
  d.MakePlan();
  CommandResult r = d.Apply();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("In use, left alone: partition 3 ('" + d.Node(3) + "') is active swap"),
            std::string::npos)
      << r.out;
  EXPECT_NE(test::ReadFile("/proc/swaps").find(d.Node(3)), std::string::npos);
}

// A loop device on a partition the plan changes holds it: refused, named, nothing written.
TEST(ApplyRefusalTest, LoopDeviceOnAPartitionThePlanChangesIsAHolder) {
  PARTALIGN_REQUIRE_DEVICES();
  PlannedDisk d;
  d.MakePlan();
  const std::string before = d.disk.Snapshot("before.img");
  {
    test::LoopDevice holder(d.Node(2), 512);
    CommandResult r = d.Apply();
    ExpectRefusal(r, kRefused,
                  "partition 2 ('" + d.Node(2) + "') is the backing device of loop device '" +
                      holder.path() + "', and the plan changes it",
                  d);
    EXPECT_EQ(test::CmpFiles(d.disk.image(), before), "");
  }
  ExpectAppliesNow(d);
}

TEST(ApplyRefusalTest, ExclusiveOpenerAndFlockHolderAreRefused) {
  PARTALIGN_REQUIRE_DEVICES();
  PlannedDisk d;
  d.MakePlan();
  const std::string before = d.disk.Snapshot("before.img");
  {
    test::HoldGuard exclusive(d.disk.device(), /*flock_only=*/false);
    ExpectRefusal(d.Apply(), kRefused,
                  "cannot open '" + d.disk.device() + "' exclusively: it is in use", d);
  }
  {
    test::HoldGuard locked(d.disk.device(), /*flock_only=*/true);
    ExpectRefusal(d.Apply(), kRefused, "'" + d.disk.device() + "' is locked by another program", d);
  }
  EXPECT_EQ(test::CmpFiles(d.disk.image(), before), "");
  ExpectAppliesNow(d);
}

TEST(ApplyRefusalTest, NoConfirmationWithoutATerminal) {
  PARTALIGN_REQUIRE_DEVICES();
  PlannedDisk d;
  d.MakePlan();
  const std::string before = d.disk.Snapshot("before.img");
  // stdin is a pipe: apply must not take "y" from it as a confirmation.
  CommandResult r = RunPartalign({"apply", "--backup-dir", d.backups, d.plan_file}, "y\n");
  ExpectRefusal(r, kRefused, "standard input is not a terminal (use --yes)", d);
  EXPECT_EQ(test::CmpFiles(d.disk.image(), before), "");
}

TEST(ApplyRefusalTest, TerminalAnswerDecides) {
  PARTALIGN_REQUIRE_DEVICES();
  PlannedDisk d;
  d.MakePlan();
  const std::string before = d.disk.Snapshot("before.img");
  // script(1) gives apply a terminal and types our answer into it.
  auto on_terminal = [&](const std::string& answer) {
    std::string command =
        "'" PARTALIGN_BINARY "' apply --backup-dir '" + d.backups + "' '" + d.plan_file + "'";
    return RunCommand({"script", "--quiet", "--return", "--command", command, "/dev/null"}, answer);
  };
  CommandResult no = on_terminal("n\n");
  EXPECT_EQ(no.exit_code, kRefused) << no.out << no.err;
  EXPECT_NE(no.out.find("Apply these changes to '" + d.disk.device() + "'? [y/N]"),
            std::string::npos)
      << no.out;
  EXPECT_NE(no.out.find("not confirmed; nothing was written"), std::string::npos) << no.out;
  EXPECT_TRUE(d.NoBackups());
  EXPECT_EQ(test::CmpFiles(d.disk.image(), before), "");
  CommandResult yes = on_terminal("y\n");
  EXPECT_EQ(yes.exit_code, 0) << yes.out << yes.err;
  EXPECT_NE(test::CmpFiles(d.disk.image(), before), "");
}

TEST(ApplyRefusalTest, ImageAttachedToALoopDeviceIsInUse) {
  PARTALIGN_REQUIRE_DEVICES();
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, 64ull << 20);
  test::SfdiskImage(image, test::ApplyLayoutNamed("gpt_512").script, 512);
  const std::string plan_file = dir.File("plan.json");
  test::WritePlanFile(plan_file, test::MakeTableOnlyPlan(image));
  const std::string before = dir.File("before.img");
  ASSERT_EQ(RunCommand({"cp", "--sparse=always", image, before}).exit_code, 0);
  const std::vector<std::string> apply{"apply", "--yes", "--backup-dir", dir.File("b"), plan_file};
  {
    test::LoopDevice attached(image, 512);
    CommandResult r = RunPartalign(apply);
    EXPECT_EQ(r.exit_code, kRefused) << r.err;
    EXPECT_NE(r.err.find("'" + image + "' is attached to loop device '" + attached.path() + "'"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(test::CmpFiles(image, before), "");
  }
  CommandResult r = RunPartalign(apply);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(ApplyRefusalTest, AssumedTopologyMustBeAssumedAgain) {
  PARTALIGN_REQUIRE_DEVICES();
  PlannedDisk d;
  Plan plan = test::MakeTableOnlyPlan(d.disk.device());
  plan.topology.physical_sector_size = 4096;
  plan.topology.minimum_io_size = 4096;
  plan.topology.origin = TopologyOrigin::kAssumed;
  test::WritePlanFile(d.plan_file, plan);
  const std::string before = d.disk.Snapshot("before.img");
  CommandResult r = d.Apply();
  ExpectRefusal(r, kRefused, "topology: physical sector size: plan 4096, disk 512", d);
  const std::string spec = "log=512,phys=4096,min-io=4096,opt-io=0,align-offset=0";
  EXPECT_NE(r.err.find("--assume '" + spec + "'"), std::string::npos) << r.err;
  EXPECT_EQ(test::CmpFiles(d.disk.image(), before), "");
  r = d.Apply({"--assume", spec});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace partalign
