// SPDX-License-Identifier: GPL-3.0-or-later
// The disk the system runs from (issue "Realign the disk the system runs from", "Now, what can
// be done now"): partition 1 mounted (standing for /), partition 2 misaligned. A partition in
// use keeps its place and size in the plan, so apply realigns the others while it stays
// mounted, and the plan says why the one in use waits.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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

using test::CommandResult;

constexpr uint64_t kDiskBytes = 160ull << 20;

class PlanInUseTest : public ::testing::Test {
 protected:
  // Two ext4 partitions with files; partition 2 starts right after partition 1.
  void MakeDisk(uint64_t p1_start, uint64_t p1_sectors, uint64_t p2_sectors) {
    PARTALIGN_REQUIRE_DEVICES();
    p1_start_ = p1_start;
    p1_sectors_ = p1_sectors;
    p2_start_ = p1_start + p1_sectors;
    p2_sectors_ = p2_sectors;
    disk_ = std::make_unique<test::PartitionedLoop>(
        fmt::format("label: dos\nstart={}, size={}, type=83\nstart={}, size={}, type=83\n",
                    p1_start_, p1_sectors_, p2_start_, p2_sectors_),
        512, kDiskBytes);
    std::mt19937_64 random(39);
    for (int number : {1, 2}) {
      const std::string node = disk_->loop().PartitionPath(number);
      test::RunOrThrow(
          {"mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", node});
      const std::string mnt = disk_->File(fmt::format("mnt{}", number));
      std::filesystem::create_directories(mnt);
      test::MountPoint mounted(node, mnt);
      std::string content(900001 + number, '\0');
      for (char& c : content) c = static_cast<char>(random());
      test::WriteFile(mnt + "/file", content);
      files_[number] = std::move(content);
      ASSERT_TRUE(mounted.Unmount());
    }
    root_ = std::make_unique<test::MountPoint>(disk_->loop().PartitionPath(1), disk_->File("mnt1"));
    for (const char* dir : {"state", "journals", "backups"}) {
      std::filesystem::create_directories(Root(dir));
    }
  }

  std::string Root(const std::string& name) const { return disk_->File("mnt1/" + name); }

  CommandResult Partalign(const std::vector<std::string>& args) const {
    return test::RunPartalign(args, "", {{"PARTALIGN_STATE_DIR", Root("state")}});
  }

  nlohmann::json Action(const nlohmann::json& plan, int partition) const {
    for (const nlohmann::json& a : plan["actions"]) {
      if (a["partition"] == partition) return a;
    }
    ADD_FAILURE() << "no action for partition " << partition;
    return {};
  }

  // Partition 1 still mounted with its file; partition 2 at `start`, e2fsck clean, its file.
  void ExpectRealigned(uint64_t start) const {
    EXPECT_EQ(test::RunCommand({"mountpoint", "-q", disk_->File("mnt1")}).exit_code, 0);
    EXPECT_TRUE(test::ReadFile(disk_->File("mnt1/file")) == files_.at(1));
    EXPECT_EQ(test::KernelStartSize(disk_->loop(), 1),
              (std::pair<uint64_t, uint64_t>{p1_start_, p1_sectors_}));
    const nlohmann::json table = test::SfdiskJson(disk_->device());
    EXPECT_EQ(table["partitions"][0]["start"], p1_start_);
    EXPECT_EQ(table["partitions"][0]["size"], p1_sectors_);
    EXPECT_EQ(table["partitions"][1]["start"], start);
    const std::string node = disk_->loop().PartitionPath(2);
    const CommandResult fsck = test::RunCommand({"e2fsck", "-fn", node});
    EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
    test::MountPoint mounted(node, disk_->File("mnt2"), "ro");
    EXPECT_TRUE(test::ReadFile(disk_->File("mnt2/file")) == files_.at(2));
  }

  CommandResult Apply(const std::string& plan) const {
    return Partalign({"apply", "--yes", "--backup-dir", Root("backups"), "--journal-dir",
                      Root("journals"), plan});
  }

  std::unique_ptr<test::PartitionedLoop> disk_;
  std::unique_ptr<test::MountPoint> root_;
  std::map<int, std::string> files_;
  uint64_t p1_start_ = 0, p1_sectors_ = 0, p2_start_ = 0, p2_sectors_ = 0;
};

// The one-disk machine: partition 1 (mounted, at 2048, aligned) ends off a MiB
// boundary and partition 2 follows it, misaligned. Before: plan grew partition 1's end and
// apply refused the whole plan because partition 1 is mounted. Now partition 1 keeps its end,
// partition 2 moves to the next aligned start after it, and apply does it while partition 1
// stays mounted.
TEST_F(PlanInUseTest, AMountedPartitionKeepsItsEndSoTheOthersAreRealignedNow) {
  MakeDisk(2048, 131072 - 100, 65536);
  const std::string plan = disk_->File("plan.json");
  const CommandResult made = Partalign({"plan", "-o", plan, disk_->device()});
  ASSERT_EQ(made.exit_code, 0) << made.out << made.err;
  const nlohmann::json doc = nlohmann::json::parse(test::ReadFile(plan));
  const nlohmann::json a1 = Action(doc, 1), a2 = Action(doc, 2);
  EXPECT_EQ(a1["kind"], "none") << a1;
  EXPECT_EQ(a1["new_end_sector"], p1_start_ + p1_sectors_ - 1) << a1;
  EXPECT_NE(a1["reason"].get<std::string>().find("in use by the running system"), std::string::npos)
      << a1;
  EXPECT_EQ(a2["kind"], "move-data") << a2;
  const uint64_t new_start = a2["new_start_sector"];
  EXPECT_EQ(new_start, 133120u);  // the first MiB boundary after partition 1's end
  const CommandResult r = Apply(plan);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ExpectRealigned(new_start);
}

// Partition 1 mounted at sector 63: it cannot move while the system runs from it. plan says so
// in its row and aligns partition 2, which apply moves while partition 1 stays mounted.
TEST_F(PlanInUseTest, AMisalignedMountedPartitionWaitsAndTheOthersAreRealigned) {
  MakeDisk(63, 131072, 65536);
  const CommandResult text = Partalign({"plan", disk_->device()});
  ASSERT_EQ(text.exit_code, 0) << text.out << text.err;
  EXPECT_NE(text.out.find("in use by the running system"), std::string::npos) << text.out;
  const std::string plan = disk_->File("plan.json");
  ASSERT_EQ(Partalign({"plan", "-o", plan, disk_->device()}).exit_code, 0);
  const nlohmann::json doc = nlohmann::json::parse(test::ReadFile(plan));
  const nlohmann::json a1 = Action(doc, 1), a2 = Action(doc, 2);
  EXPECT_EQ(a1["kind"], "impossible") << a1;
  EXPECT_EQ(a1["new_start_sector"], 63u) << a1;
  EXPECT_EQ(a2["kind"], "move-data") << a2;
  const uint64_t new_start = a2["new_start_sector"];
  EXPECT_EQ(new_start % 2048, 0u);
  const CommandResult r = Apply(plan);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ExpectRealigned(new_start);
}

}  // namespace
}  // namespace partalign
