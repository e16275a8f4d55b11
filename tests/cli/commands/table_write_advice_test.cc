// SPDX-License-Identifier: GPL-3.0-or-later
// Issue #30: the advice apply, translate and restore print when a table write fails part-way
// (the disk stops taking writes: PARTALIGN_TEST_FAIL_AFTER_SECTORS, docs/apply.md) is run
// here word for word (RunAdvice), and puts the disk back byte for byte (image files: no root
// needed); and the partx apply names when the kernel cannot take the new table (a loop device).
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <map>
#include <string>

#include <fmt/format.h>

#include "support/advice.h"
#include "support/device_test.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/sfdisk.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::AdviceIn;
using test::CommandResult;
using test::RunAdvice;

// partalign's state (the registry, the default backups) where RunAdvice keeps it.
std::map<std::string, std::string> Env(const test::TempDir& dir,
                                       const std::map<std::string, std::string>& more = {}) {
  std::map<std::string, std::string> env{{"PARTALIGN_STATE_DIR", dir.File("partalign-state")}};
  env.insert(more.begin(), more.end());
  return env;
}

// The table write fails after `sectors` sectors (EIO), as on a disk that stops taking writes.
std::map<std::string, std::string> FailAfter(const test::TempDir& dir, int sectors) {
  return Env(dir, {{"PARTALIGN_TEST_FAIL_AFTER_SECTORS", std::to_string(sectors)}});
}

// A 64 MiB GPT image, two empty partitions at unaligned starts: apply changes the table only.
std::string EmptyGptImage(const test::TempDir& dir) {
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, 64ull << 20);
  EXPECT_EQ(test::WriteWithSfdisk(
                image, "label: gpt\nfirst-lba: 34\nstart=40, size=20000\nstart=30001, size=20000\n")
                .exit_code,
            0);
  return image;
}

CommandResult PlanAndApply(const test::TempDir& dir, const std::string& image,
                           const std::map<std::string, std::string>& env,
                           const std::string& backups = "backups") {
  const CommandResult planned =
      test::RunPartalign({"plan", "-o", dir.File("plan.json"), image}, "", Env(dir));
  EXPECT_EQ(planned.exit_code, 0) << planned.out << planned.err;
  return test::RunPartalign(
      {"apply", dir.File("plan.json"), "--yes", "--backup-dir", dir.File(backups)}, "", env);
}

// apply's write fails after its first sector: it names the restore of the backup it took, and
// that restore, as printed, puts every byte of the image back. The backups are in a directory
// whose name a shell would split and unquote: the advice quotes it.
TEST(TableWriteAdviceTest, AFailedApplyNamesTheRestoreThatPutsTheTableBack) {
  test::TempDir dir;
  const std::string image = EmptyGptImage(dir);
  const std::string pristine = dir.File("pristine.img");
  test::RunOrThrow({"cp", "--sparse=always", image, pristine});
  const CommandResult failed = PlanAndApply(dir, image, FailAfter(dir, 1), "it's my backups");
  ASSERT_EQ(failed.exit_code, 1) << failed.out << failed.err;
  EXPECT_NE(test::CmpFiles(image, pristine), "") << "the first sector was not written";
  const std::string restore =
      AdviceIn(failed.err, "the old table can be put back with: (partalign restore [^\n]+)");
  const CommandResult restored = RunAdvice(restore + " --yes", dir.path());
  ASSERT_EQ(restored.exit_code, 0) << restored.out << restored.err;
  EXPECT_EQ(test::CmpFiles(image, pristine), "");
}

// A plan that moves data, whose first step writes the table alone (a DOS EBR in the way of the
// next step's move: docs/apply.md, "Plans that move data"): that write fails after its first
// sector. apply names the restore of that step's backup, which, as printed, puts every byte
// back; no move had started.
TEST(TableWriteAdviceTest, AFailedTableStepOfAMovePlanNamesTheRestoreThatPutsTheTableBack) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, 100ull << 20);
  ASSERT_EQ(test::WriteWithSfdisk(image,
                                  "label: dos\nstart=63, size=65472, type=83\n"
                                  "start=65535, size=114814, type=5\n"
                                  "start=65598, size=98304, type=83\n"
                                  "start=163965, size=16384, type=83\n")
                .exit_code,
            0);
  // Data in partitions 1 and 5 (moved whole), partition 6 left zeros (moved by the table).
  for (uint64_t sector : {63ull, 65598ull}) {
    const int fd = ::open(image.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    const std::string bytes(4096, 'd');
    EXPECT_EQ(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(sector * 512 + 4096)),
              static_cast<ssize_t>(bytes.size()));
    ::close(fd);
  }
  const std::string pristine = dir.File("pristine.img");
  test::RunOrThrow({"cp", "--sparse=always", image, pristine});
  const CommandResult planned =
      test::RunPartalign({"plan", "-o", dir.File("plan.json"), image}, "", Env(dir));
  ASSERT_EQ(planned.exit_code, 0) << planned.out << planned.err;
  const CommandResult failed =
      test::RunPartalign({"apply", dir.File("plan.json"), "--yes", "--backup-dir",
                          dir.File("backups"), "--journal-dir", dir.File("journals")},
                         "", FailAfter(dir, 1));
  ASSERT_EQ(failed.exit_code, 1) << failed.out << failed.err;
  EXPECT_NE(failed.out.find("Step 1/3: the table alone"), std::string::npos) << failed.out;
  EXPECT_NE(test::CmpFiles(image, pristine), "") << "the first sector was not written";
  const std::string restore =
      AdviceIn(failed.err, "the old table can be put back with: (partalign restore [^\n]+)");
  const CommandResult restored = RunAdvice(restore + " --yes", dir.path());
  ASSERT_EQ(restored.exit_code, 0) << restored.out << restored.err;
  EXPECT_EQ(test::CmpFiles(image, pristine), "");
}

