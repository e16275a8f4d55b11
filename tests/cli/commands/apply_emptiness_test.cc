// SPDX-License-Identifier: GPL-3.0-or-later
// "Empty is proven, never guessed" end to end (docs/audit-plan.md, "Empty is proven"): a DOS
// partition at sector 63 whose first MiB is zeros and whose bytes after it hold raw data (a
// raw database or VM volume, a volume wiped at its head), or data only in its last MiB, is
// moved with its bytes; a partition that is all zeros is read in full and moved by the table;
// `--discard` gives up a partition's contents on the user's word; `--no-scan` moves what is
// not proven empty whole; data written after the plan proved a partition empty makes apply
// refuse. Every apply is checked with the disk invariant (support/disk_invariant.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "support/advice.h"
#include "support/device_test.h"
#include "support/disk_invariant.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::PartitionedLoop;
using test::RunCommand;
using test::RunOrThrow;

// Partition 1 at 63 (100000 sectors, 48.8 MiB), partition 2 aligned after it; the gap between
// them and the one before partition 1 hold random bytes (what the invariant must keep).
constexpr const char* kScript =
    "label: dos\nstart=63, size=100000, type=83\nstart=104448, size=20480, type=83\n";
constexpr uint64_t kPart1 = 63 * 512;
constexpr uint64_t kPart1Bytes = 100000ull * 512;

std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(random());
  return out;
}

void WriteAt(const std::string& path, uint64_t offset, const std::string& bytes) {
  RunOrThrow({"dd", "of=" + path, "bs=512", fmt::format("seek={}", offset), "oflag=seek_bytes",
              "iflag=fullblock", "conv=notrunc,fsync", "status=none"},
             bytes);
}

class ApplyEmptinessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PARTALIGN_REQUIRE_DEVICES();
    disk_ = std::make_unique<PartitionedLoop>(kScript, 512, 64ull << 20);
    std::filesystem::create_directories(disk_->File("state"));
    // Vendor data before partition 1 (sectors 1-62) and in the gap after it: never written.
    WriteAt(disk_->device(), 512, RandomBytes(62 * 512, 1));
    WriteAt(disk_->device(), (63 + 100000) * 512ull, RandomBytes((104448 - 100063) * 512, 2));
  }

  CommandResult Partalign(std::vector<std::string> args) const {
    return test::RunPartalign(args, "", {{"PARTALIGN_STATE_DIR", disk_->File("state")}});
  }

  // plan -o, then apply --yes; both must succeed. Returns plan's output.
  CommandResult PlanAndApply(std::vector<std::string> plan_extra = {}) {
    before_ = disk_->Snapshot("before.img");
    std::vector<std::string> plan = {"plan", disk_->device(), "-o", disk_->File("plan.json")};
    plan.insert(plan.end(), plan_extra.begin(), plan_extra.end());
    CommandResult planned = Partalign(plan);
    EXPECT_EQ(planned.exit_code, 0) << planned.err;
    CommandResult applied = Partalign(test::ApplyArgs(*disk_, disk_->File("plan.json")));
    EXPECT_EQ(applied.exit_code, 0) << applied.out << applied.err;
    return planned;
  }

  std::vector<std::string> Violations(test::DiskInvariantOptions options = {}) const {
    return test::DiskInvariantViolations(before_, disk_->device(), options);
  }

  std::unique_ptr<PartitionedLoop> disk_;
  std::string before_;
};

TEST_F(ApplyEmptinessTest, RawDataAfterAZeroFirstMiBMovesWithThePartition) {
  // The case: the first MiB zeros, 10 MiB of raw data after it.
  const std::string data = RandomBytes(10 << 20, 3);
  WriteAt(disk_->device(), kPart1 + (1 << 20), data);
  CommandResult planned = PlanAndApply();
  EXPECT_NE(planned.out.find("partition 1: move-data: start 63 -> 2048"), std::string::npos)
      << planned.out;
  EXPECT_NE(planned.out.find("no signature, data at byte 1048576: moved whole"), std::string::npos)
      << planned.out;
  EXPECT_EQ(test::SfdiskJson(disk_->device())["partitions"][0]["start"], 2048);
  for (const std::string& v : Violations()) ADD_FAILURE() << v;
  // The data sits at the same offset of the partition as before.
  CommandResult moved =
      RunCommand({"cmp", "-n", std::to_string(data.size()), "-i",
                  fmt::format("0:{}", 2048 * 512 + (1 << 20)), "-", disk_->device()},
                 data);
  EXPECT_EQ(moved.exit_code, 0) << moved.out << moved.err;
}

TEST_F(ApplyEmptinessTest, DataOnlyInTheLastMiBIsFoundByReadingItAll) {
  WriteAt(disk_->device(), kPart1 + kPart1Bytes - (1 << 20), RandomBytes(1 << 20, 4));
  CommandResult planned = PlanAndApply();
  EXPECT_NE(planned.err.find("reading partition 1 in full (48.83 MiB) to prove it empty"),
            std::string::npos)
      << planned.err;
  EXPECT_NE(planned.out.find(
                fmt::format("no signature, data at byte {}: moved whole", kPart1Bytes - (1 << 20))),
            std::string::npos)
      << planned.out;
  for (const std::string& v : Violations()) ADD_FAILURE() << v;
}

TEST_F(ApplyEmptinessTest, AllZerosIsReadInFullThenMovedByTheTableAlone) {
  // Zeros written over the whole partition (a block device has no holes to tell).
  WriteAt(disk_->device(), kPart1, std::string(kPart1Bytes, '\0'));
  CommandResult planned = PlanAndApply();
  EXPECT_NE(planned.out.find("partition 1: table-only: start 63 -> 2048"), std::string::npos)
      << planned.out;
  EXPECT_NE(planned.out.find("read all 48.83 MiB: zeros"), std::string::npos) << planned.out;
  test::DiskInvariantOptions options;
  options.left_behind = {1};
  for (const std::string& v : Violations(options)) ADD_FAILURE() << v;
}

