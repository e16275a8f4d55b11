// SPDX-License-Identifier: GPL-3.0-or-later
// partalign apply of plans that move data, end to end on loop devices: partitions with ext4
// and files at the offsets parted leaves behind a JMicron bridge (GPT 512, GPT 4096) and a DOS
// table whose logical partition moves with its EBR. The real planner makes the plan; after
// apply, sfdisk (the oracle) and the kernel see the plan's table, e2fsck passes and every file
// reads back. Kills mid-move are finished with resume and a new plan; restore refuses the
// backups of moves; --dry-run writes nothing.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include <fmt/format.h>

#include "support/device_test.h"
#include "support/disk_invariant.h"
#include "support/mount_point.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::FilesIn;
using test::PartitionedLoop;
using test::RunCommand;
using test::RunPartalign;
using test::SfdiskJson;

struct MoveLayout {
  std::string name;
  unsigned sector_size = 512;
  std::string script;
  std::vector<int> data_partitions;  ///< get ext4 and files
  unsigned long long size_bytes = 192ull << 20;
};

std::vector<MoveLayout> MoveLayouts() {
  return {
      {"gpt_512",
       512,
       "label: gpt\nfirst-lba: 34\nstart=63, size=65472\nstart=65535, size=131070\n"
       "start=196605, size=131070\n",
       {1, 2}},
      {"gpt_4096",
       4096,
       "label: gpt\nfirst-lba: 6\nstart=7, size=8184\nstart=8191, size=16383\n"
       "start=24575, size=16383\n",
       {1, 2}},
      // Partition 5 starts 63 sectors into the extended partition (its EBR in front of it):
      // both move, the EBR with them. Partition 6's EBR lies beyond partition 5's new end (a
      // move may not cover an EBR the table on disk still uses: ApplyRefusalTest.
      // AnEbrInTheWayOfAMoveIsMovedByATableStepFirst has the layout where it would).
      {"dos_512",
       512,
       "label: dos\nstart=63, size=65472, type=83\nstart=65535, size=262140, type=5\n"
       "start=65598, size=131007, type=83\nstart=204863, size=65472, type=83\n",
       {1, 5}},
  };
}

void PrintTo(const MoveLayout& layout, std::ostream* os) { *os << layout.name; }

// Partition number -> start sector, as sfdisk reads the table.
std::map<int, uint64_t> SfdiskStarts(const std::string& device) {
  std::map<int, uint64_t> starts;
  const nlohmann::json table = SfdiskJson(device);
  for (const nlohmann::json& p : table["partitions"]) {
    starts[std::stoi(p["node"].get<std::string>().substr(device.size() + 1))] = p["start"];
  }
  return starts;
}

class ApplyMoveTest : public ::testing::TestWithParam<MoveLayout> {
 protected:
  void SetUp() override {
    PARTALIGN_REQUIRE_DEVICES();
    const MoveLayout& layout = GetParam();
    disk_ = std::make_unique<PartitionedLoop>(layout.script, layout.sector_size, layout.size_bytes);
    std::filesystem::create_directories(disk_->File("state"));
    std::filesystem::create_directories(disk_->File("mnt"));
    std::mt19937_64 random(layout.sector_size + layout.data_partitions.size());
    for (int number : layout.data_partitions) {
      const std::string node = disk_->loop().PartitionPath(number);
      CommandResult mkfs = RunCommand({"mkfs.ext4", "-q", "-F", node});
      ASSERT_EQ(mkfs.exit_code, 0) << mkfs.err;
      test::MountPoint mounted(node, disk_->File("mnt"));
      std::filesystem::create_directories(disk_->File("mnt/deep/er"));
      for (int i = 0; i < 4; ++i) {
        // Random bytes (incompressible, no holes), a few MiB, odd sizes.
        std::string content((1 + i) * 700001 + number, '\0');
        for (char& c : content) c = static_cast<char>(random());
        const std::string name = fmt::format("{}file{}-{}", i % 2 ? "deep/er/" : "", number, i);
        test::WriteFile(disk_->File("mnt/" + name), content);
        files_[number][name] = std::move(content);
      }
      ASSERT_TRUE(mounted.Unmount());
    }
  }

