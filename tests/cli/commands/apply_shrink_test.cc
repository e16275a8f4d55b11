// SPDX-License-Identifier: GPL-3.0-or-later
// A partition never shrinks in silence (issue 37, item 3), end to end on the issue's disk: a
// 64 MiB image, one partition from sector 63 (DOS) or 34 (GPT) to the disk's end, a 40 MiB
// ext4 with files in it, and data in the partition's last MiB. Aligning it to 2048 would give
// up its last 1985 (GPT 2014) sectors: `plan` reads them, finds the data and says the partition
// cannot be aligned, and why; the plan the old planner made (move it whole to 2048 up to the
// end: "63 MiB of ext4 to move up") is refused by apply, the image untouched. With zeros
// there, plan reads only those sectors, moves the partition, and apply keeps every byte
// (the disk invariant), the filesystem clean with every file.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <random>

#include <fmt/format.h>

#include "support/device_test.h"
#include "support/disk_invariant.h"
#include "support/ext4_image.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::RunOrThrow;
using test::RunPartalign;

constexpr uint64_t kDiskBytes = 64ull << 20;
constexpr uint64_t kFsSectors = 40 * 2048;  // 40 MiB

struct IssueDisk {
  const char* name;
  const char* script;
  uint64_t start;
  uint64_t end;  ///< the last usable sector
};

const IssueDisk kDisks[] = {
    {"dos", "label: dos\nstart=63, size=131009, type=83\n", 63, 131071},
    {"gpt", "label: gpt\nfirst-lba: 34\nstart=34, size=131005, type=linux\n", 34, 131038},
};

class ApplyShrinkTest : public ::testing::TestWithParam<IssueDisk> {
 protected:
  void SetUp() override {
    PARTALIGN_REQUIRE_DEVICES();
    image_ = dir_.File("disk.img");
    test::CreateSparseFile(image_, kDiskBytes);
    test::SfdiskImage(image_, GetParam().script, 512);
    files_ = test::MakeFiles("shrink");
    test::MakeExt4At(image_, GetParam().start, kFsSectors, files_, dir_, "files");
  }

  // `bytes` written at byte `offset` of the image.
  void WriteAt(uint64_t offset, const std::string& bytes) const {
    RunOrThrow({"dd", "of=" + image_, "bs=512", fmt::format("seek={}", offset), "oflag=seek_bytes",
                "iflag=fullblock", "conv=notrunc", "status=none"},
               bytes);
  }

  CommandResult Partalign(std::vector<std::string> args) const {
    return RunPartalign(args, "", {{"PARTALIGN_STATE_DIR", dir_.File("state")}});
  }

  // Where a move to 2048 ends: on the grain (DOS: the disk's end is one; GPT: the boundary
  // before its backup table), and the sectors it gives up, at the old place's end.
  uint64_t NewEnd() const { return (GetParam().end + 1) / 2048 * 2048 - 1; }
  uint64_t GivenUp() const {
    return (GetParam().end - GetParam().start + 1) - (NewEnd() - 2048 + 1);
  }

  // A copy of the image as it is now, and the plan `plan` makes, which reads the sectors the
  // move gives up (and no more).
  std::string PlanAfterSnapshot(CommandResult* planned) const {
    const std::string before = dir_.File("before.img");
    RunOrThrow({"cp", "--sparse=always", image_, before});
    *planned = Partalign({"plan", "-o", dir_.File("plan.json"), image_});
    EXPECT_EQ(planned->exit_code, 0) << planned->out << planned->err;
    EXPECT_NE(
        planned->err.find(fmt::format("reading the last {} sectors of partition 1", GivenUp())),
        std::string::npos)
        << planned->err;
    return before;
  }

  CommandResult Apply(const std::string& plan) const {
    return Partalign({"apply", "--yes", "--backup-dir", dir_.File("backups"), "--journal-dir",
                      dir_.File("journals"), plan});
  }

  test::TempDir dir_;
  std::string image_;
  test::FileSet files_;
};

