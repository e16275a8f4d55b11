// SPDX-License-Identifier: GPL-3.0-or-later
// The disk the system runs from, realigned at the next boot (issue 39, docs/at-boot.md), on a
// loop device: partition 1 (ext4, mounted, standing for /) at sector 63, partition 2 (ext4,
// mounted, standing for /boot) aligned. `plan --at-next-boot` plans partition 1's move, `apply`
// refuses it now and names the way, `apply --at-next-boot` stages it on partition 2 and writes
// nothing to the disk, `--cancel-next-boot` takes it back; then, as the initramfs does it with
// both unmounted, `partalign at-boot` moves partition 1 and a second run finds nothing staged.
// tests/boot/at_boot_qemu.sh does the same through a real boot. Partition 2 is larger than
// partition 1: the mover's saved copies of a shift smaller than its chunks need that much room
// in the journal (docs/at-boot.md, "Where the journal lives").
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>

#include <fmt/format.h>

#include "support/device_test.h"
#include "support/mount_point.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;
using test::CommandResult;

constexpr uint64_t kDiskBytes = 160ull << 20;
constexpr uint64_t kRootStart = 63, kRootSectors = 81920;
constexpr uint64_t kBootStart = 83968, kBootSectors = 204800;

class NextBootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PARTALIGN_REQUIRE_DEVICES();
    disk_ = std::make_unique<test::PartitionedLoop>(
        layout_.empty()
            ? fmt::format("label: dos\nstart={}, size={}, type=83\nstart={}, size={}, type=83\n",
                          kRootStart, kRootSectors, kBootStart, kBootSectors)
            : layout_,
        512, kDiskBytes);
    std::mt19937_64 random(39);
    for (int number : {root_, 2}) {
      const std::string node = disk_->loop().PartitionPath(number);
      test::RunOrThrow(
          {"mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", node});
      fs::create_directories(Mnt(number));
      test::MountPoint mounted(node, Mnt(number));
      std::string content(700001 + number, '\0');
      for (char& c : content) c = static_cast<char>(random());
      test::WriteFile(Mnt(number) + "/file", content);
      files_[number] = std::move(content);
      ASSERT_TRUE(mounted.Unmount());
    }
    fs::create_directories(disk_->File("state"));
    boot_uuid_ =
        test::RunCommand({"blkid", "-s", "UUID", "-o", "value", disk_->loop().PartitionPath(2)})
            .out;
    while (!boot_uuid_.empty() && boot_uuid_.back() == '\n') boot_uuid_.pop_back();
  }

  std::string Mnt(int number) const { return disk_->File(fmt::format("mnt{}", number)); }
  std::string State(const std::string& name = "") const {
    return disk_->File("state") + (name.empty() ? "" : "/" + name);
  }

  CommandResult Partalign(const std::vector<std::string>& args) const {
    return test::RunPartalign(args, "", {{"PARTALIGN_STATE_DIR", State()}});
  }

  // What partalign-at-boot-finished.service runs once the system is up, with an
  // update-initramfs that only writes its arguments to Rebuilds().
  CommandResult AfterBoot() const {
    const std::string bin = disk_->File("bin");
    if (!fs::exists(bin + "/update-initramfs")) {
      fs::create_directories(bin);
      test::WriteFile(bin + "/update-initramfs",
                      "#!/bin/sh\necho \"$@\" >> '" + disk_->File("rebuilds") + "'\n");
      fs::permissions(bin + "/update-initramfs", fs::perms::owner_all);
    }
    const char* path = ::getenv("PATH");
    return test::RunCommand(
        {"sh", std::string(PARTALIGN_SOURCE_DIR) + "/contrib/at-boot/at-boot-finished.sh"}, "",
        {{"PARTALIGN_STATE_DIR", State()},
         {"PARTALIGN_BINARY", PARTALIGN_BINARY},
         {"PATH", bin + ":" + (path ? path : "/usr/sbin:/usr/bin:/sbin:/bin")}});
  }
  std::string Rebuilds() const {
    return fs::exists(disk_->File("rebuilds")) ? test::ReadFile(disk_->File("rebuilds")) : "";
  }

  void MountBoth() {
    root_mount_ =
        std::make_unique<test::MountPoint>(disk_->loop().PartitionPath(root_), Mnt(root_));
    boot_ = std::make_unique<test::MountPoint>(disk_->loop().PartitionPath(2), Mnt(2));
  }
  void UnmountBoth() {
    ASSERT_TRUE(boot_->Unmount());
    ASSERT_TRUE(root_mount_->Unmount());
  }

  // Each partition's start and size by its number, as sfdisk reads them.
  std::map<int, std::pair<uint64_t, uint64_t>> Parts() const {
    std::map<int, std::pair<uint64_t, uint64_t>> out;
    const nlohmann::json table = test::SfdiskJson(disk_->device());
    for (const nlohmann::json& p : table["partitions"]) {
      const std::string node = p["node"];
      const size_t digits = node.find_last_not_of("0123456789") + 1;
      out[std::stoi(node.substr(digits))] = {p["start"].get<uint64_t>(), p["size"].get<uint64_t>()};
    }
    return out;
  }

  // The table's two partitions, as sfdisk reads them.
  std::vector<std::pair<uint64_t, uint64_t>> Table() const {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    const nlohmann::json table = test::SfdiskJson(disk_->device());
    for (const nlohmann::json& p : table["partitions"]) {
      out.emplace_back(p["start"].get<uint64_t>(), p["size"].get<uint64_t>());
    }
    return out;
  }

  void ExpectFilesystem(int number) const {
    const std::string node = disk_->loop().PartitionPath(number);
    const CommandResult fsck = test::RunCommand({"e2fsck", "-fn", node});
    EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
    const std::string mnt = disk_->File(fmt::format("check{}", number));
    fs::create_directories(mnt);
    test::MountPoint mounted(node, mnt, "ro");
    EXPECT_TRUE(test::ReadFile(mnt + "/file") == files_.at(number)) << "partition " << number;
  }

  // Stages the plan with both mounted, as the running system has them; then, as the initramfs
  // sees the disk, both unmounted and partition 2 mounted on `journal`. Null when staging failed.
  std::unique_ptr<test::MountPoint> StageForBoot(const std::string& journal) {
    MountBoth();
    const std::string plan = disk_->File("plan.json");
    const CommandResult made = Partalign({"plan", "--at-next-boot", "-o", plan, disk_->device()});
    const CommandResult staged = Partalign({"apply", "--at-next-boot", "--yes", plan});
    UnmountBoth();
    if (made.exit_code != 0 || staged.exit_code != 0) {
      ADD_FAILURE() << made.out << made.err << staged.out << staged.err;
      return nullptr;
    }
    fs::create_directories(journal);
    return std::make_unique<test::MountPoint>(disk_->loop().PartitionPath(2), journal);
  }

  // `partalign at-boot` on `journal`, killed by PARTALIGN_TEST_KILL_AFTER=`kill` (a power loss).
  CommandResult CutAtBoot(const std::string& journal, const std::string& kill) const {
    CommandResult cut =
        test::RunPartalign({"at-boot", journal}, "", {{"PARTALIGN_TEST_KILL_AFTER", kill}});
    EXPECT_EQ(cut.exit_code, 128 + 9) << cut.out << cut.err;
    return cut;
  }

  // The next boot's run: it finishes the realign. Its output.
  std::string NextBootFinishes(const std::string& journal) const {
    const CommandResult boot = test::RunPartalign({"at-boot", journal});
    EXPECT_EQ(boot.exit_code, 0) << boot.out << boot.err;
    EXPECT_NE(boot.out.find("partalign: at-boot done"), std::string::npos) << boot.out;
    return boot.out;
  }

  // Partition 1 at 2048, partition 2 where it was (`before`: the table before), both
  // filesystems clean with their files.
  void ExpectRealigned(const std::vector<std::pair<uint64_t, uint64_t>>& before) const {
    const auto after = Table();
    ASSERT_EQ(after.size(), 2u);
    EXPECT_EQ(after[0], (std::pair<uint64_t, uint64_t>{2048, kRootSectors}));
    EXPECT_EQ(after[1], before[1]);
    ExpectFilesystem(1);
    ExpectFilesystem(2);
  }

  std::unique_ptr<test::PartitionedLoop> disk_;
  /// The partition standing for the root (1, or a logical one), and the sfdisk script of the
  /// disk (empty: root at 63, /boot at 83968, both primary).
  int root_ = 1;
  std::string layout_;
  std::unique_ptr<test::MountPoint> root_mount_, boot_;
  std::map<int, std::string> files_;
  std::string boot_uuid_;
};