  std::map<std::string, std::string> Env() const {
    return {{"PARTALIGN_STATE_DIR", disk_->File("state")}};
  }

  CommandResult Partalign(std::vector<std::string> args, const std::string& input = "") const {
    return RunPartalign(args, input, Env());
  }

  // partalign plan -o, checked: at least two partitions move data.
  std::string MakePlan(const std::string& name) const {
    const std::string file = disk_->File(name);
    CommandResult r = Partalign({"plan", "-o", file, disk_->device()});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return file;
  }

  CommandResult Apply(const std::string& plan, std::vector<std::string> extra = {}) const {
    return Partalign(test::ApplyArgs(*disk_, plan, extra));
  }

  // The disk invariant (support/disk_invariant.h) against `before`, for `plan_file`.
  void ExpectInvariant(const std::string& before, const std::string& plan_file) const {
    for (const std::string& v : test::DiskInvariantViolations(
             before, disk_->device(),
             test::InvariantOptionsForPlan(plan_file, GetParam().sector_size))) {
      ADD_FAILURE() << v;
    }
  }

  // Every data partition: e2fsck clean, every file back with its bytes.
  void ExpectFilesIntact() const {
    for (const auto& [number, files] : files_) {
      const std::string node = disk_->loop().PartitionPath(number);
      CommandResult fsck = RunCommand({"e2fsck", "-fn", node});
      EXPECT_EQ(fsck.exit_code, 0) << node << "\n" << fsck.out << fsck.err;
      test::MountPoint mounted(node, disk_->File("mnt"), "ro");
      for (const auto& [name, content] : files) {
        EXPECT_TRUE(test::ReadFile(disk_->File("mnt/" + name)) == content)
            << "partition " << number << ": " << name;
      }
    }
  }

  // The table sfdisk reads is the plan's, and the kernel was told.
  void ExpectPlanApplied(const nlohmann::json& plan) const {
    std::map<int, uint64_t> starts = SfdiskStarts(disk_->device());
    const unsigned ss = GetParam().sector_size;
    for (const nlohmann::json& a : plan["actions"]) {
      const int number = a["partition"];
      const std::string kind = a["kind"];
      const uint64_t start = kind == "move-data" || kind == "table-only"
                                 ? a["new_start_sector"].get<uint64_t>()
                                 : a["old_start_sector"].get<uint64_t>();
      EXPECT_EQ(starts[number], start) << a;
      if (number != 2 || GetParam().name.rfind("dos", 0) != 0) {  // not the extended one
        EXPECT_EQ(test::KernelStartSize(disk_->loop(), number).first, start * ss / 512) << a;
      }
    }
  }

  static nlohmann::json ReadJson(const std::string& file) {
    return nlohmann::json::parse(test::ReadFile(file), nullptr, false);
  }

  std::unique_ptr<PartitionedLoop> disk_;
  std::map<int, std::map<std::string, std::string>> files_;
};

