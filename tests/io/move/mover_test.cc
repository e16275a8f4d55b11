// SPDX-License-Identifier: GPL-3.0-or-later
// The mover on real files: an image file moved through StartMove/ResumeMove with its journal in
// another directory, and the refusals that protect a move before it writes anything. Image
// files need no root; loop devices are in tests/cli/command_move_test.cc.
#include "io/move/mover.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "io/move/journal_registry.h"
#include "support/device_test.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

constexpr uint64_t kImageBytes = 8 << 20;
const MoveGeometry kMove{63 * 512, 2048 * 512, 5 << 20, 1 << 20};

std::string RandomImage(const std::string& path, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string bytes(kImageBytes, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  std::ofstream(path, std::ios::binary) << bytes;
  return bytes;
}

// Each test gets its own journal registry.
class MoverTest : public ::testing::Test {
 protected:
  void SetUp() override { ::setenv("PARTALIGN_STATE_DIR", state_.path().c_str(), 1); }
  void TearDown() override { ::unsetenv("PARTALIGN_STATE_DIR"); }

  Result<Target> OpenForWriting(const std::string& path) {
    return OpenTarget(path, {.write = true, .exclusive = true});
  }

  test::TempDir state_;
  test::TempDir images_;
  test::TempDir journals_;
};

TEST_F(MoverTest, MovesAnImageAndLeavesNoJournal) {
  const std::string image = images_.File("disk.img");
  const std::string original = RandomImage(image, 1);
  Result<Target> target = OpenForWriting(image);
  ASSERT_TRUE(target) << target.error().message;
  const std::string journal = journals_.File("move.journal");
  Result<MoveOutcome> outcome = StartMove(*target, {kMove, {}, journal});
  ASSERT_TRUE(outcome) << outcome.error().message;
  ASSERT_EQ(outcome->status, MoveStatus::kCompleted) << outcome->message;
  const std::string moved = test::ReadFile(image);
  EXPECT_EQ(moved.substr(kMove.dest_bytes, kMove.length_bytes),
            original.substr(kMove.source_bytes, kMove.length_bytes));
  EXPECT_EQ(moved.substr(0, kMove.source_bytes), original.substr(0, kMove.source_bytes));
  EXPECT_FALSE(std::filesystem::exists(journal));
  Result<std::vector<RegisteredJournal>> registered = ListRegisteredJournals();
  ASSERT_TRUE(registered);
  EXPECT_TRUE(registered->empty());
}

TEST_F(MoverTest, RefusesAJournalThatAlreadyExists) {
  const std::string image = images_.File("disk.img");
  RandomImage(image, 2);
  const std::string journal = journals_.File("move.journal");
  std::ofstream(journal) << "someone's file";
  Result<Target> target = OpenTarget(image);
  ASSERT_TRUE(target);
  Status allowed = CheckMoveAllowed(*target, journal);
  ASSERT_FALSE(allowed);
  EXPECT_NE(allowed.error().message.find("already exists"), std::string::npos);
  EXPECT_EQ(test::ReadFile(journal), "someone's file");
}

TEST_F(MoverTest, RefusesAJournalOnTmpfs) {
  if (!std::filesystem::is_directory("/dev/shm")) GTEST_SKIP() << "no /dev/shm here";
  const std::string image = images_.File("disk.img");
  RandomImage(image, 3);
  Result<Target> target = OpenTarget(image);
  ASSERT_TRUE(target);
  Status allowed = CheckMoveAllowed(*target, "/dev/shm/partalign-never-created.journal");
  ASSERT_FALSE(allowed);
  EXPECT_NE(allowed.error().message.find("power failure"), std::string::npos)
      << allowed.error().message;
}

TEST_F(MoverTest, AnUnfinishedMoveBlocksTheNextAndResumeFinishesIt) {
  const std::string image = images_.File("disk.img");
  const std::string original = RandomImage(image, 4);
  const std::string journal = journals_.File("first.journal");
  {
    Result<Target> target = OpenForWriting(image);
    ASSERT_TRUE(target);
    MoverHooks stop_after_first_batch;
    int asked = 0;
    stop_after_first_batch.stop_requested = [&] { return ++asked > 1; };
    Result<MoveOutcome> outcome = StartMove(*target, {kMove, {}, journal}, stop_after_first_batch);
    ASSERT_TRUE(outcome) << outcome.error().message;
    ASSERT_EQ(outcome->status, MoveStatus::kStopped);
  }
  Result<Target> target = OpenForWriting(image);
  ASSERT_TRUE(target);
  // A second move on the same image is refused, naming the journal to resume.
  Status allowed = CheckMoveAllowed(*target, journals_.File("second.journal"));
  ASSERT_FALSE(allowed);
  EXPECT_NE(allowed.error().message.find("partalign resume " + journal), std::string::npos)
      << allowed.error().message;

  Result<JournalSummary> summary = InspectJournal(journal);
  ASSERT_TRUE(summary) << summary.error().message;
  ASSERT_TRUE(summary->state);
  EXPECT_EQ(summary->state->phase, JournalPhase::kMoving);
  EXPECT_EQ(summary->header.move, kMove);

  Result<MoveOutcome> resumed = ResumeMove(*target, journal, ResumeMode::kComplete);
  ASSERT_TRUE(resumed) << resumed.error().message;
  ASSERT_EQ(resumed->status, MoveStatus::kCompleted) << resumed->message;
  EXPECT_EQ(test::ReadFile(image).substr(kMove.dest_bytes, kMove.length_bytes),
            original.substr(kMove.source_bytes, kMove.length_bytes));
  EXPECT_FALSE(std::filesystem::exists(journal));
  EXPECT_TRUE(CheckMoveAllowed(*target, journals_.File("third.journal")));
}

TEST_F(MoverTest, ResumeRefusesAnotherImage) {
  const std::string image = images_.File("disk.img");
  RandomImage(image, 5);
  const std::string journal = journals_.File("move.journal");
  {
    Result<Target> target = OpenForWriting(image);
    ASSERT_TRUE(target);
    MoverHooks stop_at_once;
    stop_at_once.stop_requested = [] { return true; };
    ASSERT_TRUE(StartMove(*target, {kMove, {}, journal}, stop_at_once));
  }
  const std::string copy = images_.File("copy.img");
  std::filesystem::copy_file(image, copy);
  const std::string before = test::ReadFile(copy);
  Result<Target> other = OpenForWriting(copy);
  ASSERT_TRUE(other);
  Result<MoveOutcome> resumed = ResumeMove(*other, journal, ResumeMode::kComplete);
  ASSERT_FALSE(resumed);
  EXPECT_NE(resumed.error().message.find("not backed by the file the journal recorded"),
            std::string::npos)
      << resumed.error().message;
  EXPECT_EQ(test::ReadFile(copy), before);
}

TEST_F(MoverTest, AnInvalidMoveWritesNothing) {
  const std::string image = images_.File("disk.img");
  const std::string original = RandomImage(image, 6);
  Result<Target> target = OpenForWriting(image);
  ASSERT_TRUE(target);
  MoveGeometry beyond = kMove;
  beyond.dest_bytes = kImageBytes - 4096;
  const std::string journal = journals_.File("move.journal");
  Result<MoveOutcome> outcome = StartMove(*target, {beyond, {}, journal});
  ASSERT_FALSE(outcome);
  EXPECT_NE(outcome.error().message.find("beyond the end"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(journal));
  EXPECT_EQ(test::ReadFile(image), original);
}

// Sets or clears the immutable flag of a directory (nothing can be added or removed in it, not
// even by root); clears it again when it goes out of scope.
class Immutable {
 public:
  explicit Immutable(std::string dir) : dir_(std::move(dir)) {}
  ~Immutable() { (void)Set(false); }
  bool Set(bool on) {
    const int fd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return false;
    int flags = 0;
    bool ok = ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
    flags = on ? flags | FS_IMMUTABLE_FL : flags & ~FS_IMMUTABLE_FL;
    ok = ok && ::ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0;
    ::close(fd);
    return ok;
  }

 private:
  std::string dir_;
};

// A finished move whose registration cannot be removed keeps its journal: a registration always
// names a journal that exists (the crash between the two removals leaves the same state when
// the journal goes first), and resume finishes it once the registry can be written again.
TEST_F(MoverTest, AJournalIsNeverRemovedBeforeItsRegistration) {
  PARTALIGN_REQUIRE_DEVICES();  // root: the immutable flag
  const std::string image = images_.File("disk.img");
  const std::string original = RandomImage(image, 7);
  const std::string journal = journals_.File("move.journal");
  Immutable registry(JournalRegistryDir());
  bool frozen = false;
  MoverHooks freeze_before_the_table;
  freeze_before_the_table.on_phase = [&](const char* phase) {
    if (std::string(phase) == "table") frozen = registry.Set(true);
  };
  {
    Result<Target> target = OpenForWriting(image);
    ASSERT_TRUE(target);
    Result<MoveOutcome> outcome = StartMove(*target, {kMove, {}, journal}, freeze_before_the_table);
    ASSERT_TRUE(outcome) << outcome.error().message;
    if (!frozen) GTEST_SKIP() << "the file system of the test directory has no immutable flag";
    ASSERT_EQ(outcome->status, MoveStatus::kCompleted) << outcome->message;
    ASSERT_EQ(outcome->notes.size(), 1u);
    EXPECT_NE(outcome->notes[0].find("'partalign resume " + journal + "'"), std::string::npos)
        << outcome->notes[0];
  }
  EXPECT_TRUE(std::filesystem::exists(journal));
  Result<bool> registered = IsJournalRegistered(journal);
  ASSERT_TRUE(registered);
  EXPECT_TRUE(*registered);

  ASSERT_TRUE(registry.Set(false));
  Result<Target> target = OpenForWriting(image);
  ASSERT_TRUE(target);
  Result<MoveOutcome> resumed = ResumeMove(*target, journal, ResumeMode::kComplete);
  ASSERT_TRUE(resumed) << resumed.error().message;
  EXPECT_EQ(resumed->status, MoveStatus::kCompleted) << resumed->message;
  EXPECT_TRUE(resumed->notes.empty());
  EXPECT_EQ(test::ReadFile(image).substr(kMove.dest_bytes, kMove.length_bytes),
            original.substr(kMove.source_bytes, kMove.length_bytes));
  EXPECT_FALSE(std::filesystem::exists(journal));
  Result<std::vector<RegisteredJournal>> left = ListRegisteredJournals();
  ASSERT_TRUE(left);
  EXPECT_TRUE(left->empty());
}

}  // namespace
}  // namespace partalign