TEST_F(NextBootTest, TheRunningSystemsRootIsStagedAndMovedAtTheNextBoot) {
  MountBoth();
  const auto before = Table();
  const std::string plan = disk_->File("plan.json");

  // Without --at-next-boot partition 1 waits, and the plan says how to move it.
  const CommandResult now = Partalign({"plan", disk_->device()});
  ASSERT_EQ(now.exit_code, 0) << now.out << now.err;
  EXPECT_NE(now.out.find("plan --at-next-boot"), std::string::npos) << now.out;

  const CommandResult made = Partalign({"plan", "--at-next-boot", "-o", plan, disk_->device()});
  ASSERT_EQ(made.exit_code, 0) << made.out << made.err;
  EXPECT_NE(made.out.find("at the next boot"), std::string::npos) << made.out;
  const nlohmann::json doc = nlohmann::json::parse(test::ReadFile(plan));
  EXPECT_EQ(doc["at_next_boot"], true);
  EXPECT_EQ(doc["actions"][0]["kind"], "move-data") << doc["actions"][0];
  EXPECT_EQ(doc["actions"][0]["new_start_sector"], 2048u) << doc["actions"][0];
  EXPECT_EQ(doc["actions"][1]["kind"], "none") << doc["actions"][1];

  // Now: refused, nothing written, and the refusal names the next-boot way.
  const CommandResult refused = Partalign({"apply", "--yes", plan});
  EXPECT_EQ(refused.exit_code, 3) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("--at-next-boot"), std::string::npos) << refused.err;
  EXPECT_EQ(Table(), before);

  // The stage keeps the journals and the backup on the journal partition: a place given for
  // either is refused, not ignored.
  const CommandResult placed = Partalign(
      {"apply", "--at-next-boot", "--journal-dir", disk_->File("journals"), "--yes", plan});
  EXPECT_EQ(placed.exit_code, 1) << placed.out << placed.err;
  EXPECT_NE(placed.err.find("takes no --journal-dir"), std::string::npos) << placed.err;
  EXPECT_FALSE(fs::exists(State("next-boot.conf")));
  // A journal partition mounted read-only cannot take the journal now: refused, nothing staged.
  test::RunOrThrow({"mount", "-o", "remount,ro", Mnt(2)});
  const CommandResult read_only = Partalign({"apply", "--at-next-boot", "--yes", plan});
  test::RunOrThrow({"mount", "-o", "remount,rw", Mnt(2)});
  EXPECT_NE(read_only.exit_code, 0) << read_only.out << read_only.err;
  EXPECT_NE(read_only.err.find("partition 2 is mounted read-only on"), std::string::npos)
      << read_only.err;
  EXPECT_NE(read_only.err.find("remount,rw"), std::string::npos) << read_only.err;
  EXPECT_FALSE(fs::exists(State("next-boot.conf")));
  EXPECT_FALSE(fs::exists(Mnt(2) + "/partalign-next-boot/stage.json"));
  EXPECT_EQ(Table(), before);

  // Staged: on partition 2 (mounted, left alone by the plan), nothing written to the disk.
  const CommandResult staged = Partalign({"apply", "--at-next-boot", "--yes", plan});
  ASSERT_EQ(staged.exit_code, 0) << staged.out << staged.err;
  EXPECT_NE(staged.out.find("update-initramfs"), std::string::npos) << staged.out;
  EXPECT_NE(staged.out.find("partalign-at-boot-finished.service rebuilds it"), std::string::npos)
      << staged.out;
  EXPECT_NE(staged.out.find("Step 1: partition 1 leaves the table while its data moves"),
            std::string::npos)
      << staged.out;
  EXPECT_EQ(Table(), before);
  const std::string conf = test::ReadFile(State("next-boot.conf"));
  EXPECT_NE(conf.find("PARTALIGN_JOURNAL_UUID=" + boot_uuid_ + "\n"), std::string::npos) << conf;
  EXPECT_NE(conf.find("PARTALIGN_JOURNAL_FSTYPE=ext4\n"), std::string::npos) << conf;
  EXPECT_TRUE(fs::exists(Mnt(2) + "/partalign-next-boot/plan.json"));
  EXPECT_TRUE(fs::exists(Mnt(2) + "/partalign-next-boot/stage.json"));
  // Staged once: a second staging is refused until the first is taken back.
  EXPECT_NE(Partalign({"apply", "--at-next-boot", "--yes", plan}).exit_code, 0);

  // Taken back: every file of the stage gone, the disk as it was.
  const CommandResult cancelled = Partalign({"apply", "--cancel-next-boot", "--yes"});
  ASSERT_EQ(cancelled.exit_code, 0) << cancelled.out << cancelled.err;
  EXPECT_FALSE(fs::exists(State("next-boot.conf")));
  EXPECT_FALSE(fs::exists(State("next-boot.json")));
  EXPECT_FALSE(fs::exists(Mnt(2) + "/partalign-next-boot/stage.json"));
  EXPECT_EQ(Table(), before);

  // Staged again, then the boot: both unmounted, partition 2 mounted where the initramfs
  // mounts it, and `at-boot` run on it.
  ASSERT_EQ(Partalign({"apply", "--at-next-boot", "--yes", plan}).exit_code, 0);
  // What the initramfs hook asks before it builds, and the service after a boot: not run yet,
  // so it stays staged and the initramfs is not rebuilt.
  const CommandResult waiting = AfterBoot();
  EXPECT_EQ(waiting.exit_code, 0) << waiting.out << waiting.err;
  EXPECT_NE(waiting.out.find("has not run yet"), std::string::npos) << waiting.out;
  EXPECT_TRUE(fs::exists(State("next-boot.conf")));
  EXPECT_EQ(Rebuilds(), "");
  UnmountBoth();
  const std::string journal = disk_->File("journal");
  fs::create_directories(journal);
  {
    test::MountPoint mounted(disk_->loop().PartitionPath(2), journal);
    const CommandResult boot = test::RunPartalign({"at-boot", journal});
    ASSERT_EQ(boot.exit_code, 0) << boot.out << boot.err;
    EXPECT_NE(boot.out.find("partalign: at-boot done"), std::string::npos) << boot.out;
    EXPECT_FALSE(fs::exists(journal + "/partalign-next-boot/stage.json"));
    EXPECT_TRUE(fs::exists(journal + "/partalign-next-boot/done.json"));
    const CommandResult again = test::RunPartalign({"at-boot", journal});
    EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_NE(again.out.find("nothing staged"), std::string::npos) << again.out;
    ASSERT_TRUE(mounted.Unmount());
  }
  const auto after = Table();
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0], (std::pair<uint64_t, uint64_t>{2048, kRootSectors}));
  EXPECT_EQ(after[1], before[1]);
  EXPECT_EQ(test::KernelStartSize(disk_->loop(), 1),
            (std::pair<uint64_t, uint64_t>{2048, kRootSectors}));
  ExpectFilesystem(1);
  ExpectFilesystem(2);

  // After the boot, the running system (its /boot mounted again) forgets the stage and rebuilds
  // the initramfs without partalign (partalign-at-boot-finished.service); once only.
  EXPECT_TRUE(fs::exists(State("next-boot.conf")));
  MountBoth();
  const CommandResult finished = AfterBoot();
  EXPECT_EQ(finished.exit_code, 0) << finished.out << finished.err;
  EXPECT_NE(finished.out.find("was applied at boot"), std::string::npos) << finished.out;
  EXPECT_FALSE(fs::exists(State("next-boot.conf")));
  EXPECT_FALSE(fs::exists(State("next-boot.json")));
  EXPECT_EQ(Rebuilds(), "-u\n");
  const CommandResult later = AfterBoot();
  EXPECT_EQ(later.exit_code, 0) << later.out << later.err;
  EXPECT_EQ(Rebuilds(), "-u\n");
}