TEST_P(ApplyShrinkTest, DataInTheLastMiBIsNeverDroppedByAMove) {
  const IssueDisk& d = GetParam();
  std::mt19937_64 random(7);
  std::string data(1 << 20, '\0');
  for (char& c : data) c = static_cast<char>(random() | 1);
  const uint64_t last_mib = (d.end + 1) * 512 - data.size();
  WriteAt(last_mib, data);
  // plan reads only what a move would give up, finds data there, and says so.
  CommandResult planned;
  const std::string before = PlanAfterSnapshot(&planned);
  // The first byte of data among the sectors read (from the partition's start).
  const uint64_t first_data = std::max((NewEnd() - 2048 + 1) * 512, last_mib - d.start * 512);
  EXPECT_NE(planned.out.find(
                fmt::format("partition 1: impossible: start {} cannot be aligned: ", d.start)),
            std::string::npos)
      << planned.out;
  EXPECT_NE(planned.out.find(fmt::format("moving up to 2048 needs sectors 2048-{}, {} sectors past "
                                         "the usable area",
                                         2048 + (d.end - d.start), 2048 - d.start)),
            std::string::npos)
      << planned.out;
  EXPECT_NE(planned.out.find(fmt::format("the partition holds data past it (byte {} is not zero), "
                                         "and a partition gives up data only with the person's "
                                         "consent (--make-room)",
                                         first_data)),
            std::string::npos)
      << planned.out;

  // The plan the planner made before this rule: moved to 2048 up to the end, 63 MiB copied.
  nlohmann::json old = nlohmann::json::parse(test::ReadFile(dir_.File("plan.json")));
  old["actions"][0]["new_start_sector"] = 2048;
  old["actions"][0]["kind"] = "move-data";
  old["actions"][0]["bytes_to_move"] = (d.end - 2048 + 1) * 512;
  test::WriteFile(dir_.File("old.json"), old.dump(1));
  CommandResult applied = Apply(dir_.File("old.json"));
  EXPECT_EQ(applied.exit_code, 3) << applied.out << applied.err;
  EXPECT_NE(applied.err.find(fmt::format("partition 1: sectors 2048-{} ({} sectors) are fewer than "
                                         "it keeps",
                                         d.end, d.end - 2048 + 1)),
            std::string::npos)
      << applied.err;
  EXPECT_NE(applied.err.find("nothing was written"), std::string::npos) << applied.err;
  EXPECT_EQ(test::CmpFiles(image_, before), "");
  EXPECT_TRUE(test::FilesIn(dir_.File("backups"), ".partalign-backup").empty());
}

TEST_P(ApplyShrinkTest, ZerosThereAreReadThenGivenUp) {
  CommandResult planned;
  const std::string before = PlanAfterSnapshot(&planned);
  EXPECT_NE(planned.out.find(fmt::format("shrinks by {} sectors, all past the filesystem's end, "
                                         "read: zeros",
                                         GivenUp())),
            std::string::npos)
      << planned.out;
  const nlohmann::json plan = nlohmann::json::parse(test::ReadFile(dir_.File("plan.json")));
  ASSERT_EQ(plan["actions"][0]["kind"], "move-data") << plan.dump(1);
  ASSERT_EQ(plan["actions"][0]["new_start_sector"], 2048u);
  CommandResult applied = Apply(dir_.File("plan.json"));
  ASSERT_EQ(applied.exit_code, 0) << applied.out << applied.err;
  // apply read the same sectors again, and once more while it held the disk.
  EXPECT_NE(applied.err.find(fmt::format("reading the last {} sectors of partition 1", GivenUp())),
            std::string::npos)
      << applied.err;
  EXPECT_NE(applied.out.find(fmt::format("partition 1: its last {} sectors", GivenUp())),
            std::string::npos)
      << applied.out;
  for (const std::string& v : test::DiskInvariantViolations(before, image_)) ADD_FAILURE() << v;
  EXPECT_EQ(test::CheckExt4At(image_, 2048, kFsSectors, files_, dir_), "");
}

INSTANTIATE_TEST_SUITE_P(IssueDisks, ApplyShrinkTest, ::testing::ValuesIn(kDisks),
                         [](const ::testing::TestParamInfo<IssueDisk>& p) {
                           return std::string(p.param.name);
                         });

}  // namespace
}  // namespace partalign
