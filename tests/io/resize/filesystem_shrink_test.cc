// SPDX-License-Identifier: GPL-3.0-or-later
// Shrinking each kind of contents with its own tool on a scratch copy (ShrinkOnScratch), then
// writing the changes as a journaled step that moves no data (StartMove): the filesystem clean
// by its own checker, every file intact, the swap's UUID, label and page size kept, nothing
// written outside the partition's new extent, the disk untouched until the step. And the step
// killed at each of its write and flush points (the test-only kill switch, in a child process):
// `resume` completes it or rolls it back, and a rollback leaves every byte as it was.
#include "io/resize/filesystem_shrink.h"
#include "io/resize/shrink_limit.h"

#include <signal.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "io/device/target.h"
#include "io/move/mover.h"
#include "partalign/topology/alignment.h"
#include "support/device_test.h"
#include "support/moved_disk.h"
#include "support/run_command.h"
#include "support/shrink_disks.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

constexpr uint64_t kSector = 512;
/// An XP-style start: the first sector after the first track of 63.
constexpr uint64_t kStart = 63;
/// The few MiB "make room" asks for, and an odd sector.
constexpr uint64_t kGivenUpSectors = (5ull << 20) / kSector + 1;

struct Case {
  const char* type;
  const char* name;
  /// An odd number of sectors, as a partition ending on a cylinder has. FAT32 as Windows makes
  /// it (4 KiB clusters) needs 65525 clusters and more: libparted's FAT resizer keeps the
  /// cluster size, and cannot shrink a FAT32 of 512-byte clusters at all.
  uint64_t sectors;
};

const Case kCases[] = {{"ext4", "ext4", (72ull << 20) / kSector + 17},
                       {"ntfs", "ntfs", (72ull << 20) / kSector + 17},
                       {"vfat", "fat32", (300ull << 20) / kSector + 17},
                       {"swap", "swap", (72ull << 20) / kSector + 17}};

class FilesystemShrinkTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    PARTALIGN_REQUIRE_DEVICES();
    ::setenv("PARTALIGN_STATE_DIR", state_.path().c_str(), 1);
    image_ = disk_.File("disk.img");
    test::CreateSparseFile(image_, ImageBytes());
    test::FillRandom(image_, 0, ImageBytes(), 38);
    if (std::string(GetParam().type) != "swap") files_ = test::MakeFiles(GetParam().name);
    test::MakeFilesystemAt(image_, GetParam().type, kStart, Sectors(), files_, disk_);
    ASSERT_EQ(test::CheckFilesystemAt(image_, GetParam().type, kStart, Sectors(), files_, disk_),
              "");
  }
  void TearDown() override { ::unsetenv("PARTALIGN_STATE_DIR"); }

  static uint64_t Sectors() { return GetParam().sectors; }
  static uint64_t NewSectors() { return Sectors() - kGivenUpSectors; }
  /// The partition and a MiB after it, whose bytes nothing may change.
  static uint64_t ImageBytes() { return (kStart + Sectors()) * kSector + kMiB; }

  Result<ShrinkOutcome> Shrink(int fd) const { return Shrink(fd, NewSectors()); }
  Result<ShrinkOutcome> Shrink(int fd, uint64_t new_sectors) const {
    return ShrinkOnScratch({.disk_fd = fd,
                            .disk_path = image_,
                            .offset_bytes = kStart * kSector,
                            .length_bytes = Sectors() * kSector,
                            .new_length_bytes = new_sectors * kSector,
                            .sector_bytes = kSector,
                            .fs_type = GetParam().type,
                            .scratch_dir = journals_.path(),
                            .name = "partition 1 of 'disk.img'"});
  }

  MoveRequest Step(const ShrinkOutcome& outcome, const std::string& journal) const {
    MoveRequest request;
    request.move = {kStart * kSector, kStart * kSector, 0};
    request.table = outcome.updates;
    request.journal_path = journal;
    request.step = fmt::format("shrink the {} of partition 1", GetParam().type);
    return request;
  }

  // The bytes outside the partition's new extent, which neither the shrink nor its rollback
  // may change.
  std::string Outside() const {
    const uint64_t end = (kStart + NewSectors()) * kSector;
    return test::DigestBytes(image_, 0, kStart * kSector) + "/" +
           test::DigestBytes(image_, end, ImageBytes() - end);
  }

  test::TempDir state_;
  test::TempDir disk_;
  test::TempDir journals_;
  std::string image_;
  test::FileSet files_;
};

