// SPDX-License-Identifier: GPL-3.0-or-later
// Realigning on the machine you are running (issue #29, docs/apply.md "In use"): one disk whose
// partition 1 is mounted (standing for the root file system, holding partalign's state
// directory, journals and backups) and whose partition 2 is a misaligned ext4 with files. apply
// moves partition 2 while partition 1 stays mounted, its files untouched and its kernel
// partition unchanged, also a file written to partition 2 after the plan; with partition 2
// mounted too it refuses and writes nothing; a kill at any of 50 points of the move is
// recovered by resume from the journal on partition 1.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <random>

#include <fmt/format.h>

#include "support/boot_disks.h"
#include "support/boot_sectors.h"
#include "support/device_test.h"
#include "support/mount_point.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::RunCommand;

// Partition 1 (128 MiB) has room for the journal and the backups of partition 2's move (64 MiB:
// enough writes and flushes for 50 distinct kill points).
constexpr uint64_t kP1Start = 2048;
constexpr uint64_t kP1Sectors = 262144;
constexpr uint64_t kP2Start = kP1Start + kP1Sectors + 63;  // misaligned by 63 sectors
constexpr uint64_t kP2Sectors = 131072;
constexpr uint64_t kP2NewStart = 264192;  // the 1 MiB boundary below it
constexpr uint64_t kDiskBytes = 200ull << 20;

class ApplyOnlineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PARTALIGN_REQUIRE_DEVICES();
    disk_ = std::make_unique<test::PartitionedLoop>(
        fmt::format("label: dos\nstart={}, size={}, type=83\nstart={}, size={}, type=83\n",
                    kP1Start, kP1Sectors, kP2Start, kP2Sectors),
        512, kDiskBytes);
    std::mt19937_64 random(29);
    for (int number : {1, 2}) {
      const std::string node = disk_->loop().PartitionPath(number);
      // No lazy initialisation: a mounted partition 1 must not write on its own.
      test::RunOrThrow(
          {"mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", node});
      const std::string mnt = disk_->File(fmt::format("mnt{}", number));
      std::filesystem::create_directories(mnt);
      test::MountPoint mounted(node, mnt);
      for (int i = 0; i < 3; ++i) {
        std::string content((1 + i) * 700001 + number, '\0');
        for (char& c : content) c = static_cast<char>(random());
        const std::string name = fmt::format("file{}-{}", number, i);
        test::WriteFile(mnt + "/" + name, content);
        files_[number][name] = std::move(content);
      }
      ASSERT_TRUE(mounted.Unmount());
    }
    pristine_ = disk_->Snapshot("pristine.img");
  }

  // Partition 1 mounted, partalign's state, journals and backups on it: a one-disk machine.
  void MountRoot() {
    root_ = std::make_unique<test::MountPoint>(disk_->loop().PartitionPath(1), disk_->File("mnt1"));
    for (const char* dir : {"state", "journals", "backups"}) {
      std::filesystem::create_directories(Root(dir));
    }
  }

  std::string Root(const std::string& name) const { return disk_->File("mnt1/" + name); }

  CommandResult Partalign(const std::vector<std::string>& args,
                          std::map<std::string, std::string> env = {}) const {
    env["PARTALIGN_STATE_DIR"] = Root("state");
    return test::RunPartalign(args, "", env);
  }

  // The way forced: left to `auto`, it follows the flush latency measured at the start, and the
  // kill campaign's count of points (saved copies: about a hundred; ordered: thousands) with it.
  std::vector<std::string> ApplyArgs(const std::string& plan, bool copy_all = false) const {
    std::vector<std::string> args = {"apply",         "--yes",         "--backup-dir",
                                     Root("backups"), "--journal-dir", Root("journals"),
                                     "--way",         "copies"};
    if (copy_all) args.push_back("--copy-all");
    args.push_back(plan);
    return args;
  }

  std::string MakePlan() const {
    const std::string plan = disk_->File("plan.json");
    const CommandResult r = Partalign({"plan", "-o", plan, disk_->device()});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    const nlohmann::json doc = nlohmann::json::parse(test::ReadFile(plan), nullptr, false);
    for (const nlohmann::json& a : doc["actions"]) {
      if (a["partition"] == 1) {
        EXPECT_EQ(a["kind"], "none") << a;
      }
      if (a["partition"] == 2) {
        EXPECT_EQ(a["kind"], "move-data") << a;
        EXPECT_EQ(a["new_start_sector"], kP2NewStart) << a;
      }
    }
    return plan;
  }

  // Partition 1: still mounted, every file as written; its kernel partition where it was.
  void ExpectRootUntouched() const {
    EXPECT_EQ(RunCommand({"mountpoint", "-q", disk_->File("mnt1")}).exit_code, 0);
    for (const auto& [name, content] : files_.at(1)) {
      EXPECT_TRUE(test::ReadFile(disk_->File("mnt1/" + name)) == content) << name;
    }
    EXPECT_EQ(test::KernelStartSize(disk_->loop(), 1),
              (std::pair<uint64_t, uint64_t>{kP1Start, kP1Sectors}));
  }

  // Partition 2 at `start` for the table and the kernel, e2fsck clean, every file back.
  void ExpectDataAt(uint64_t start) const {
    EXPECT_EQ(test::SfdiskJson(disk_->device())["partitions"][1]["start"], start);
    EXPECT_EQ(test::KernelStartSize(disk_->loop(), 2),
              (std::pair<uint64_t, uint64_t>{start, kP2Sectors}));
    const std::string node = disk_->loop().PartitionPath(2);
    const CommandResult fsck = RunCommand({"e2fsck", "-fn", node});
    EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
    test::MountPoint mounted(node, disk_->File("mnt2"), "ro");
    for (const auto& [name, content] : files_.at(2)) {
      EXPECT_TRUE(test::ReadFile(disk_->File("mnt2/" + name)) == content) << name;
    }
  }

  std::unique_ptr<test::PartitionedLoop> disk_;
  std::unique_ptr<test::MountPoint> root_;
  std::map<int, std::map<std::string, std::string>> files_;
  std::string pristine_;
};