TEST_F(ApplyEmptinessTest, DataWrittenAfterThePlanProvedItEmptyIsRefused) {
  WriteAt(disk_->device(), kPart1, std::string(kPart1Bytes, '\0'));
  CommandResult planned = Partalign({"plan", disk_->device(), "-o", disk_->File("plan.json")});
  ASSERT_EQ(planned.exit_code, 0) << planned.err;
  ASSERT_NE(planned.out.find("table-only"), std::string::npos) << planned.out;
  WriteAt(disk_->device(), kPart1 + 30 * (1 << 20), "a database page");
  const std::string before = disk_->Snapshot("before.img");
  CommandResult applied = Partalign(test::ApplyArgs(*disk_, disk_->File("plan.json")));
  EXPECT_EQ(applied.exit_code, 1) << applied.err;
  EXPECT_NE(applied.err.find(fmt::format(
                "partition 1 holds data (no signature, byte {} is not zero) but the plan moves "
                "its start as 'table-only': the data would stay behind",
                30 * (1 << 20))),
            std::string::npos)
      << applied.err;
  EXPECT_NE(applied.err.find("nothing was written"), std::string::npos) << applied.err;
  EXPECT_EQ(test::CmpFiles(before, disk_->device()), "");
  EXPECT_TRUE(test::FilesIn(disk_->File("backups"), ".partalign-backup").empty());
}

TEST_F(ApplyEmptinessTest, DiscardGivesUpTheContentsOnTheUsersWord) {
  WriteAt(disk_->device(), kPart1 + (1 << 20), RandomBytes(1 << 20, 5));
  before_ = disk_->Snapshot("before.img");
  CommandResult planned =
      Partalign({"plan", disk_->device(), "-o", disk_->File("plan.json"), "--discard", "1"});
  ASSERT_EQ(planned.exit_code, 0) << planned.err;
  EXPECT_NE(planned.out.find("partition 1: table-only: start 63 -> 2048"), std::string::npos)
      << planned.out;
  EXPECT_NE(
      planned.out.find("contents discarded (--discard): whatever it holds is given up (not read)"),
      std::string::npos)
      << planned.out;
  CommandResult dry = Partalign({"apply", disk_->File("plan.json"), "--dry-run", "--discard", "1",
                                 "--backup-dir", disk_->File("backups")});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find("partition 1: contents discarded (--discard): it may hold data (no "
                         "signature, not proven empty); sectors 63-100062 keep whatever they "
                         "hold"),
            std::string::npos)
      << dry.out;
  // The plan file's "discarded" is a claim, not consent: apply asks for it again and names the
  // command that gives it (docs/advice.md), which is then run word for word.
  CommandResult unsaid = Partalign(test::ApplyArgs(*disk_, disk_->File("plan.json")));
  EXPECT_EQ(unsaid.exit_code, 3) << unsaid.out << unsaid.err;
  EXPECT_EQ(test::CmpFiles(before_, disk_->device()), "");
  const std::string advice = test::AdviceIn(
      unsaid.err, "partition 1: the plan gives up its contents .*: '([^']+)' gives them up");
  EXPECT_EQ(advice, "partalign apply --discard 1 " + disk_->File("plan.json"));
  // A discard the plan does not make is refused too.
  CommandResult extra = Partalign(
      test::ApplyArgs(*disk_, disk_->File("plan.json"), {"--discard", "1", "--discard", "2"}));
  EXPECT_EQ(extra.exit_code, 3) << extra.err;
  EXPECT_NE(extra.err.find("--discard 2: the plan does not give up the contents of partition 2"),
            std::string::npos)
      << extra.err;
  EXPECT_EQ(test::CmpFiles(before_, disk_->device()), "");
  CommandResult applied = test::RunAdvice(advice + " --yes --backup-dir " + disk_->File("backups") +
                                              " --journal-dir " + disk_->File("journals"),
                                          disk_->dir().path());
  ASSERT_EQ(applied.exit_code, 0) << applied.out << applied.err;
  test::DiskInvariantOptions options;
  options.left_behind = {1};
  for (const std::string& v : Violations(options)) ADD_FAILURE() << v;
}

TEST_F(ApplyEmptinessTest, NoScanMovesWhatIsNotProvenEmptyWhole) {
  WriteAt(disk_->device(), kPart1, std::string(kPart1Bytes, '\0'));
  CommandResult planned = PlanAndApply({"--no-scan"});
  EXPECT_EQ(planned.err.find("reading partition 1 in full"), std::string::npos) << planned.err;
  EXPECT_NE(planned.out.find("no signature, not proven empty: moved whole"), std::string::npos)
      << planned.out;
  for (const std::string& v : Violations()) ADD_FAILURE() << v;
}

TEST(ApplyEmptinessImageTest, AnImageOfHolesIsProvenEmptyWithoutReading) {
  PARTALIGN_REQUIRE_DEVICES();
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, 64ull << 20);
  test::SfdiskImage(image, kScript, 512);
  CommandResult planned = test::RunPartalign({"plan", image, "-o", dir.File("plan.json")}, "",
                                             {{"PARTALIGN_STATE_DIR", dir.File("state")}});
  ASSERT_EQ(planned.exit_code, 0) << planned.err;
  EXPECT_EQ(planned.err.find("reading partition 1 in full"), std::string::npos) << planned.err;
  EXPECT_NE(planned.out.find("the image holds only holes there"), std::string::npos) << planned.out;
}

}  // namespace
}  // namespace partalign
