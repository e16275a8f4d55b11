// SPDX-License-Identifier: GPL-3.0-or-later
// apply moves only what each partition's filesystem uses (docs/used-map.md), end to end: a GPT
// disk with ext4, vfat, XFS and btrfs partitions holding files, each misaligned; the real
// planner's plan moves all four. Afterwards every filesystem checker is clean (e2fsck -fn,
// fsck.vfat -n, xfs_repair -n, btrfs check --readonly), the ext4 backup superblock is valid,
// every file reads back, and apply said how much less than the partitions it copied. With
// --copy-all it copies everything.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <random>
#include <regex>

#include <fmt/format.h>

#include "support/device_test.h"
#include "support/disk_invariant.h"
#include "support/mount_point.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::PartitionedLoop;
using test::RunCommand;
using test::RunOrThrow;

// p1 ext4 at sector 63 (160 MiB: two groups of 4 KiB blocks, so that there is a backup
// superblock), p2 vfat one sector before 1 MiB alignment (64 MiB), p3 XFS likewise (320 MiB:
// mkfs.xfs wants 300 MB), p4 btrfs likewise (256 MiB). The plan moves p1 to 2048 and the others
// up by one sector, the top one first.
constexpr const char* kScript =
    "label: gpt\nfirst-lba: 34\nstart=63, size=327680\nstart=329727, size=131072\n"
    "start=462847, size=655360\nstart=1120255, size=524288\n";
constexpr unsigned long long kDiskBytes = 820ull << 20;

class ApplyUsedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PARTALIGN_REQUIRE_DEVICES();
    disk_ = std::make_unique<PartitionedLoop>(kScript, 512, kDiskBytes);
    std::filesystem::create_directories(disk_->File("state"));
    std::filesystem::create_directories(disk_->File("mnt"));
    std::filesystem::create_directories(disk_->File("out"));
    RunOrThrow({"mkfs.ext4", "-q", "-F", "-b", "4096", Node(1)});
    RunOrThrow({"mkfs.vfat", "-F", "32", Node(2)});
    RunOrThrow({"mkfs.xfs", "-q", "-f", Node(3)});
    RunOrThrow({"mkfs.btrfs", "-q", "-f", Node(4)});
    std::mt19937_64 random(16);
    for (int number : {1, 2, 3, 4}) {
      for (int i = 0; i < 6; ++i) {
        // Random bytes (incompressible, no holes), up to a few MiB, odd sizes.
        std::string content((1 + i) * 523001 + number, '\0');
        for (char& c : content) c = static_cast<char>(random());
        files_[number][fmt::format("file{}-{}", number, i)] = std::move(content);
      }
    }
    for (int number : {1, 3, 4}) {
      test::MountPoint mounted(Node(number), disk_->File("mnt"));
      for (const auto& [name, content] : files_[number]) {
        test::WriteFile(disk_->File("mnt/" + name), content);
      }
      ASSERT_TRUE(mounted.Unmount());
    }
    // This kernel has no vfat driver: mtools writes the files.
    for (const auto& [name, content] : files_[2]) {
      test::WriteFile(disk_->File("out/" + name), content);
      RunOrThrow({"mcopy", "-i", Node(2), disk_->File("out/" + name), "::/" + name});
    }
  }

  std::string Node(int number) const { return disk_->loop().PartitionPath(number); }

  CommandResult Partalign(std::vector<std::string> args) const {
    return test::RunPartalign(args, "", {{"PARTALIGN_STATE_DIR", disk_->File("state")}});
  }

  CommandResult Apply(std::vector<std::string> extra = {}) const {
    const std::string plan = disk_->File("plan.json");
    CommandResult planned = Partalign({"plan", "-o", plan, disk_->device()});
    EXPECT_EQ(planned.exit_code, 0) << planned.out << planned.err;
    // The boot records the steps rewrite (the vfat boot sector's hidden sectors): what the
    // invariant allows to differ.
    std::vector<std::string> dry = extra;
    dry.insert(dry.end(), {"--dry-run", "--json"});
    const CommandResult listed = Partalign(test::ApplyArgs(*disk_, plan, dry));
    EXPECT_EQ(listed.exit_code, 0) << listed.out << listed.err;
    dry_run_json_ = listed.out;
    return Partalign(test::ApplyArgs(*disk_, plan, extra));
  }

  // Each checker clean, the ext4 backup superblock readable, every file back; the disk
  // invariant against `before` (support/disk_invariant.h), skipping what each used map proves
  // free unless every byte was copied.
  void ExpectEverythingIntact(const std::string& before, bool copy_all) const {
    test::DiskInvariantOptions options;
    options.used_maps = !copy_all;
    test::AddDryRunRecords(options, dry_run_json_);
    EXPECT_FALSE(options.updated_records.empty()) << "the vfat boot sector names its start";
    for (const std::string& v : test::DiskInvariantViolations(before, disk_->device(), options)) {
      ADD_FAILURE() << v;
    }
    CommandResult e2fsck = RunCommand({"e2fsck", "-fn", Node(1)});
    EXPECT_EQ(e2fsck.exit_code, 0) << e2fsck.out << e2fsck.err;
    // The first backup of a 4 KiB-block filesystem is at block 32768 (e2fsck -b on a backup
    // reports stale group counters even on a fresh filesystem, so dumpe2fs reads it instead).
    CommandResult backup =
        RunCommand({"dumpe2fs", "-h", "-o", "superblock=32768", "-o", "blocksize=4096", Node(1)});
    EXPECT_EQ(backup.exit_code, 0) << backup.err;
    EXPECT_NE(backup.out.find("Filesystem magic number:  0xEF53"), std::string::npos)
        << backup.out << backup.err;
    CommandResult fsck_vfat = RunCommand({"fsck.vfat", "-n", Node(2)});
    EXPECT_EQ(fsck_vfat.exit_code, 0) << fsck_vfat.out << fsck_vfat.err;
    CommandResult xfs_repair = RunCommand({"xfs_repair", "-n", Node(3)});
    EXPECT_EQ(xfs_repair.exit_code, 0) << xfs_repair.out << xfs_repair.err;
    CommandResult btrfs_check = RunCommand({"btrfs", "check", "--readonly", Node(4)});
    EXPECT_EQ(btrfs_check.exit_code, 0) << btrfs_check.out << btrfs_check.err;
    for (int number : {1, 3, 4}) {
      test::MountPoint mounted(Node(number), disk_->File("mnt"), "ro");
      for (const auto& [name, content] : files_.at(number)) {
        EXPECT_TRUE(test::ReadFile(disk_->File("mnt/" + name)) == content)
            << "partition " << number << ": " << name;
      }
    }
    for (const auto& [name, content] : files_.at(2)) {
      const std::string copy = disk_->File("out/back-" + name);
      RunOrThrow({"mcopy", "-n", "-i", Node(2), "::/" + name, copy});
      EXPECT_TRUE(test::ReadFile(copy) == content) << "partition 2: " << name;
    }
  }

  std::unique_ptr<PartitionedLoop> disk_;
  std::map<int, std::map<std::string, std::string>> files_;
  mutable std::string dry_run_json_;  ///< the last Apply()'s dry run (--json)
};

