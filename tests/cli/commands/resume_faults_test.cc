// SPDX-License-Identifier: GPL-3.0-or-later
// Resume and the registry under the faults the journal's failure model did not name (issue
// #27, docs/mover.md §7 and §9): a second device over the same storage with a partition
// mounted; a disk put back from a copy after a kill; a lost registry and a registry on tmpfs;
// a journal that a running partalign holds; a journal whose state blocks were zeroed; the
// kernel's view after resume; directory checks before the confirmation; and an unfinished move
// visible to every command that reads the disk. Each refusal leaves the disk byte for byte as it
// was; each recovery leaves every file intact.
#include <sys/file.h>
#include <sys/mount.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "io/move/mover.h"
#include "support/advice.h"
#include "support/device_test.h"
#include "support/disk_invariant.h"
#include "support/loop_device.h"
#include "support/mount_point.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::PartitionedLoop;
using test::RunCommand;

// partalign's state (the registry) in the disk's directory, where RunAdvice keeps it too: the
// advice each fault prints is run word for word there.
constexpr const char* kStateDir = "partalign-state";

// Partition 1 at 63 moves to 2048 (step 1), partition 2 at 65535 to 67584 (step 2); both ext4.
constexpr const char* kScript =
    "label: dos\nstart=63, size=65472, type=83\nstart=65535, size=131070, type=83\n";

// Each partition's (start, size) as sfdisk reads the table of `target`.
std::vector<std::pair<uint64_t, uint64_t>> Places(const std::string& target) {
  std::vector<std::pair<uint64_t, uint64_t>> places;
  for (const nlohmann::json& p : test::SfdiskJson(target)["partitions"]) {
    places.emplace_back(p["start"].get<uint64_t>(), p["size"].get<uint64_t>());
  }
  return places;
}

// The partitions `plan --json` (its output `text`) changes: actions other than "none".
std::vector<int> PlannedChanges(const std::string& text) {
  std::vector<int> changed;
  const nlohmann::json plan = nlohmann::json::parse(text, nullptr, false);
  EXPECT_TRUE(plan.is_object()) << text;
  if (!plan.is_object()) return changed;
  for (const nlohmann::json& a : plan["actions"]) {
    if (a["kind"] != "none") changed.push_back(a["partition"].get<int>());
  }
  return changed;
}

class ResumeFaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PARTALIGN_REQUIRE_DEVICES();
    disk_ = std::make_unique<PartitionedLoop>(kScript, 512, 128ull << 20);
    std::filesystem::create_directories(disk_->File(kStateDir));
    std::filesystem::create_directories(disk_->File("mnt"));
    std::mt19937_64 random(27);
    for (int number : {1, 2}) {
      const std::string node = disk_->loop().PartitionPath(number);
      test::RunOrThrow({"mkfs.ext4", "-q", "-F", node});
      test::MountPoint mounted(node, disk_->File("mnt"));
      for (int i = 0; i < 3; ++i) {
        std::string content((1 + i) * 900001 + number, '\0');
        for (char& c : content) c = static_cast<char>(random());
        const std::string name = fmt::format("file{}-{}", number, i);
        test::WriteFile(disk_->File("mnt/" + name), content);
        files_[number][name] = std::move(content);
      }
      ASSERT_TRUE(mounted.Unmount());
    }
    plan_ = disk_->File("plan.json");
    const CommandResult r = Partalign({"plan", "-o", plan_, disk_->device()});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }

  std::map<std::string, std::string> Env() const {
    return {{"PARTALIGN_STATE_DIR", disk_->File(kStateDir)}};
  }

  CommandResult Partalign(const std::vector<std::string>& args,
                          std::map<std::string, std::string> env = {}) const {
    env.merge(Env());
    return test::RunPartalign(args, "", env);
  }

  // apply killed in step 1 (partition 2 moves first, to make room for partition 1): returns
  // its journal (registered in the state directory). `point`: PARTALIGN_TEST_KILL_AFTER;
  // "table:1" is after every chunk was moved and verified, whatever the batches were.
  // `output`: what the killed apply printed.
  std::string KilledApply(const std::string& point = "move:3",
                          CommandResult* output = nullptr) const {
    const CommandResult killed =
        Partalign(test::ApplyArgs(*disk_, plan_), {{"PARTALIGN_TEST_KILL_AFTER", point}});
    EXPECT_EQ(killed.exit_code, 128 + 9) << killed.out << killed.err;
    if (output) *output = killed;
    const std::vector<std::string> journals =
        test::FilesIn(disk_->File("journals"), ".partalign-journal");
    EXPECT_EQ(journals.size(), 1u);
    return journals.empty() ? "" : journals[0];
  }

  void ExpectFilesIntact() const {
    for (const auto& [number, files] : files_) {
      const std::string node = disk_->loop().PartitionPath(number);
      const CommandResult fsck = RunCommand({"e2fsck", "-fn", node});
      EXPECT_EQ(fsck.exit_code, 0) << node << "\n" << fsck.out << fsck.err;
      test::MountPoint mounted(node, disk_->File("mnt"), "ro");
      for (const auto& [name, content] : files) {
        EXPECT_TRUE(test::ReadFile(disk_->File("mnt/" + name)) == content)
            << "partition " << number << ": " << name;
      }
    }
  }

  // Resumes `journal` (unless empty), then applies what is left of the plan: the disk ends
  // aligned with every file.
  void FinishAndExpectIntact(const std::string& journal) const {
    if (!journal.empty()) {
      const CommandResult resumed = Partalign({"resume", journal, "--yes"});
      ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
    }
    const CommandResult rest = Partalign({"plan", "-o", disk_->File("rest.json"), disk_->device()});
    ASSERT_EQ(rest.exit_code, 0) << rest.out << rest.err;
    const CommandResult applied = Partalign(test::ApplyArgs(*disk_, disk_->File("rest.json")));
    ASSERT_EQ(applied.exit_code, 0) << applied.out << applied.err;
    ExpectFilesIntact();
  }

  // `command`, advice partalign printed, run as a person pastes it in the disk's directory.
  CommandResult Advice(const std::string& command) const {
    EXPECT_FALSE(command.empty());
    return test::RunAdvice(command, disk_->dir().path());
  }

  // The disk against `before` with the plan applied: every file, every byte (the invariant).
  void ExpectPlannedLayoutKept(const std::string& before) const {
    ExpectFilesIntact();
    for (const std::string& v : test::DiskInvariantViolations(
             before, disk_->device(), test::InvariantOptionsForPlan(plan_, 512))) {
      ADD_FAILURE() << v;
    }
  }

  // `resume_advice` ("partalign resume J", as printed) run with --yes: the move of `journal`
  // is completed and its journal gone; then the rest of the plan, every file intact.
  void ResumeAsAdvisedAndFinish(const std::string& resume_advice,
                                const std::string& journal) const {
    const CommandResult resumed = Advice(resume_advice + " --yes");
    ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
    EXPECT_FALSE(std::filesystem::exists(journal));
    FinishAndExpectIntact("");
  }

  // `plan_advice` ("partalign plan DEV", as printed) saved with -o and applied: the disk ends
  // at the planned layout against `pristine`.
  void ApplyWhatIsLeft(const std::string& plan_advice, const std::string& pristine) const {
    const CommandResult saved = Advice(plan_advice + " -o rest.json");
    ASSERT_EQ(saved.exit_code, 0) << saved.out << saved.err;
    const CommandResult applied = Partalign(test::ApplyArgs(*disk_, disk_->File("rest.json")));
    ASSERT_EQ(applied.exit_code, 0) << applied.out << applied.err;
    ExpectPlannedLayoutKept(pristine);
  }

  // After an apply stopped in a step (its stderr `err`): the resume it names, then the plan it
  // names for what is left, both as printed, reach the planned layout against `pristine`.
  void ResumeAndApplyWhatIsLeft(const std::string& err, const std::string& pristine) const {
    const std::string resume = test::AdviceIn(err, "run '(partalign resume [^']+)' to complete it");
    const std::string plan =
        test::AdviceIn(err, "'(partalign plan [^']+)' makes a new plan for what is left");
    const CommandResult resumed = Advice(resume + " --yes");
    ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
    ApplyWhatIsLeft(plan, pristine);
  }

  std::unique_ptr<PartitionedLoop> disk_;
  std::map<int, std::map<std::string, std::string>> files_;
  std::string plan_;
};