TEST_F(ApplyOnlineTest, MovesPartition2WhilePartition1StaysMounted) {
  MountRoot();
  const std::string plan = MakePlan();
  const CommandResult dry = Partalign({"apply", "--dry-run", "--backup-dir", Root("backups"),
                                       "--journal-dir", Root("journals"), plan});
  ASSERT_EQ(dry.exit_code, 0) << dry.out << dry.err;
  EXPECT_NE(dry.out.find(fmt::format("In use, left alone: partition 1 ('{}') is mounted on '{}'",
                                     disk_->loop().PartitionPath(1), disk_->File("mnt1"))),
            std::string::npos)
      << dry.out;
  EXPECT_NE(dry.err.find("is on the disk being changed (partition 1"), std::string::npos)
      << dry.err;
  EXPECT_NE(dry.err.find("a failure of this disk loses both"), std::string::npos) << dry.err;

  const CommandResult r = Partalign(ApplyArgs(plan));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("it stays in use"), std::string::npos) << r.err;
  ExpectRootUntouched();
  ExpectDataAt(kP2NewStart);
  // Before partition 1, only partition 2's table entry changed.
  const test::Bytes before = test::ReadBytes(pristine_, 0, kP1Start * 512);
  const test::Bytes now = test::ReadBytes(disk_->device(), 0, kP1Start * 512);
  for (const auto& [first, last] : test::DifferingRuns(before, now)) {
    EXPECT_TRUE(first >= 446 && last < 510)
        << "bytes " << first << ".." << last << " changed before partition 1 outside the table";
  }
  EXPECT_TRUE(test::FilesIn(Root("journals"), ".partalign-journal").empty());
  EXPECT_FALSE(test::FilesIn(Root("backups"), ".partalign-backup").empty());
}

// A file written to partition 2 between the plan and apply, through its own node: the plan read
// partition 2 through the whole disk, and the kernel keeps the whole disk's page cache while
// partition 1 is mounted. apply read its used map from there, as it was before the file, moved
// only the blocks used then, and the file was lost (e2fsck clean, its bytes garbage).
TEST_F(ApplyOnlineTest, MovesAFileWrittenToPartition2AfterThePlan) {
  MountRoot();
  const std::string plan = MakePlan();
  {
    test::MountPoint data(disk_->loop().PartitionPath(2), disk_->File("mnt2"));
    std::mt19937_64 random(41);
    std::string content(24 << 20, '\0');
    for (char& c : content) c = static_cast<char>(random());
    test::WriteFile(disk_->File("mnt2/after-the-plan"), content);
    files_[2]["after-the-plan"] = std::move(content);
    ASSERT_TRUE(data.Unmount());
  }
  const CommandResult r = Partalign(ApplyArgs(plan));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ExpectRootUntouched();
  ExpectDataAt(kP2NewStart);
}