// restore's own write fails part-way: "run the restore again", as printed, finishes it.
TEST(TableWriteAdviceTest, AFailedRestoreNamesTheRestoreThatFinishesIt) {
  test::TempDir dir;
  const std::string image = EmptyGptImage(dir);
  const std::string pristine = dir.File("pristine.img");
  test::RunOrThrow({"cp", "--sparse=always", image, pristine});
  const CommandResult applied = PlanAndApply(dir, image, Env(dir));
  ASSERT_EQ(applied.exit_code, 0) << applied.out << applied.err;
  const std::string backup = test::FilesIn(dir.File("backups"), ".partalign-backup").at(0);
  const std::string aligned = dir.File("aligned.img");
  test::RunOrThrow({"cp", "--sparse=always", image, aligned});
  const CommandResult failed =
      test::RunPartalign({"restore", backup, "--yes"}, "", FailAfter(dir, 1));
  ASSERT_EQ(failed.exit_code, 1) << failed.out << failed.err;
  EXPECT_NE(test::CmpFiles(image, aligned), "") << "the first sector was not written";
  const CommandResult again = RunAdvice(
      AdviceIn(failed.err, "run the restore again: '(partalign restore [^']+)'") + " --yes",
      dir.path());
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(test::CmpFiles(image, pristine), "");
}

// translate's write fails part-way (a GPT written for 4096-byte sectors, translated for 512):
// the restore it names puts the untranslated table back.
TEST(TableWriteAdviceTest, AFailedTranslateNamesTheRestoreThatPutsTheTableBack) {
  test::TempDir dir;
  const std::string image = dir.File("gpt4k.img");
  test::CreateSparseFile(image, 128ull << 20);
  test::SfdiskImage(image, "label: gpt\nstart=256, size=5120\n", 4096);
  const std::string pristine = dir.File("pristine.img");
  test::RunOrThrow({"cp", "--sparse=always", image, pristine});
  const CommandResult failed = test::RunPartalign({"translate", "--from-sector-size", "4096", image,
                                                   "--yes", "--backup-dir", dir.File("backups")},
                                                  "", FailAfter(dir, 1));
  EXPECT_NE(test::CmpFiles(image, pristine), "") << "the first sector was not written";
  ASSERT_EQ(failed.exit_code, 1) << failed.out << failed.err;
  const CommandResult restored = RunAdvice(
      AdviceIn(failed.err, "the old table can be put back with: (partalign restore [^\n]+)") +
          " --yes",
      dir.path());
  ASSERT_EQ(restored.exit_code, 0) << restored.out << restored.err;
  EXPECT_EQ(test::CmpFiles(image, pristine), "");
}

// A program holds partition 2 open (not exclusively, not mounted: nothing partalign must
// refuse) while apply moves its start: the table is written and verified, but the kernel
// keeps the old partition 2 (BLKPG refuses an open partition). apply says so and names partx;
// once the program has let go, the partx it names, as printed, gives the kernel the new table.
TEST(TableWriteAdviceTest, AKernelThatKeepsThePartitionNamesThePartxThatUpdatesIt) {
  PARTALIGN_REQUIRE_DEVICES();
  test::PartitionedLoop disk(
      "label: gpt\nfirst-lba: 34\nstart=40, size=20000\nstart=30001, "
      "size=20000\n",
      512);
  const std::string node = disk.loop().PartitionPath(2);
  ASSERT_EQ(test::KernelStartSize(disk.loop(), 2).first, 30001u);
  const CommandResult planned = test::RunPartalign(
      {"plan", "-o", disk.File("plan.json"), disk.device()}, "", Env(disk.dir()));
  ASSERT_EQ(planned.exit_code, 0) << planned.out << planned.err;
  const nlohmann::json plan = nlohmann::json::parse(test::ReadFile(disk.File("plan.json")));
  const uint64_t new_start = plan["actions"][1]["new_start_sector"].get<uint64_t>();
  ASSERT_NE(new_start, 30001u);
  CommandResult applied;
  {
    const int fd = ::open(node.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0) << node;
    applied =
        test::RunPartalign(test::ApplyArgs(disk, disk.File("plan.json")), "", Env(disk.dir()));
    ::close(fd);
  }
  ASSERT_EQ(applied.exit_code, 1) << applied.out << applied.err;
  EXPECT_EQ(test::KernelStartSize(disk.loop(), 2).first, 30001u);
  const CommandResult partx =
      RunAdvice(AdviceIn(applied.err, "run '(partx -u [^']+)' or reboot"), disk.dir().path());
  ASSERT_EQ(partx.exit_code, 0) << partx.out << partx.err;
  EXPECT_EQ(test::KernelStartSize(disk.loop(), 2).first, new_start);
  EXPECT_EQ(test::SfdiskJson(disk.device())["partitions"][1]["start"], new_start);
}

}  // namespace
}  // namespace partalign