// 1. Another loop device over the same image, partition 2 mounted through it: the partition is
// in use here too, and apply writes nothing.
TEST_F(ResumeFaultsTest, APartitionMountedThroughASecondLoopDeviceIsInUse) {
  const std::string before = disk_->Snapshot("before.img");
  test::LoopDevice other(disk_->image(), 512);
  test::AddKernelPartitions(other, 512);
  {
    // Read-only: a read-write mount writes the superblock, which is not apply's doing.
    test::MountPoint mounted(other.PartitionPath(2), disk_->File("mnt"), "ro");
    const CommandResult r = Partalign(test::ApplyArgs(*disk_, plan_));
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_NE(r.err.find(fmt::format("partition 2 ('{}') is mounted on '{}' through '{}'",
                                     disk_->loop().PartitionPath(2), disk_->File("mnt"),
                                     other.PartitionPath(2))),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("another loop device over the same file"), std::string::npos) << r.err;
  }
  EXPECT_EQ(test::CmpFiles(disk_->image(), before), "");
}

// 1b. An offset loop device over partition 2 alone (as `losetup -o` makes for a partition
// image), mounted: the same.
TEST_F(ResumeFaultsTest, AnOffsetLoopOverAPartitionMountedIsInUse) {
  const std::string before = disk_->Snapshot("before.img");
  const CommandResult attached =
      RunCommand({"losetup", "--find", "--show", "--offset", std::to_string(65535ull * 512),
                  "--sizelimit", std::to_string(131070ull * 512), disk_->image()});
  ASSERT_EQ(attached.exit_code, 0) << attached.err;
  const std::string loop = attached.out.substr(0, attached.out.find('\n'));
  struct Detach {
    std::string path;
    ~Detach() { RunCommand({"losetup", "-d", path}); }
  } detach{loop};
  {
    test::MountPoint mounted(loop, disk_->File("mnt"), "ro");
    const CommandResult r = Partalign(test::ApplyArgs(*disk_, plan_));
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_NE(r.err.find(fmt::format("partition 2 ('{}') is mounted on '{}' through '{}'",
                                     disk_->loop().PartitionPath(2), disk_->File("mnt"), loop)),
              std::string::npos)
        << r.err;
  }
  EXPECT_EQ(test::CmpFiles(disk_->image(), before), "");
}