// A power loss while the root moves at boot (the mover killed in the middle of the copy): its
// entry is out of the table until the move is done (the fence), so that nothing booted
// meanwhile - a live USB, an older kernel's initramfs - finds the half-moved filesystem; the
// next boot finishes the move and the entry is back at its new place.
TEST_F(NextBootTest, AHalfMovedRootIsOutOfTheTableUntilTheNextBootFinishesIt) {
  const auto before = Table();
  const std::string journal = disk_->File("journal");
  std::unique_ptr<test::MountPoint> mounted = StageForBoot(journal);
  ASSERT_TRUE(mounted);
  const CommandResult cut = CutAtBoot(journal, "move:6");
  ASSERT_EQ(cut.exit_code, 128 + 9);
  EXPECT_NE(cut.out.find("Fence: partition 1 leaves the table"), std::string::npos) << cut.out;
  // The real sfdisk and blkid see partition 2 alone; the boot scripts see the runner started.
  ASSERT_EQ(Table().size(), 1u);
  EXPECT_EQ(Table()[0], before[1]);
  const CommandResult probe = test::RunCommand({"blkid", "-p", disk_->device()});
  EXPECT_EQ(probe.out.find("TYPE=\"ext4\""), std::string::npos) << probe.out;
  EXPECT_TRUE(fs::exists(journal + "/partalign-next-boot/started"));

  NextBootFinishes(journal);
  EXPECT_FALSE(fs::exists(journal + "/partalign-next-boot/started"));
  ASSERT_TRUE(mounted->Unmount());
  ExpectRealigned(before);
}