TEST_P(FilesystemShrinkTest, ShrinksWithItsToolAndKeepsEveryFile) {
  const std::string before = test::DigestBytes(image_, 0, ImageBytes());
  const std::string outside = Outside();
  Result<Target> reader = OpenTarget(image_);
  ASSERT_TRUE(reader) << reader.error().message;
  Result<ShrinkOutcome> outcome = Shrink(reader->fd.get());
  ASSERT_TRUE(outcome) << outcome.error().message;
  // The tool ran on the scratch copy: the disk is as it was, and nothing of the copy is left.
  EXPECT_EQ(test::DigestBytes(image_, 0, ImageBytes()), before);
  EXPECT_TRUE(std::filesystem::is_empty(journals_.path()));
  ASSERT_FALSE(outcome->updates.empty());
  std::string steps;
  for (const std::string& s : outcome->steps) steps += s + "\n";
  for (const TableUpdate& u : outcome->updates) {
    EXPECT_GE(u.offset_bytes, kStart * kSector) << steps;
    EXPECT_LE(u.offset_bytes + u.new_bytes.size(), (kStart + NewSectors()) * kSector) << steps;
    EXPECT_EQ(u.offset_bytes % kSector, 0u);
    EXPECT_NE(u.old_bytes, u.new_bytes);
  }
  reader = MakeError("closed");

  Result<Target> target = OpenTarget(image_, {.write = true, .exclusive = true});
  ASSERT_TRUE(target) << target.error().message;
  Result<MoveOutcome> written =
      StartMove(*target, Step(*outcome, journals_.File("shrink.journal")));
  ASSERT_TRUE(written) << written.error().message;
  ASSERT_EQ(written->status, MoveStatus::kCompleted) << written->message;
  target = MakeError("closed");
  EXPECT_EQ(test::CheckFilesystemAt(image_, GetParam().type, kStart, NewSectors(), files_, disk_),
            "")
      << steps;
  EXPECT_EQ(Outside(), outside);
  EXPECT_FALSE(std::filesystem::exists(journals_.File("shrink.journal")));
}

// The limit plan offers is one the tool reaches: shrunk to it (rounded up to a MiB), the
// contents are clean and whole.
TEST_P(FilesystemShrinkTest, ItsToolShrinksItToTheLimitPlanOffers) {
  Result<Target> reader = OpenTarget(image_);
  ASSERT_TRUE(reader) << reader.error().message;
  Result<ShrinkLimit> limit =
      ReadShrinkLimit(reader->fd.get(), image_, kStart * kSector, Sectors() * kSector,
                      GetParam().type, journals_.path());
  ASSERT_TRUE(limit) << limit.error().message;
  ASSERT_TRUE(limit->tool) << limit->reason;
  EXPECT_GE(limit->min_bytes, limit->used_bytes);
  const uint64_t new_sectors = AlignUp(limit->min_bytes, kMiB) / kSector;
  ASSERT_LT(new_sectors, Sectors()) << limit->min_bytes;
  Result<ShrinkOutcome> outcome = Shrink(reader->fd.get(), new_sectors);
  ASSERT_TRUE(outcome) << outcome.error().message;
  reader = MakeError("closed");
  Result<Target> target = OpenTarget(image_, {.write = true, .exclusive = true});
  ASSERT_TRUE(target) << target.error().message;
  Result<MoveOutcome> written = StartMove(*target, Step(*outcome, journals_.File("limit.journal")));
  ASSERT_TRUE(written) << written.error().message;
  ASSERT_EQ(written->status, MoveStatus::kCompleted) << written->message;
  target = MakeError("closed");
  EXPECT_EQ(test::CheckFilesystemAt(image_, GetParam().type, kStart, new_sectors, files_, disk_),
            "");
}