// "Step 1/3: partition 3, ... copies 36 MiB (xfs: free-space B+trees (bnobt), 34.2 MiB used)":
// partition -> the bytes copied, in MiB.
std::map<int, double> CopiedMiB(const std::string& out) {
  std::map<int, double> copied;
  const std::regex step(R"(Step \d+/\d+: partition (\d+), .*; copies ([0-9.]+) (KiB|MiB|GiB))");
  for (std::sregex_iterator it(out.begin(), out.end(), step), end; it != end; ++it) {
    const double scale = (*it)[3] == "KiB" ? 1.0 / 1024 : (*it)[3] == "GiB" ? 1024 : 1;
    copied[std::stoi((*it)[1])] = std::stod((*it)[2]) * scale;
  }
  return copied;
}

TEST_F(ApplyUsedTest, MovesOnlyTheUsedChunksOfExt4VfatAndXfs) {
  CommandResult dry = Apply({"--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.out << dry.err;
  for (const char* source : {"ext: libext2fs block bitmaps", "vfat: FAT32 allocation tables",
                             "xfs: free-space B+trees (bnobt)", "btrfs: device extents"}) {
    EXPECT_NE(dry.out.find(source), std::string::npos) << source << "\n" << dry.out;
  }
  const std::string before = disk_->Snapshot("before.img");
  CommandResult r = Apply();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::map<int, double> copied = CopiedMiB(r.out);
  ASSERT_EQ(copied.size(), 4u) << r.out;
  // Files of about 10 MiB per partition: far less than 160, 64, 320 and 256 MiB is copied.
  EXPECT_LT(copied.at(1), 80) << r.out;
  EXPECT_LT(copied.at(2), 40) << r.out;
  EXPECT_LT(copied.at(3), 120) << r.out;
  EXPECT_LT(copied.at(4), 160) << r.out;
  ExpectEverythingIntact(before, /*copy_all=*/false);
}

TEST_F(ApplyUsedTest, CopyAllMovesEveryByte) {
  const std::string before = disk_->Snapshot("before.img");
  CommandResult r = Apply({"--copy-all"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::map<int, double> copied = CopiedMiB(r.out);
  ASSERT_EQ(copied.size(), 4u) << r.out;
  EXPECT_EQ(copied.at(1), 160);
  EXPECT_EQ(copied.at(2), 64);
  EXPECT_EQ(copied.at(3), 320);
  EXPECT_EQ(copied.at(4), 256);
  ExpectEverythingIntact(before, /*copy_all=*/true);
}

}  // namespace
}  // namespace partalign