// A move stopped part-way (a signal at a batch boundary: the journal holds a consistent,
// unfinished state) keeps its fence: lifting it would put the old entry back over data that is
// half moved. The runner exits with the unfinished status; the next boot resumes the move.
TEST_F(NextBootTest, AStoppedMoveKeepsItsFenceUntilItIsResumed) {
  const auto before = Table();
  const std::string journal = disk_->File("journal");
  std::unique_ptr<test::MountPoint> mounted = StageForBoot(journal);
  ASSERT_TRUE(mounted);
  const CommandResult stopped =
      test::RunPartalign({"at-boot", journal}, "", {{"PARTALIGN_TEST_SIGINT_AFTER_BATCHES", "1"}});
  ASSERT_EQ(stopped.exit_code, 4) << stopped.out << stopped.err;
  EXPECT_EQ(stopped.out.find("is the fence an earlier run wrote"), std::string::npos)
      << stopped.out;
  ASSERT_EQ(Table().size(), 1u);
  EXPECT_EQ(Table()[0], before[1]);

  const std::string boot = NextBootFinishes(journal);
  EXPECT_EQ(boot.find("Fence lifted"), std::string::npos) << boot;
  ASSERT_TRUE(mounted->Unmount());
  ExpectRealigned(before);
}

// A power loss right after the fence, before the move under it began: the next boot finds the
// table fenced with the data at its old place, puts the entry back (its backup, through a
// journaled step), and then applies the plan as a first boot would.
TEST_F(NextBootTest, AFenceWithNoMoveUnderItIsLiftedAndTheMoveRunsAgain) {
  const auto before = Table();
  const std::string journal = disk_->File("journal");
  std::unique_ptr<test::MountPoint> mounted = StageForBoot(journal);
  ASSERT_TRUE(mounted);
  // Killed in the fence's table phase at its fifth write or flush: the MBR without partition 1
  // is written, the fence's journal not finished, the move's not begun.
  const CommandResult cut = CutAtBoot(journal, "table:5");
  ASSERT_EQ(cut.exit_code, 128 + 9);
  EXPECT_NE(cut.out.find("Fence: partition 1 leaves the table"), std::string::npos) << cut.out;
  ASSERT_EQ(Table().size(), 1u);

  const std::string boot = NextBootFinishes(journal);
  EXPECT_NE(boot.find("Fence lifted: partition 1 is back"), std::string::npos) << boot;
  ASSERT_TRUE(mounted->Unmount());
  ExpectRealigned(before);
}