TEST_F(ApplyOnlineTest, RefusesWhilePartition2IsMounted) {
  MountRoot();
  const std::string plan = MakePlan();
  {
    test::MountPoint data(disk_->loop().PartitionPath(2), disk_->File("mnt2"), "ro");
    // Everything but partition 1 (mounted read-write, it may write its own bytes).
    const uint64_t p1_end = (kP1Start + kP1Sectors) * 512;
    const test::Bytes head = test::ReadBytes(disk_->device(), 0, kP1Start * 512);
    const test::Bytes tail = test::ReadBytes(disk_->device(), p1_end, kDiskBytes - p1_end);
    const CommandResult r = Partalign(ApplyArgs(plan));
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_NE(r.err.find(fmt::format("partition 2 ('{}') is mounted on '{}'",
                                     disk_->loop().PartitionPath(2), disk_->File("mnt2"))),
              std::string::npos)
        << r.err;
    EXPECT_TRUE(test::ReadBytes(disk_->device(), 0, kP1Start * 512) == head);
    EXPECT_TRUE(test::ReadBytes(disk_->device(), p1_end, kDiskBytes - p1_end) == tail)
        << "apply wrote outside partition 1";
  }
  EXPECT_TRUE(test::FilesIn(Root("journals"), ".partalign-journal").empty());
  ExpectRootUntouched();
}

// 50 kill points spread over the whole move of partition 2 (every byte of it: --copy-all, so
// that the move has that many writes and flushes; its copy, verification and table write),
// each on the original disk with partition 1 mounted: resume, run as a person would with the
// journal apply names on partition 1, finishes it.
TEST_F(ApplyOnlineTest, KilledAnywhereIsRecoveredByResumeFromTheJournalOnPartition1) {
  MountRoot();
  const std::string plan = MakePlan();
  root_.reset();  // each run starts from the original disk
  // How many kill points a whole apply passes.
  auto fresh = [&] {
    root_.reset();
    disk_->loop().DeletePartitions();
    test::RunOrThrow({"dd", "if=" + pristine_, "of=" + disk_->device(), "bs=1M",
                      "conv=notrunc,fsync", "status=none"});
    test::AddKernelPartitions(disk_->loop(), 512);
    MountRoot();
  };
  fresh();
  const CommandResult counted =
      Partalign(ApplyArgs(plan, true), {{"PARTALIGN_TEST_KILL_AFTER", "1000000"}});
  ASSERT_EQ(counted.exit_code, 0) << counted.out << counted.err;
  uint64_t points = 0;
  ASSERT_EQ(std::sscanf(counted.err.substr(counted.err.find("partalign: test: ")).c_str(),
                        "partalign: test: %lu kill points passed", &points),
            1)
      << counted.err;
  ASSERT_GE(points, 50u);
  int killed = 0;
  for (uint64_t k = 0; k < 50; ++k) {
    const uint64_t point = 1 + k * (points - 1) / 49;
    SCOPED_TRACE(fmt::format("kill point {} of {}", point, points));
    fresh();
    const CommandResult r =
        Partalign(ApplyArgs(plan, true), {{"PARTALIGN_TEST_KILL_AFTER", std::to_string(point)}});
    const std::vector<std::string> journals = test::FilesIn(Root("journals"), ".partalign-journal");
    if (r.exit_code == 128 + 9) ++killed;
    if (!journals.empty()) {
      ASSERT_EQ(journals.size(), 1u);
      const CommandResult resumed = Partalign({"resume", journals[0], "--yes"});
      if (resumed.exit_code != 0 &&
          resumed.err.find("not a registered journal") != std::string::npos) {
        // Killed while the journal was being made: that move never wrote the disk.
        std::filesystem::remove(journals[0]);
      } else {
        ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
      }
    }
    // Whatever is left of the plan (nothing, or the whole move if it never began).
    if (test::SfdiskJson(disk_->device())["partitions"][1]["start"] != kP2NewStart) {
      const CommandResult again = Partalign(ApplyArgs(plan));
      ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
    }
    ExpectRootUntouched();
    ExpectDataAt(kP2NewStart);
    if (HasFatalFailure() || HasFailure()) break;
  }
  EXPECT_GE(killed, 45) << "most points must kill the apply";
}

}  // namespace
}  // namespace partalign