TEST_P(ApplyMoveTest, MovesEveryPartitionAndKeepsEveryFile) {
  const std::string before = disk_->Snapshot("before.img");
  const std::string plan_file = MakePlan("plan.json");
  nlohmann::json plan = ReadJson(plan_file);
  int moves = 0;
  for (const nlohmann::json& a : plan["actions"]) moves += a["kind"] == "move-data";
  ASSERT_GE(moves, 2) << plan.dump(2);

  CommandResult r = Apply(plan_file);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Step 2/"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Verified: the table on '" + disk_->device() + "' matches the plan"),
            std::string::npos)
      << r.out;
  ExpectPlanApplied(plan);
  ExpectFilesIntact();
  ExpectInvariant(before, plan_file);
  // One backup per step, each recording the moves still to come; no journal or registration
  // is left behind.
  EXPECT_EQ(FilesIn(disk_->File("backups"), ".partalign-backup").size(),
            static_cast<size_t>(moves));
  EXPECT_TRUE(FilesIn(disk_->File("journals"), ".partalign-journal").empty());
  EXPECT_TRUE(FilesIn(disk_->File("state/journals"), ".json").empty());
  // The disk is aligned now: audit agrees.
  CommandResult audit = Partalign({"audit", disk_->device()});
  EXPECT_EQ(audit.exit_code, 0) << audit.out << audit.err;
  if (GetParam().name.rfind("gpt", 0) == 0) {
    CommandResult v = RunCommand({"sgdisk", "--verify", disk_->device()});
    EXPECT_NE(v.out.find("No problems found"), std::string::npos) << v.out << v.err;
  }
}