// Taken back after a boot left a fence with no move under it: the cancel lifts it, so that the
// partition is in the table again at its old place, with every file.
TEST_F(NextBootTest, TakingThePlanBackLiftsAFenceTheBootLeft) {
  const auto before = Table();
  const std::string journal = disk_->File("journal");
  std::unique_ptr<test::MountPoint> mounted = StageForBoot(journal);
  ASSERT_TRUE(mounted);
  const CommandResult cut = CutAtBoot(journal, "table:5");
  ASSERT_EQ(cut.exit_code, 128 + 9);
  ASSERT_EQ(Table().size(), 1u);
  EXPECT_TRUE(fs::exists(journal + "/partalign-next-boot/started"));
  // The cut left the fence's own step unfinished: taking the plan back is refused until it is
  // resumed, as the boot's failure message says, which leaves the fence with no move under it.
  const CommandResult early = Partalign({"apply", "--cancel-next-boot", "--yes"});
  EXPECT_EQ(early.exit_code, 3) << early.out << early.err;
  const CommandResult resumed =
      test::RunPartalign({"resume", "--yes", disk_->device()}, "",
                         {{"PARTALIGN_STATE_DIR", journal + "/partalign-next-boot/state"}});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  ASSERT_EQ(Table().size(), 1u);

  // The running system (booted some other way) with the journal partition mounted.
  const CommandResult cancelled = Partalign({"apply", "--cancel-next-boot", "--yes"});
  ASSERT_EQ(cancelled.exit_code, 0) << cancelled.out << cancelled.err;
  EXPECT_NE(cancelled.out.find("Fence lifted: partition 1 is back"), std::string::npos)
      << cancelled.out;
  EXPECT_FALSE(fs::exists(journal + "/partalign-next-boot/started"));
  EXPECT_FALSE(fs::exists(journal + "/partalign-next-boot/stage.json"));
  EXPECT_FALSE(fs::exists(State("next-boot.conf")));
  ASSERT_TRUE(mounted->Unmount());
  EXPECT_EQ(Table(), before);
  ExpectFilesystem(1);
  ExpectFilesystem(2);
}