// 2. Killed mid-move, the disk put back from a copy taken before: resume proves the disk is
// not in the journal's state and writes nothing; --forget drops the journal; the plan applies.
TEST_F(ResumeFaultsTest, ADiskRestoredFromACopyIsNotResumed) {
  const std::string pristine = disk_->Snapshot("pristine.img");
  const std::string journal = KilledApply("table:1");
  ASSERT_FALSE(journal.empty());
  test::RunOrThrow({"dd", "if=" + pristine, "of=" + disk_->device(), "bs=1M", "conv=notrunc,fsync",
                    "status=none"});
  // Without --yes: refused before the question, for what the disk holds, not for the missing
  // --yes.
  const CommandResult asked = Partalign({"resume", journal});
  EXPECT_EQ(asked.exit_code, 3) << asked.out << asked.err;
  EXPECT_NE(asked.err.find("the disk no longer holds the interrupted move"), std::string::npos)
      << asked.err;
  EXPECT_EQ(asked.err.find("without --yes"), std::string::npos) << asked.err;
  const CommandResult r = Partalign({"resume", journal, "--yes"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("the disk no longer holds the interrupted move"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(fmt::format("partalign resume --forget {}", journal)), std::string::npos)
      << r.err;
  EXPECT_EQ(test::CmpFiles(disk_->image(), pristine), "") << "resume wrote a refused disk";
  const CommandResult rollback = Partalign({"resume", journal, "--rollback", "--yes"});
  EXPECT_EQ(rollback.exit_code, 3) << rollback.out << rollback.err;
  EXPECT_EQ(test::CmpFiles(disk_->image(), pristine), "") << "the rollback wrote a refused disk";

  // The advice, word for word: forget the journal; then the plan applies from the start.
  const CommandResult forgot = Advice(
      test::AdviceIn(r.err, "forget the journal: (partalign resume --forget [^\n]+)") + " --yes");
  ASSERT_EQ(forgot.exit_code, 0) << forgot.out << forgot.err;
  EXPECT_FALSE(std::filesystem::exists(journal));
  EXPECT_EQ(test::CmpFiles(disk_->image(), pristine), "");
  const CommandResult applied = Partalign(test::ApplyArgs(*disk_, plan_));
  ASSERT_EQ(applied.exit_code, 0) << applied.out << applied.err;
  ExpectPlannedLayoutKept(pristine);
}

// --forget refuses a journal whose move the disk still holds.
TEST_F(ResumeFaultsTest, ForgetRefusesAJournalTheDiskStillHolds) {
  const std::string journal = KilledApply();
  ASSERT_FALSE(journal.empty());
  const std::string half = disk_->Snapshot("half.img");
  const CommandResult r = Partalign({"resume", "--forget", journal, "--yes"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_TRUE(std::filesystem::exists(journal));
  EXPECT_EQ(test::CmpFiles(disk_->image(), half), "");
  // The advice, word for word: it completes the move.
  ResumeAsAdvisedAndFinish(test::AdviceIn(r.err, "run '(partalign resume [^']+)' to complete it"),
                           journal);
}

// 3. The registry lost (a state directory on storage that did not survive): apply still
// finds the unfinished move through its journal directory and writes nothing.
TEST_F(ResumeFaultsTest, ALostRegistryDoesNotHideTheJournal) {
  const std::string pristine = disk_->Snapshot("pristine.img");
  const std::string journal = KilledApply();
  ASSERT_FALSE(journal.empty());
  std::filesystem::remove_all(disk_->File(kStateDir));
  std::filesystem::create_directories(disk_->File(kStateDir));
  const std::string half = disk_->Snapshot("half.img");
  const CommandResult again = Partalign(test::ApplyArgs(*disk_, plan_));
  EXPECT_EQ(again.exit_code, 4) << again.out << again.err;
  EXPECT_NE(again.err.find("unfinished move"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find(journal), std::string::npos) << again.err;
  EXPECT_EQ(test::CmpFiles(disk_->image(), half), "");
  // The advice, word for word: the rollback it names puts the old layout back, and the plan
  // then applies from the start.
  const CommandResult back =
      Advice(test::AdviceIn(again.err, "'(partalign resume --rollback [^']+)' to undo it first") +
             " --yes");
  ASSERT_EQ(back.exit_code, 0) << back.out << back.err;
  EXPECT_FALSE(std::filesystem::exists(journal));
  ExpectFilesIntact();
  const CommandResult applied = Partalign(test::ApplyArgs(*disk_, plan_));
  ASSERT_EQ(applied.exit_code, 0) << applied.out << applied.err;
  ExpectPlannedLayoutKept(pristine);
}

// 3b. A registry on tmpfs is refused before anything is written: a reboot would lose it.
TEST_F(ResumeFaultsTest, ARegistryOnTmpfsIsRefused) {
  const std::string tmp = disk_->File("tmpfs");
  std::filesystem::create_directories(tmp);
  ASSERT_EQ(::mount("partalign-test", tmp.c_str(), "tmpfs", 0, "size=4m"), 0);
  struct Unmount {
    std::string path;
    ~Unmount() { ::umount2(path.c_str(), MNT_DETACH); }
  } unmount{tmp};
  const std::string before = disk_->Snapshot("before.img");
  const CommandResult r =
      test::RunPartalign(test::ApplyArgs(*disk_, plan_), "", {{"PARTALIGN_STATE_DIR", tmp}});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("the registry of unfinished moves"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("power failure"), std::string::npos) << r.err;
  EXPECT_EQ(test::CmpFiles(disk_->image(), before), "");
  EXPECT_TRUE(test::FilesIn(disk_->File("backups"), ".partalign-backup").empty());
}

// 4. A journal file another partalign holds (being created: not yet readable, not yet
// registered) is never called removable.
TEST_F(ResumeFaultsTest, AJournalHeldByARunningPartalignIsNotCalledRemovable) {
  std::filesystem::create_directories(disk_->File("journals"));
  const std::string journal = disk_->File("journals/starting.partalign-journal");
  test::WriteFile(journal, std::string(4096, '\0'));
  {
    const int fd = ::open(journal.c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::flock(fd, LOCK_EX), 0);
    const CommandResult held = Partalign({"resume", journal, "--yes"});
    ::close(fd);
    EXPECT_NE(held.exit_code, 0);
    EXPECT_NE(held.err.find("is held by a running partalign"), std::string::npos) << held.err;
    EXPECT_EQ(held.err.find("can be removed"), std::string::npos) << held.err;
  }
  // Once nothing holds it, resume removes it: a journal that no registration names and whose
  // header cannot be read never wrote a disk (I8).
  const CommandResult free = Partalign({"resume", journal, "--yes"});
  EXPECT_EQ(free.exit_code, 0) << free.out << free.err;
  EXPECT_NE(free.out.find("never wrote a disk"), std::string::npos) << free.out;
  EXPECT_FALSE(std::filesystem::exists(journal));
}

// 4b. A lock that is let go soon after resume looks (a partalign killed while it created the
// journal holds it until the killed process's I/O in flight completes, milliseconds after the
// process is gone: bench-kill-move's resume saw it so in 1 of 200 runs) is waited for, not
// reported as a running partalign.
TEST_F(ResumeFaultsTest, AJournalLockLetGoSoonIsWaitedFor) {
  std::filesystem::create_directories(disk_->File("journals"));
  const std::string journal = disk_->File("journals/killed.partalign-journal");
  test::WriteFile(journal, std::string(4096, '\0'));
  const int fd = ::open(journal.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  std::thread release([fd] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::close(fd);
  });
  const CommandResult resumed = Partalign({"resume", journal, "--yes"});
  release.join();
  EXPECT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_EQ(resumed.err.find("is held by a running partalign"), std::string::npos) << resumed.err;
  EXPECT_NE(resumed.out.find("never wrote a disk"), std::string::npos) << resumed.out;
  EXPECT_FALSE(std::filesystem::exists(journal));
}

// 5. A journal whose state blocks (both copies) were zeroed, while its digest table shows the copy
// had begun: refused, never read as "not started".
TEST_F(ResumeFaultsTest, ZeroedStateBlocksAreRefusedNotRestarted) {
  const std::string journal = KilledApply("table:1");
  ASSERT_FALSE(journal.empty());
  Result<JournalSummary> summary = InspectJournal(journal);
  ASSERT_TRUE(summary) << summary.error().message;
  ASSERT_TRUE(summary->state.has_value());
  const uint64_t at = summary->header.layout.state_offset;
  ASSERT_GT(at, 0u);
  // Both copies (version 3 keeps a mirror of the state blocks: one zeroed copy is not a fault
  // that stops a resume, MoveEngineTest.AnyOneDamagedJournalBlockStillResumesIntact).
  ASSERT_GT(summary->header.layout.mirror_bytes, 0u);
  for (uint64_t copy : {at, at + summary->header.layout.mirror_bytes}) {
    test::RunOrThrow({"dd", "if=/dev/zero", "of=" + journal, "bs=4096",
                      fmt::format("seek={}", copy / 4096), "count=2", "conv=notrunc,fsync",
                      "status=none"});
  }
  const std::string half = disk_->Snapshot("half.img");
  const CommandResult r = Partalign({"resume", journal, "--yes"});
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("digest table"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("erified"), std::string::npos) << r.out;
  EXPECT_EQ(test::CmpFiles(disk_->image(), half), "") << "resume wrote over half-moved data";
}

// 6. resume tells the kernel: the partition node starts where the table says afterwards, and
// the file system on it is clean.
TEST_F(ResumeFaultsTest, ResumeTellsTheKernelTheNewTable) {
  std::map<int, uint64_t> new_start;
  const nlohmann::json plan = nlohmann::json::parse(test::ReadFile(plan_));
  for (const nlohmann::json& a : plan["actions"]) {
    new_start[a["partition"].get<int>()] = a["new_start_sector"].get<uint64_t>();
  }
  ASSERT_NE(new_start[2], 65535u);
  const std::string journal = KilledApply("table:1");
  ASSERT_FALSE(journal.empty());
  EXPECT_EQ(test::KernelStartSize(disk_->loop(), 2).first, 65535u);
  const CommandResult resumed = Partalign({"resume", journal, "--yes"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_EQ(test::KernelStartSize(disk_->loop(), 2).first, new_start[2]);
  const CommandResult fsck = RunCommand({"e2fsck", "-fn", disk_->loop().PartitionPath(2)});
  EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
  // And after a rollback of the next step (partition 1's move), the kernel has the old place
  // back.
  const CommandResult rest = Partalign({"plan", "-o", disk_->File("rest.json"), disk_->device()});
  ASSERT_EQ(rest.exit_code, 0) << rest.err;
  const CommandResult killed = Partalign(test::ApplyArgs(*disk_, disk_->File("rest.json")),
                                         {{"PARTALIGN_TEST_KILL_AFTER", "move:10"}});
  ASSERT_EQ(killed.exit_code, 128 + 9) << killed.out << killed.err;
  const std::vector<std::string> journals =
      test::FilesIn(disk_->File("journals"), ".partalign-journal");
  ASSERT_EQ(journals.size(), 1u);
  const CommandResult back = Partalign({"resume", journals[0], "--rollback", "--yes"});
  ASSERT_EQ(back.exit_code, 0) << back.out << back.err;
  EXPECT_EQ(test::KernelStartSize(disk_->loop(), 1).first, 63u);
  EXPECT_EQ(test::KernelStartSize(disk_->loop(), 2).first, new_start[2]);
  ExpectFilesIntact();
}

// 7. A journal directory that is a file, a backup directory that is a file: one line, before
// the confirmation, nothing written and no backup file left.
TEST_F(ResumeFaultsTest, DirectoriesAreCheckedBeforeAnythingIsWritten) {
  const std::string before = disk_->Snapshot("before.img");
  test::WriteFile(disk_->File("not-a-dir"), "x");
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--journal-dir", disk_->File("not-a-dir")},
        std::vector<std::string>{"--backup-dir", disk_->File("not-a-dir")}}) {
    SCOPED_TRACE(extra[0]);
    std::vector<std::string> args = {"apply", extra[0], extra[1]};
    if (extra[0] != "--backup-dir") args.insert(args.end(), {"--backup-dir", disk_->File("b")});
    if (extra[0] != "--journal-dir") args.insert(args.end(), {"--journal-dir", disk_->File("j")});
    args.push_back(plan_);
    // No --yes: the refusal must come before the question (stdin is empty: a question would
    // be answered "no" and say so).
    const CommandResult r = Partalign(args);
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_NE(r.err.find("not-a-dir"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("was not started"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("Proceed"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("[y/N]"), std::string::npos) << r.out;
    EXPECT_TRUE(test::FilesIn(disk_->File("b"), ".partalign-backup").empty());
  }
  EXPECT_EQ(test::CmpFiles(disk_->image(), before), "");
}

// 8. After a kill, every command that reads the disk leads with the unfinished move and the
// command that finishes it (exit 4); those that would write a plan, a report or a snapshot of
// the half-moved disk refuse. `resume DEVICE` finds the journal; `resume` lists it.
TEST_F(ResumeFaultsTest, AnUnfinishedMoveIsVisibleToEveryCommand) {
  const std::string journal = KilledApply();
  ASSERT_FALSE(journal.empty());
  const std::string dev = disk_->device();
  const std::string resume_command = fmt::format("partalign resume {}", dev);
  const std::string half = disk_->Snapshot("half.img");

  const CommandResult probe = Partalign({"probe", dev});
  EXPECT_EQ(probe.exit_code, 4) << probe.out << probe.err;
  EXPECT_NE(probe.err.find(resume_command), std::string::npos) << probe.err;
  const CommandResult probe_json = Partalign({"probe", "--json", dev});
  EXPECT_EQ(probe_json.exit_code, 4);
  nlohmann::json doc = nlohmann::json::parse(probe_json.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << probe_json.out;
  ASSERT_EQ(doc["unfinished_moves"].size(), 1u) << doc.dump(2);
  EXPECT_EQ(doc["unfinished_moves"][0]["journal"], journal);
  EXPECT_EQ(doc["unfinished_moves"][0]["resume"], resume_command);

  const CommandResult audit = Partalign({"audit", dev});
  EXPECT_EQ(audit.exit_code, 4) << audit.out << audit.err;
  EXPECT_EQ(audit.out.rfind("UNFINISHED MOVE: ", 0), 0u) << audit.out;
  EXPECT_NE(audit.out.find(resume_command), std::string::npos) << audit.out;
  const CommandResult audit_json = Partalign({"audit", "--json", dev});
  EXPECT_EQ(audit_json.exit_code, 4);
  doc = nlohmann::json::parse(audit_json.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << audit_json.out;
  EXPECT_EQ(doc["unfinished_moves"][0]["state"], "moving") << doc.dump(2);

  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"plan", "-o", disk_->File("again.json"), dev},
        std::vector<std::string>{"report", "-o", disk_->File("report.html"), dev},
        std::vector<std::string>{"snapshot", "-o", disk_->File("snap.json"), dev},
        std::vector<std::string>{"verify", dev, "--against", disk_->File("snap.json")}}) {
    SCOPED_TRACE(args[0]);
    const CommandResult r = Partalign(args);
    EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
    EXPECT_NE(r.err.find(resume_command), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(disk_->File("again.json")));
  EXPECT_FALSE(std::filesystem::exists(disk_->File("report.html")));
  EXPECT_FALSE(std::filesystem::exists(disk_->File("snap.json")));
  const CommandResult plan_json = Partalign({"plan", "--json", dev});
  EXPECT_EQ(plan_json.exit_code, 4);
  doc = nlohmann::json::parse(plan_json.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << plan_json.out;
  EXPECT_EQ(doc["unfinished_moves"].size(), 1u);

  const CommandResult list = Partalign({"resume"});
  EXPECT_EQ(list.exit_code, 4) << list.out << list.err;
  EXPECT_NE(list.out.find(journal), std::string::npos) << list.out;
  EXPECT_EQ(test::CmpFiles(disk_->image(), half), "") << "a reading command wrote the disk";

  // probe's advice, word for word (resume DEVICE), finishes it; then nothing is unfinished.
  const CommandResult resumed = Advice(
      test::AdviceIn(probe.err, "Finish it first: (partalign resume [^ ]+) \\(or undo") + " --yes");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  const CommandResult none = Partalign({"resume"});
  EXPECT_EQ(none.exit_code, 0) << none.out << none.err;
  EXPECT_NE(none.out.find("No unfinished move"), std::string::npos) << none.out;
  const CommandResult audit_after = Partalign({"audit", dev});
  EXPECT_NE(audit_after.exit_code, 4) << audit_after.out;
  EXPECT_EQ(audit_after.out.find("UNFINISHED"), std::string::npos) << audit_after.out;
  FinishAndExpectIntact("");
}

// The advice apply and audit print about an interrupted move, run word for word (issue #30:
// every command partalign prints as advice is run by a test in the situation that printed it).

// apply says, before it writes, what to run after a crash in a step: resume the step, then
// plan what is left. After a kill both commands, as printed, bring the disk to the planned
// layout with every byte.
TEST_F(ResumeFaultsTest, ApplysCrashAdviceResumesTheStepAndPlansWhatIsLeft) {
  const std::string pristine = disk_->Snapshot("pristine.img");
  CommandResult killed;
  ASSERT_FALSE(KilledApply("move:3", &killed).empty());
  const std::string resume = test::AdviceIn(killed.out, "'(partalign resume [^']+)' completes");
  const std::string rollback =
      test::AdviceIn(killed.out, "'(partalign resume --rollback [^']+)' undoes it");
  const std::string plan = test::AdviceIn(killed.out, "'(partalign plan [^']+)' makes a new plan");
  EXPECT_EQ(rollback, fmt::format("partalign resume --rollback {}", disk_->device()));
  const CommandResult resumed = Advice(resume + " --yes");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  // The plan for what is left: partition 1, which step 2 would have moved, and nothing else.
  const CommandResult left = Advice(plan);
  EXPECT_EQ(left.exit_code, 0) << left.out << left.err;
  EXPECT_EQ(PlannedChanges(Advice(plan + " --json").out), std::vector<int>{1});
  ApplyWhatIsLeft(plan, pristine);
}

// audit --json names the rollback of an unfinished move; run as printed, it puts the old
// layout back: the table as it was, every partition's bytes where they were.
TEST_F(ResumeFaultsTest, TheRollbackAuditNamesPutsTheOldLayoutBack) {
  const std::string pristine = disk_->Snapshot("pristine.img");
  ASSERT_FALSE(KilledApply().empty());
  const CommandResult audit = Partalign({"audit", "--json", disk_->device()});
  EXPECT_EQ(audit.exit_code, 4) << audit.out << audit.err;
  const nlohmann::json doc = nlohmann::json::parse(audit.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << audit.out;
  ASSERT_EQ(doc["unfinished_moves"].size(), 1u) << doc.dump(2);
  const CommandResult back =
      Advice(doc["unfinished_moves"][0]["rollback"].get<std::string>() + " --yes");
  ASSERT_EQ(back.exit_code, 0) << back.out << back.err;
  EXPECT_EQ(Places(disk_->image()), Places(pristine));
  for (const std::string& v : test::DiskInvariantViolations(pristine, disk_->device())) {
    ADD_FAILURE() << v;
  }
  ExpectFilesIntact();
}

// `resume` alone lists each unfinished move with the command that completes it.
TEST_F(ResumeFaultsTest, TheListOfUnfinishedMovesNamesTheResumeOfEach) {
  const std::string journal = KilledApply();
  ASSERT_FALSE(journal.empty());
  const CommandResult list = Partalign({"resume"});
  EXPECT_EQ(list.exit_code, 4) << list.out << list.err;
  ResumeAsAdvisedAndFinish(test::AdviceIn(list.out, "\n    (partalign resume [^\n]+)\n"), journal);
}

// Ctrl-C in a step's move (the real SIGINT, raised before the second batch): the mover stops
// at a batch boundary, and apply names the resume that completes the step and the plan for the
// step it did not start. Both, as printed, reach the planned layout with every byte.
TEST_F(ResumeFaultsTest, CtrlCInAMoveNamesTheResumeAndThePlanForWhatIsLeft) {
  const std::string pristine = disk_->Snapshot("pristine.img");
  const CommandResult stopped = Partalign(test::ApplyArgs(*disk_, plan_, {"--copy-all"}),
                                          {{"PARTALIGN_TEST_SIGINT_AFTER_BATCHES", "2"}});
  ASSERT_EQ(stopped.exit_code, 4) << stopped.out << stopped.err;
  EXPECT_NE(stopped.err.find("the move is unfinished"), std::string::npos) << stopped.err;
  ResumeAndApplyWhatIsLeft(stopped.err, pristine);
}

// While a move is unfinished, restore and translate refuse to write a table under it (resume
// proves every table sector before it writes) and name the resume and the rollback; the
// rollback, as printed, puts the old layout back. Once the moves are done, restore refuses a
// backup taken before them and names the plan, which finds nothing left to do.
TEST_F(ResumeFaultsTest, RestoreAndTranslateLeaveAnUnfinishedMoveToItsJournal) {
  const std::string pristine = disk_->Snapshot("pristine.img");
  ASSERT_FALSE(KilledApply().empty());
  std::vector<std::string> backups = test::FilesIn(disk_->File("backups"), ".partalign-backup");
  ASSERT_EQ(backups.size(), 1u);
  const std::string half = disk_->Snapshot("half.img");
  const CommandResult translated =
      Partalign({"translate", "--from-sector-size", "4096", disk_->device(), "--yes",
                 "--backup-dir", disk_->File("backups")});
  EXPECT_EQ(translated.exit_code, 4) << translated.out << translated.err;
  EXPECT_NE(translated.err.find("unfinished move"), std::string::npos) << translated.err;
  const CommandResult refused = Partalign({"restore", backups[0], "--yes"});
  EXPECT_EQ(refused.exit_code, 4) << refused.out << refused.err;
  EXPECT_EQ(test::CmpFiles(disk_->image(), half), "");
  const CommandResult back =
      Advice(test::AdviceIn(refused.err, "'(partalign resume --rollback [^']+)' to undo it first") +
             " --yes");
  ASSERT_EQ(back.exit_code, 0) << back.out << back.err;
  EXPECT_EQ(Places(disk_->image()), Places(pristine));
  ExpectFilesIntact();

  const CommandResult applied = Partalign(test::ApplyArgs(*disk_, plan_));
  ASSERT_EQ(applied.exit_code, 0) << applied.out << applied.err;
  backups = test::FilesIn(disk_->File("backups"), ".partalign-backup");
  ASSERT_GE(backups.size(), 2u);
  const std::string done = disk_->Snapshot("done.img");
  for (const std::string& backup : backups) {
    const CommandResult finished = Partalign({"restore", backup, "--yes"});
    EXPECT_EQ(finished.exit_code, 3) << finished.out << finished.err;
    const CommandResult plan = Advice(
        test::AdviceIn(finished.err, "'(partalign plan [^']+)' says whether anything is left"));
    EXPECT_EQ(plan.exit_code, 0) << plan.out << plan.err;
    EXPECT_EQ(PlannedChanges(Advice(test::AdviceIn(finished.err,
                                                   "'(partalign plan [^']+)' says "
                                                   "whether anything is left") +
                                    " --json")
                                 .out),
              std::vector<int>{});
  }
  EXPECT_EQ(test::CmpFiles(disk_->image(), done), "");
  ExpectPlannedLayoutKept(pristine);
}

// Issue #37, item 6: the disk comes back under another name after a kill (sdb -> sdc after a
// reboot; here the image re-attached to another loop device). audit names `resume NEWNAME`, which,
// run word for word, finds the journal by the disk's identity and completes the move.
TEST_F(ResumeFaultsTest, ResumeAfterARenameWorksAsAuditPrintsIt) {
  const std::string journal = KilledApply();
  ASSERT_FALSE(journal.empty());
  const std::string old_name = disk_->device();
  const std::string new_name = disk_->Reattach();
  ASSERT_NE(new_name, old_name);
  const CommandResult audit = Partalign({"audit", new_name});
  EXPECT_EQ(audit.exit_code, 4) << audit.out << audit.err;
  const std::string resume =
      test::AdviceIn(audit.out, "Finish it first: (partalign resume [^ ]+) \\(or undo");
  EXPECT_EQ(resume, "partalign resume " + new_name);
  const CommandResult resumed = Advice(resume + " --yes");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_NE(resumed.out.find(new_name), std::string::npos) << resumed.out;
  EXPECT_FALSE(std::filesystem::exists(journal));
  FinishAndExpectIntact("");
}

// After a rename, `resume JOURNAL` (the old name recorded) and apply's refusal both name a resume
// that works: with --device and the disk's new name, found by its identity (the backing file).
TEST_F(ResumeFaultsTest, ARefusalAfterARenameNamesAResumeThatWorks) {
  const std::string journal = KilledApply();
  ASSERT_FALSE(journal.empty());
  const std::string new_name = disk_->Reattach();
  const std::string half = disk_->Snapshot("half.img");
  const CommandResult refused = Partalign({"resume", journal, "--yes"});
  EXPECT_NE(refused.exit_code, 0) << refused.out << refused.err;
  const std::string advice = test::AdviceIn(refused.err, "run '(partalign resume --device [^']+)'");
  EXPECT_EQ(advice, fmt::format("partalign resume --device {} {}", new_name, journal));
  // apply names the same, for the disk it was given (the plan names the old name).
  const CommandResult again = Partalign(test::ApplyArgs(*disk_, plan_, {"--target", new_name}));
  EXPECT_EQ(again.exit_code, 4) << again.out << again.err;
  EXPECT_EQ(test::AdviceIn(again.err, "run '(partalign resume [^']+)' to complete it"), advice);
  // `resume` alone lists it with the same command.
  const CommandResult list = Partalign({"resume"});
  EXPECT_NE(list.out.find("    " + advice + "\n"), std::string::npos) << list.out;
  EXPECT_EQ(test::CmpFiles(disk_->image(), half), "");
  ResumeAsAdvisedAndFinish(advice, journal);
}

// Issue #37, item 6: every kill while a journal is being created (before the move's first write
// to the disk) leaves a journal that audit lists for the disk, with a rollback that, as
// printed, clears it: the disk as it was, no journal, no registration; then apply runs.
TEST_F(ResumeFaultsTest, AKillWhileAJournalIsCreatedIsListedWithAdviceThatWorks) {
  const std::string pristine = disk_->Snapshot("pristine.img");
  int kills_before_the_disk_was_written = 0;
  for (int point = 1; point < 20; ++point) {
    SCOPED_TRACE(fmt::format("killed at write or flush {}", point));
    const std::string journal = KilledApply(std::to_string(point));
    ASSERT_FALSE(journal.empty());
    Result<JournalSummary> summary = InspectJournal(journal);
    if (summary && summary->state) {
      // The move began (the other tests cover that): undone, for the apply below.
      const CommandResult back = Partalign({"resume", "--rollback", journal, "--yes"});
      ASSERT_EQ(back.exit_code, 0) << back.out << back.err;
      break;
    }
    ++kills_before_the_disk_was_written;
    const CommandResult audit = Partalign({"audit", "--json", disk_->device()});
    EXPECT_EQ(audit.exit_code, 4) << audit.out << audit.err;
    const nlohmann::json doc = nlohmann::json::parse(audit.out, nullptr, false);
    ASSERT_TRUE(doc.is_object()) << audit.out;
    ASSERT_EQ(doc["unfinished_moves"].size(), 1u) << doc.dump(2);
    EXPECT_EQ(doc["unfinished_moves"][0]["journal"], journal);
    const CommandResult list = Partalign({"resume"});
    EXPECT_EQ(list.exit_code, 4) << list.out << list.err;
    EXPECT_NE(list.out.find(journal), std::string::npos) << list.out;
    const CommandResult back =
        Advice(doc["unfinished_moves"][0]["rollback"].get<std::string>() + " --yes");
    ASSERT_EQ(back.exit_code, 0) << back.out << back.err;
    EXPECT_FALSE(std::filesystem::exists(journal));
    EXPECT_TRUE(test::FilesIn(disk_->File(std::string(kStateDir) + "/journals"), ".json").empty());
    EXPECT_EQ(test::CmpFiles(disk_->image(), pristine), "");
  }
  EXPECT_GE(kills_before_the_disk_was_written, 2);
  const CommandResult applied = Partalign(test::ApplyArgs(*disk_, plan_));
  ASSERT_EQ(applied.exit_code, 0) << applied.out << applied.err;
  ExpectPlannedLayoutKept(pristine);
}

// A journal file in the journal directory that no registration names and whose header cannot
// be read (a move interrupted while starting, by an older partalign): `resume` lists it, and the
// command it names removes it; then nothing is unfinished.
TEST_F(ResumeFaultsTest, AnUnregisteredJournalIsListedByResume) {
  const std::string dir = disk_->File(std::string(kStateDir) + "/journals");
  std::filesystem::create_directories(dir);
  const std::string journal = dir + "/sdb-20260101T000000Z-step1-part2.partalign-journal";
  test::WriteFile(journal, std::string(8192, '\0'));
  const CommandResult list = Partalign({"resume"});
  EXPECT_EQ(list.exit_code, 4) << list.out << list.err;
  const std::string advice = test::AdviceIn(list.out, "\n    (partalign resume [^\n]+)\n");
  EXPECT_EQ(advice, "partalign resume " + journal);
  const CommandResult cleared = Advice(advice + " --yes");
  EXPECT_EQ(cleared.exit_code, 0) << cleared.out << cleared.err;
  EXPECT_FALSE(std::filesystem::exists(journal));
  const CommandResult none = Partalign({"resume"});
  EXPECT_EQ(none.exit_code, 0) << none.out << none.err;
}

// Issue #37, item 7: an unfinished move is one exit status (4), whoever finds it and whenever:
// apply (killed while moving, or after the new table was written, when the plan is stale too),
// move, translate and restore, as audit does.
TEST_F(ResumeFaultsTest, AnUnfinishedMoveIsOneExitStatus) {
  for (const char* point : {"move:3", "table:2"}) {
    SCOPED_TRACE(point);
    const std::string journal = KilledApply(point);
    ASSERT_FALSE(journal.empty());
    const std::string half = disk_->Snapshot("half.img");
    const CommandResult audit = Partalign({"audit", disk_->device()});
    EXPECT_EQ(audit.exit_code, 4) << audit.out << audit.err;
    const CommandResult apply = Partalign(test::ApplyArgs(*disk_, plan_));
    EXPECT_EQ(apply.exit_code, 4) << apply.out << apply.err;
    EXPECT_NE(apply.err.find("unfinished move"), std::string::npos) << apply.err;
    const CommandResult move =
        Partalign({"move", disk_->device(), "--from", "1MiB", "--to", "2MiB", "--length", "1MiB",
                   "--journal", disk_->File("by-hand.partalign-journal"), "--yes"});
    EXPECT_EQ(move.exit_code, 4) << move.out << move.err;
    const CommandResult translate =
        Partalign({"translate", "--from-sector-size", "4096", disk_->device(), "--yes",
                   "--backup-dir", disk_->File("backups")});
    EXPECT_EQ(translate.exit_code, 4) << translate.out << translate.err;
    EXPECT_EQ(test::CmpFiles(disk_->image(), half), "");
    const CommandResult back = Partalign({"resume", "--rollback", disk_->device(), "--yes"});
    ASSERT_EQ(back.exit_code, 0) << back.out << back.err;
    ExpectFilesIntact();
  }
}

// Issue #37, item 7: a read-only state directory (the registry of unfinished moves) is refused
// before anything is asked or written: no question, no backup, the disk unchanged.
TEST_F(ResumeFaultsTest, AReadOnlyStateDirectoryIsRefusedBeforeAnythingIsAsked) {
  const std::string state = disk_->File("ro-state");
  std::filesystem::create_directories(state + "/journals");
  ASSERT_EQ(::mount(state.c_str(), state.c_str(), nullptr, MS_BIND, nullptr), 0);
  struct Unmount {
    std::string path;
    ~Unmount() { ::umount2(path.c_str(), MNT_DETACH); }
  } unmount{state};
  ASSERT_EQ(::mount(nullptr, state.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr), 0);
  const std::string before = disk_->Snapshot("before.img");
  std::vector<std::string> asked = test::ApplyArgs(*disk_, plan_);
  asked.erase(std::find(asked.begin(), asked.end(), "--yes"));
  for (const std::vector<std::string>& args : {asked, test::ApplyArgs(*disk_, plan_)}) {
    const CommandResult r = test::RunPartalign(args, "", {{"PARTALIGN_STATE_DIR", state}});
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_NE(r.err.find("the registry of unfinished moves (" + state +
                         "/journals) is not "
                         "writable (a read-only file system)"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("without --yes"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("Type 'yes'"), std::string::npos) << r.err;
    EXPECT_TRUE(test::FilesIn(disk_->File("backups"), ".partalign-backup").empty());
    EXPECT_EQ(test::CmpFiles(disk_->image(), before), "");
  }
}

// Issue #37, item 7: SIGHUP (a closed SSH session), SIGPIPE (a closed pipe) and a second SIGINT
// during a move are handled like the first SIGINT: the batch finishes, the journal is
// consistent, apply names the resume and exits 4; the resume, as printed, completes the step
// and the plan for what is left reaches the planned layout with every byte.
class SignalStopTest : public ResumeFaultsTest,
                       public ::testing::WithParamInterface<const char*> {};

TEST_P(SignalStopTest, StopsAtABatchAndNamesTheResume) {
  const std::string pristine = disk_->Snapshot("pristine.img");
  const CommandResult stopped = Partalign(
      test::ApplyArgs(*disk_, plan_, {"--copy-all"}),
      {{"PARTALIGN_TEST_SIGINT_AFTER_BATCHES", "2"}, {"PARTALIGN_TEST_SIGNALS", GetParam()}});
  ASSERT_EQ(stopped.exit_code, 4) << stopped.out << stopped.err;
  EXPECT_NE(stopped.err.find("the move is unfinished"), std::string::npos) << stopped.err;
  const std::vector<std::string> journals =
      test::FilesIn(disk_->File("journals"), ".partalign-journal");
  ASSERT_EQ(journals.size(), 1u);
  Result<JournalSummary> summary = InspectJournal(journals[0]);
  ASSERT_TRUE(summary) << summary.error().message;
  ASSERT_TRUE(summary->state.has_value()) << "stopped before the move wrote anything";
  ResumeAndApplyWhatIsLeft(stopped.err, pristine);
}

INSTANTIATE_TEST_SUITE_P(Signals, SignalStopTest, ::testing::Values("HUP", "PIPE", "INT,INT"),
                         [](const ::testing::TestParamInfo<const char*>& param) {
                           std::string name = param.param;
                           return name == "INT,INT" ? std::string("SecondINT") : name;
                         });

}  // namespace
}  // namespace partalign