// --way forces the way of every step: the flush-ordered way (no saved copy) moves every
// partition as the default does; --at-next-boot refuses it (the boot chooses when it moves).
TEST_P(ApplyMoveTest, AForcedWayIsTheWayOfEveryStep) {
  const std::string before = disk_->Snapshot("before.img");
  const std::string plan_file = MakePlan("plan.json");
  nlohmann::json plan = ReadJson(plan_file);
  size_t moves = 0;
  for (const nlohmann::json& a : plan["actions"]) moves += a["kind"] == "move-data";
  ASSERT_GE(moves, 2u) << plan.dump(2);

  CommandResult staged =
      Partalign({"apply", "--yes", "--at-next-boot", "--way", "copies", plan_file});
  EXPECT_EQ(staged.exit_code, 1) << staged.out << staged.err;
  EXPECT_NE(staged.err.find("takes no --way"), std::string::npos) << staged.err;
  EXPECT_EQ(test::CmpFiles(before, disk_->device()), "");

  CommandResult r = Apply(plan_file, {"--way", "ordered"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  size_t ordered = 0;
  for (size_t at = r.out.find("way: flush-ordered, no saved copies (asked");
       at != std::string::npos;
       at = r.out.find("way: flush-ordered, no saved copies (asked", at + 1)) {
    ++ordered;
  }
  EXPECT_EQ(ordered, moves) << r.out;
  EXPECT_EQ(r.out.find("way: saved copies"), std::string::npos) << r.out;
  ExpectPlanApplied(plan);
  ExpectFilesIntact();
  ExpectInvariant(before, plan_file);
}

TEST_P(ApplyMoveTest, DryRunWritesNothingAndJsonListsTheSteps) {
  const std::string plan_file = MakePlan("plan.json");
  const std::string before = disk_->Snapshot("before.img");
  CommandResult r = Apply(plan_file, {"--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Dry run: nothing was written."), std::string::npos) << r.out;
  CommandResult j = Apply(plan_file, {"--dry-run", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.out << j.err;
  EXPECT_EQ(test::CmpFiles(disk_->image(), before), "");
  EXPECT_FALSE(std::filesystem::exists(disk_->File("journals")));
  EXPECT_FALSE(std::filesystem::exists(disk_->File("backups")));

  nlohmann::json doc = nlohmann::json::parse(j.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << j.out;
  nlohmann::json plan = ReadJson(plan_file);
  std::map<uint32_t, nlohmann::json> moves;
  for (const nlohmann::json& a : plan["actions"]) {
    if (a["kind"] == "move-data") moves[a["partition"]] = a;
  }
  ASSERT_EQ(doc["steps"].size(), moves.size()) << doc.dump(2);
  const unsigned ss = GetParam().sector_size;
  std::string previous = doc["table_fingerprint"];
  for (const nlohmann::json& s : doc["steps"]) {
    const nlohmann::json& a = moves.at(s["partition"]);
    EXPECT_EQ(s["source_bytes"], a["old_start_sector"].get<uint64_t>() * ss);
    EXPECT_EQ(s["dest_bytes"], a["new_start_sector"].get<uint64_t>() * ss);
    EXPECT_EQ(s["length_bytes"], a["bytes_to_move"]);
    // Each step starts from the table the step before made.
    EXPECT_EQ(s["table_fingerprint"], previous);
    previous = s["new_table_fingerprint"];
  }
  EXPECT_EQ(doc["new_table_fingerprint"], previous);
}

TEST_P(ApplyMoveTest, KilledMidMoveIsFinishedByResumeAndANewPlan) {
  const std::string before = disk_->Snapshot("before.img");
  const std::string plan_file = MakePlan("plan.json");
  std::map<std::string, std::string> env = Env();
  env["PARTALIGN_TEST_KILL_AFTER"] = "move:3";
  CommandResult killed = RunPartalign({"apply", "--yes", "--backup-dir", disk_->File("backups"),
                                       "--journal-dir", disk_->File("journals"), plan_file},
                                      "", env);
  ASSERT_EQ(killed.exit_code, 128 + 9) << killed.out << killed.err;
  std::vector<std::string> journals = FilesIn(disk_->File("journals"), ".partalign-journal");
  ASSERT_EQ(journals.size(), 1u);

  // Another apply must not touch the disk while a move is unfinished.
  CommandResult again = Apply(plan_file);
  EXPECT_EQ(again.exit_code, 4) << again.out << again.err;
  EXPECT_NE(again.err.find("unfinished move"), std::string::npos) << again.err;

  CommandResult resumed = Partalign({"resume", journals[0], "--yes"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  // Step 1 is complete now: the old plan no longer fits the table, a new one does the rest.
  CommandResult stale = Apply(plan_file);
  EXPECT_EQ(stale.exit_code, 3) << stale.out << stale.err;
  const std::string rest = MakePlan("rest.json");
  CommandResult finished = Apply(rest);
  ASSERT_EQ(finished.exit_code, 0) << finished.out << finished.err;
  ExpectPlanApplied(ReadJson(plan_file));
  ExpectFilesIntact();
  ExpectInvariant(before, plan_file);
}

TEST_P(ApplyMoveTest, RestoreRefusesABackupTakenBeforeAMove) {
  const std::string plan_file = MakePlan("plan.json");
  CommandResult r = Apply(plan_file);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<std::string> backups = FilesIn(disk_->File("backups"), ".partalign-backup");
  ASSERT_FALSE(backups.empty());
  const std::string after = disk_->Snapshot("after.img");
  for (const std::string& backup : backups) {
    CommandResult restore = Partalign({"restore", "--yes", backup});
    EXPECT_EQ(restore.exit_code, 3) << restore.out << restore.err;
    EXPECT_NE(restore.err.find("data that has moved"), std::string::npos) << restore.err;
  }
  EXPECT_EQ(test::CmpFiles(disk_->image(), after), "");
  ExpectFilesIntact();
}

TEST_P(ApplyMoveTest, RefusesWhileAPartitionIsMounted) {
  const std::string plan_file = MakePlan("plan.json");
  const int number = GetParam().data_partitions.back();
  const std::string before = disk_->Snapshot("before.img");
  {
    test::MountPoint mounted(disk_->loop().PartitionPath(number), disk_->File("mnt"), "ro");
    CommandResult r = Apply(plan_file);
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_NE(r.err.find("mounted"), std::string::npos) << r.err;
  }
  EXPECT_EQ(test::CmpFiles(disk_->image(), before), "");
}

INSTANTIATE_TEST_SUITE_P(Layouts, ApplyMoveTest, ::testing::ValuesIn(MoveLayouts()),
                         [](const auto& param_info) { return param_info.param.name; });

}  // namespace
}  // namespace partalign