// The root in a DOS logical partition (partition 2, an aligned primary, holds the journal).
struct LogicalRoot {
  const char* name;
  int number;
  std::string layout;
  std::pair<uint64_t, uint64_t> before, placeholder, after;  // start, size
};

void PrintTo(const LogicalRoot& c, std::ostream* os) { *os << c.name; }

class NextBootLogicalRootTest : public NextBootTest,
                                public ::testing::WithParamInterface<LogicalRoot> {
 protected:
  NextBootLogicalRootTest() {
    root_ = GetParam().number;
    layout_ = GetParam().layout;
  }
};

// A power loss while a logical root moves: it keeps its entry and its number (taking it out
// would renumber the logical partitions after it), pointed at one empty sector after its EBR,
// where nothing can be mounted; the next boot finishes the move.
TEST_P(NextBootLogicalRootTest, AHalfMovedLogicalRootIsOneEmptySectorUntilTheNextBoot) {
  const LogicalRoot& c = GetParam();
  const auto before = Parts();
  ASSERT_EQ(before.at(c.number), c.before);
  const std::string journal = disk_->File("journal");
  std::unique_ptr<test::MountPoint> mounted = StageForBoot(journal);
  ASSERT_TRUE(mounted);
  const CommandResult cut = CutAtBoot(journal, "move:6");
  ASSERT_EQ(cut.exit_code, 128 + 9);
  EXPECT_NE(cut.out.find(fmt::format("Fence: partition {} leaves the table", c.number)),
            std::string::npos)
      << cut.out << cut.err;
  auto fenced = Parts();
  EXPECT_EQ(fenced.at(c.number), c.placeholder);
  // Nothing there for blkid to find: the placeholder sector is empty.
  const CommandResult probe =
      test::RunCommand({"blkid", "-p", "-O", std::to_string(c.placeholder.first * 512), "-S", "512",
                        disk_->device()});
  EXPECT_EQ(probe.out.find("TYPE="), std::string::npos) << probe.out;
  fenced.erase(c.number);
  for (const auto& [number, place] : fenced) EXPECT_EQ(place, before.at(number)) << number;

  NextBootFinishes(journal);
  ASSERT_TRUE(mounted->Unmount());
  auto after = Parts();
  EXPECT_EQ(after.at(c.number), c.after);
  after.erase(c.number);
  for (const auto& [number, place] : after) EXPECT_EQ(place, before.at(number)) << number;
  ExpectFilesystem(c.number);
  ExpectFilesystem(2);
}