// `partalign move` with the step's ranges (--length 0: a step that moves no data), the kill
// switch stopping it at its `point`-th write or flush. The new bytes come from `new_bytes`, a copy
// of the image with the shrink's changes in place. Returns how many points it passed when it
// was not killed (nullopt: it was killed there).
std::optional<uint64_t> RunStepKilledAt(const std::string& image, const std::string& new_bytes,
                                        const ShrinkOutcome& outcome, const std::string& journal,
                                        uint64_t point) {
  const std::string at = std::to_string(kStart * kSector);
  std::vector<std::string> args = {
      "move",      image,   "--from",      at,        "--to", at, "--length", "0",
      "--journal", journal, "--new-table", new_bytes, "--yes"};
  for (const TableUpdate& u : outcome.updates) {
    args.push_back("--table-range");
    args.push_back(fmt::format("{}:{}", u.offset_bytes, u.new_bytes.size()));
  }
  const test::CommandResult run =
      test::RunPartalign(args, "", {{"PARTALIGN_TEST_KILL_AFTER", std::to_string(point)}});
  if (run.exit_code == 128 + SIGKILL) return std::nullopt;
  EXPECT_EQ(run.exit_code, 0) << test::Describe(args, run);
  unsigned long points = 0;
  const size_t line = run.err.find("partalign: test: ");
  EXPECT_NE(line, std::string::npos) << run.err;
  if (line != std::string::npos) {
    std::sscanf(run.err.c_str() + line, "partalign: test: %lu kill points passed", &points);
  }
  return points;
}

// The kill points to try out of `total`: the first and last few (the journal's creation, its
// first state, the last range and the state after it) and others spread evenly between.
std::vector<uint64_t> KillPoints(uint64_t total) {
  constexpr uint64_t kEnds = 4, kBetween = 12;
  std::vector<uint64_t> points;
  for (uint64_t p = 1; p <= total; ++p) {
    if (p <= kEnds || p + kEnds > total ||
        (p - kEnds) % std::max<uint64_t>(1, total / kBetween) == 0) {
      points.push_back(p);
    }
  }
  return points;
}