// A power loss right after a logical root's fence, before its move: the next boot puts its
// entry back where it was, says so, and then moves it.
TEST_P(NextBootLogicalRootTest, AFenceWithNoMoveUnderItIsLiftedAndTheMoveRunsAgain) {
  const LogicalRoot& c = GetParam();
  const auto before = Parts();
  const std::string journal = disk_->File("journal");
  std::unique_ptr<test::MountPoint> mounted = StageForBoot(journal);
  ASSERT_TRUE(mounted);
  const CommandResult cut = CutAtBoot(journal, "table:5");
  ASSERT_EQ(cut.exit_code, 128 + 9);
  EXPECT_EQ(Parts().at(c.number), c.placeholder);

  const std::string boot = NextBootFinishes(journal);
  EXPECT_NE(boot.find(fmt::format("Fence lifted: partition {} is back", c.number)),
            std::string::npos)
      << boot;
  ASSERT_TRUE(mounted->Unmount());
  EXPECT_EQ(Parts().at(c.number), c.after);
  ExpectFilesystem(c.number);
}

INSTANTIATE_TEST_SUITE_P(
    Roots, NextBootLogicalRootTest,
    ::testing::Values(
        // As on an XP-era dual-boot disk: partition 5 at 126, its EBR at 63 (the head of the
        // chain, at the extended partition's start, which stays): the placeholder is 64.
        LogicalRoot{"FirstLogicalEbrATrackBefore",
                    5,
                    fmt::format("label: dos\nstart=63, size={}, type=5\nstart={}, size={}, "
                                "type=83\nstart=126, size=79872, type=83\n",
                                kBootStart - 63, kBootStart, kBootSectors),
                    {126, 79872},
                    {64, 1},
                    {2048, 79872}},
        // Partition 6 with its EBR in the sector right before it (where sfdisk puts it), which
        // moves with it: the placeholder is the first free sector past its new place.
        LogicalRoot{"SecondLogicalEbrRightBefore",
                    6,
                    fmt::format("label: dos\nstart=63, size={}, type=5\nstart={}, size={}, "
                                "type=83\nstart=2048, size=2048, type=83\nstart=4097, "
                                "size=71680, type=83\n",
                                kBootStart - 63, kBootStart, kBootSectors),
                    {4097, 71680},
                    {6144 + 71680, 1},
                    {6144, 71680}}),
    [](const ::testing::TestParamInfo<LogicalRoot>& param) { return param.param.name; });

// A stage record someone edited: the boot stops (exit non-zero) and the disk is untouched.
TEST_F(NextBootTest, AnEditedStageRecordStopsTheBootAndTouchesNothing) {
  MountBoth();
  const auto before = Table();
  const std::string plan = disk_->File("plan.json");
  ASSERT_EQ(Partalign({"plan", "--at-next-boot", "-o", plan, disk_->device()}).exit_code, 0);
  ASSERT_EQ(Partalign({"apply", "--at-next-boot", "--yes", plan}).exit_code, 0);
  const std::string stage = Mnt(2) + "/partalign-next-boot/stage.json";
  nlohmann::json record = nlohmann::json::parse(test::ReadFile(stage));
  record["journal_partition"]["number"] = 1;
  test::WriteFile(stage, record.dump());
  UnmountBoth();
  const std::string journal = disk_->File("journal");
  fs::create_directories(journal);
  test::MountPoint mounted(disk_->loop().PartitionPath(2), journal);
  const CommandResult boot = test::RunPartalign({"at-boot", journal});
  EXPECT_NE(boot.exit_code, 0) << boot.out << boot.err;
  EXPECT_NE(boot.err.find("staged on partition 1"), std::string::npos) << boot.err;
  EXPECT_EQ(Table(), before);
}

}  // namespace
}  // namespace partalign