TEST_P(FilesystemShrinkTest, AKillAtEachPointIsCompletedOrRolledBack) {
  const std::string pristine = disk_.File("pristine.img");
  std::filesystem::copy_file(image_, pristine);
  const std::string before = test::DigestBytes(image_, 0, ImageBytes());
  const std::string outside = Outside();
  Result<ShrinkOutcome> outcome = [&] {
    Result<Target> reader = OpenTarget(image_);
    return reader ? Shrink(reader->fd.get()) : Result<ShrinkOutcome>(reader.error());
  }();
  ASSERT_TRUE(outcome) << outcome.error().message;
  const std::string journal = journals_.File("shrink.journal");
  // The new bytes at their places, for `move --new-table`.
  const std::string new_bytes = disk_.File("new-bytes.img");
  std::filesystem::copy_file(pristine, new_bytes);
  {
    std::fstream f(new_bytes, std::ios::in | std::ios::out | std::ios::binary);
    for (const TableUpdate& u : outcome->updates) {
      f.seekp(static_cast<std::streamoff>(u.offset_bytes));
      f.write(reinterpret_cast<const char*>(u.new_bytes.data()),
              static_cast<std::streamsize>(u.new_bytes.size()));
    }
  }
  // An uninterrupted run counts the points.
  const std::optional<uint64_t> total =
      RunStepKilledAt(image_, new_bytes, *outcome, journal, uint64_t{1} << 40);
  ASSERT_TRUE(total && *total > 4u);
  int completed = 0, rolled_back = 0;
  for (uint64_t point : KillPoints(*total)) {
    std::filesystem::copy_file(pristine, image_, std::filesystem::copy_options::overwrite_existing);
    ASSERT_FALSE(RunStepKilledAt(image_, new_bytes, *outcome, journal, point))
        << "point " << point << " of " << *total;
    if (!std::filesystem::exists(journal)) {
      // Killed before the journal existed: nothing was written.
      ASSERT_EQ(test::DigestBytes(image_, 0, ImageBytes()), before) << "point " << point;
      continue;
    }
    // Every other point completes, the others roll back; as the user would, by the command
    // the interrupted step names.
    const bool rollback = point % 2 == 0;
    std::vector<std::string> args = {"resume", journal, "--yes"};
    if (rollback) args.insert(args.begin() + 1, "--rollback");
    const test::CommandResult resumed = test::RunPartalign(args);
    // Killed after the step was done: a rollback says so and exits 1, having undone nothing
    // (docs/mover.md §11).
    const bool was_done = resumed.err.find("the move had already completed") != std::string::npos;
    if (resumed.exit_code != 0 && !was_done) {
      // Killed before the journal's header was durable: an unreadable journal, whose step never
      // wrote the disk (I8 of docs/mover.md).
      ASSERT_EQ(test::DigestBytes(image_, 0, ImageBytes()), before)
          << "point " << point << ": " << test::Describe(args, resumed);
      std::filesystem::remove(journal);
      continue;
    }
    ASSERT_FALSE(std::filesystem::exists(journal)) << "point " << point;
    // Killed while the journal was starting: resume removes it, nothing was written
    // (docs/mover.md, registration before the journal).
    const bool never_wrote = resumed.out.find("never started") != std::string::npos ||
                             resumed.out.find("interrupted while starting") != std::string::npos;
    if (was_done || (resumed.out.find("rolled back") == std::string::npos && !never_wrote)) {
      ++completed;
      ASSERT_EQ(
          test::CheckFilesystemAt(image_, GetParam().type, kStart, NewSectors(), files_, disk_), "")
          << "point " << point << ": " << resumed.out;
      ASSERT_EQ(Outside(), outside) << "point " << point;
    } else {
      ++rolled_back;
      ASSERT_EQ(test::DigestBytes(image_, 0, ImageBytes()), before)
          << "point " << point << ": " << resumed.out;
    }
  }
  EXPECT_GT(completed, 0);
  EXPECT_GT(rolled_back, 0);
}

TEST(FilesystemShrinkRefusalTest, XfsAndAHibernatedSwapAreRefusedWithTheReason) {
  PARTALIGN_REQUIRE_DEVICES();
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  // mkfs.xfs makes nothing below 300 MiB.
  test::CreateSparseFile(image, 320 << 20);
  test::RunOrThrow({"mkfs.xfs", "-q", "-f", image});
  Result<Target> reader = OpenTarget(image);
  ASSERT_TRUE(reader);
  ShrinkRequest request{.disk_fd = reader->fd.get(),
                        .disk_path = image,
                        .offset_bytes = 0,
                        .length_bytes = 320 << 20,
                        .new_length_bytes = 316 << 20,
                        .fs_type = "xfs",
                        .scratch_dir = dir.path(),
                        .name = "partition 1"};
  Result<ShrinkOutcome> xfs = ShrinkOnScratch(request);
  ASSERT_FALSE(xfs);
  EXPECT_NE(xfs.error().message.find("XFS cannot be shrunk"), std::string::npos)
      << xfs.error().message;

  // A swap area holding a hibernation image: the signature libblkid calls swsuspend.
  reader = MakeError("closed");
  test::RunOrThrow({"mkswap", image});
  {
    std::fstream f(image, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4096 - 10);
    f.write("S1SUSPEND\0", 10);
  }
  const std::string before = test::DigestBytes(image, 0, 320 << 20);
  reader = OpenTarget(image);
  ASSERT_TRUE(reader);
  request.disk_fd = reader->fd.get();
  request.fs_type = "swap";  // what the partition's type says, whatever libblkid said
  Result<ShrinkOutcome> swap = ShrinkOnScratch(request);
  ASSERT_FALSE(swap);
  EXPECT_NE(swap.error().message.find("hibernation image"), std::string::npos)
      << swap.error().message;
  EXPECT_EQ(test::DigestBytes(image, 0, 320 << 20), before);
}

INSTANTIATE_TEST_SUITE_P(Filesystems, FilesystemShrinkTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           return std::string(param_info.param.name);
                         });

}  // namespace
}  // namespace partalign
