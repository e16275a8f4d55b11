// SPDX-License-Identifier: GPL-3.0-or-later
// partalign move / resume on loop devices (root): an ext4 file system with known files in a
// partition at sector 63 of a GPT disk is moved to sector 2048 together with the GPT change that
// sfdisk computed on a scratch copy. The move is killed at seeded points (SIGKILL through the
// test-only PARTALIGN_TEST_KILL_AFTER switch, inside the table write too), then resumed or
// rolled back; every byte of the partition must be intact at its new (or old) place, the table
// must say so, e2fsck -fn must pass and the files must read back. Plus the refusals.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <regex>

#include <fmt/format.h>

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
using test::LoopDevice;
using test::RunCommand;
using test::RunPartalign;

constexpr uint64_t kSector = 512;
constexpr uint64_t kImageBytes = 96ull << 20;
constexpr uint64_t kOldStart = 63;    // the fdisk default of old (alignment-heuristics.md §3)
constexpr uint64_t kNewStart = 2048;  // 1 MiB
constexpr uint64_t kPartSectors = (64ull << 20) / kSector;
constexpr uint64_t kPartBytes = kPartSectors * kSector;
// A GPT with 128 entries: protective MBR, header and entries in LBA 0..33; the backup entries
// and header in the last 33 sectors (UEFI spec 2.10 §5.3).
constexpr uint64_t kPrimaryTableBytes = 34 * kSector;
constexpr uint64_t kBackupTableBytes = 33 * kSector;
// The switch's count when it is set so high that it never fires: the run reports how many
// writes and flushes it passed.
constexpr const char* kCountOnly = "1000000000";

std::string ReadRange(const std::string& path, uint64_t offset, uint64_t length) {
  // O_DIRECT: the mover writes around the page cache, so the test reads around it too.
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) return "cannot open " + path;
  void* buffer = nullptr;
  if (::posix_memalign(&buffer, 4096, length) != 0) {
    ::close(fd);
    return "no memory";
  }
  ssize_t n = ::pread(fd, buffer, length, static_cast<off_t>(offset));
  std::string bytes(static_cast<const char*>(buffer), n > 0 ? static_cast<size_t>(n) : 0);
  std::free(buffer);
  ::close(fd);
  return bytes;
}

// `size` bytes of a seeded generator: a disk image's contents, incompressible.
std::string RandomBytes(size_t size, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  return bytes;
}

uint64_t KillPointsPassed(const CommandResult& r) {
  std::smatch m;
  static const std::regex kLine("test: ([0-9]+) kill points passed");
  return std::regex_search(r.err, m, kLine) ? std::stoull(m[1]) : 0;
}

// The disk every case starts from, built once per test: a GPT with one partition at sector 63
// holding ext4 and known files; and a scratch copy with the table moved to sector 2048.
class MoveFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    PARTALIGN_REQUIRE_DEVICES();
    pristine_ = work_.File("pristine.img");
    scratch_ = work_.File("new-table.img");
    test::CreateSparseFile(pristine_, kImageBytes);
    ASSERT_EQ(RunCommand({"sfdisk", "--quiet", pristine_},
                         fmt::format("label: gpt\nfirst-lba: 34\nstart={}, size={}\n", kOldStart,
                                     kPartSectors))
                  .exit_code,
              0);
    std::mt19937_64 rng(20240917);
    {
      LoopDevice loop(pristine_, kSector, /*direct_io=*/true);
      ASSERT_EQ(RunCommand({"partx", "-a", loop.path()}).exit_code, 0);
      CommandResult mkfs = RunCommand({"mkfs.ext4", "-q", "-F", loop.PartitionPath(1)});
      ASSERT_EQ(mkfs.exit_code, 0) << mkfs.err;
      test::MountPoint mounted(loop.PartitionPath(1), mount_dir_.path());
      std::filesystem::create_directories(mount_dir_.path() + "/docs/deep");
      for (int i = 0; i < 12; ++i) {
        const std::string name = (i % 3 == 0 ? "docs/deep/file" : "file") + std::to_string(i);
        std::string content(1024 + rng() % (3 << 20), '\0');
        for (char& c : content) c = static_cast<char>(rng());
        std::ofstream(mount_dir_.path() + "/" + name, std::ios::binary) << content;
        files_[name] = std::move(content);
      }
      ASSERT_TRUE(mounted.Unmount());
      partition_ = ReadRange(loop.path(), kOldStart * kSector, kPartBytes);
      ASSERT_EQ(partition_.size(), kPartBytes);
    }
    ASSERT_EQ(RunCommand({"cp", "--sparse=always", pristine_, scratch_}).exit_code, 0);
    CommandResult edit = RunCommand({"sfdisk", "--quiet", "-N", "1", scratch_},
                                    fmt::format("{},{}\n", kNewStart, kPartSectors));
    ASSERT_EQ(edit.exit_code, 0) << edit.err;
  }

  std::map<std::string, std::string> Env(const std::string& kill_after = "") const {
    std::map<std::string, std::string> env{{"PARTALIGN_STATE_DIR", state_.path()}};
    if (!kill_after.empty()) env["PARTALIGN_TEST_KILL_AFTER"] = kill_after;
    return env;
  }

  std::vector<std::string> MoveArgs(const std::string& device, const std::string& journal,
                                    const std::string& way = "auto") const {
    return {
        "move",          device,
        "--from",        std::to_string(kOldStart * kSector),
        "--to",          std::to_string(kNewStart * kSector),
        "--length",      std::to_string(kPartBytes),
        "--journal",     journal,
        "--table-range", fmt::format("0:{}", kPrimaryTableBytes),
        "--table-range", fmt::format("{}:{}", kImageBytes - kBackupTableBytes, kBackupTableBytes),
        "--new-table",   scratch_,
        "--way",         way,
        "--yes"};
  }

  // A fresh copy of the pristine disk on a loop device.
  std::unique_ptr<LoopDevice> FreshDisk(const std::string& name) {
    const std::string image = disks_.File(name);
    EXPECT_EQ(RunCommand({"cp", "--sparse=always", pristine_, image}).exit_code, 0);
    return std::make_unique<LoopDevice>(image, kSector, /*direct_io=*/true);
  }

  // Every byte of the partition at `start`, the table pointing there, a clean file system with
  // the files that were written; no journal left.
  void ExpectIntactAt(const LoopDevice& loop, uint64_t start, const std::string& journal) {
    EXPECT_TRUE(ReadRange(loop.path(), start * kSector, kPartBytes) == partition_)
        << "the partition's bytes differ at sector " << start;
    CommandResult dump = RunCommand({"sfdisk", "--dump", loop.path()});
    EXPECT_NE(dump.out.find(fmt::format("start={:>12}", start)), std::string::npos) << dump.out;
    EXPECT_FALSE(std::filesystem::exists(journal));
    // The disk invariant against the pristine image: the partition's bytes at its place,
    // nothing else changed (the move copies every byte: no used map).
    test::DiskInvariantOptions invariant;
    invariant.used_maps = false;
    for (const std::string& v : test::DiskInvariantViolations(pristine_, loop.path(), invariant)) {
      ADD_FAILURE() << v;
    }
    // resume tells the kernel the table it left; `move` leaves that to its caller.
    const uint64_t known = test::KernelStartSize(loop, 1).first;
    if (known != 0) {
      EXPECT_EQ(known, start) << "the kernel has partition 1 elsewhere";
    } else {
      ASSERT_EQ(RunCommand({"partx", "-a", loop.path()}).exit_code, 0);
    }
    CommandResult fsck = RunCommand({"e2fsck", "-fn", loop.PartitionPath(1)});
    EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
    test::MountPoint mounted(loop.PartitionPath(1), mount_dir_.path(), "ro");
    for (const auto& [name, content] : files_) {
      EXPECT_TRUE(test::ReadFile(mount_dir_.path() + "/" + name) == content) << name;
    }
  }

  test::TempDir work_;      // pristine image and the scratch table
  test::TempDir disks_;     // per-case copies
  test::TempDir journals_;  // on another directory than the images (same file system: allowed)
  test::TempDir state_;     // the journal registry
  test::TempDir mount_dir_;
  std::string pristine_;
  std::string scratch_;
  std::string partition_;
  std::map<std::string, std::string> files_;
};

// The kill campaigns, for each way a small shift stays safe (docs/mover.md §5a). Forced: left to
// `auto`, the way follows the flush latency measured at the start, and a busy machine turns a
// run's 104 kill points (saved copies) into 2183 (ordered by flushes).
class MoveKillTest : public MoveFixture, public ::testing::WithParamInterface<std::string> {};

TEST_P(MoveKillTest, KilledAtSeededPointsThenResumedEveryByteIsIntact) {
  const std::string way = GetParam();
  // An uninterrupted run, counting the kill points it passes.
  uint64_t total = 0;
  {
    std::unique_ptr<LoopDevice> loop = FreshDisk("full.img");
    const std::string journal = journals_.File("full.journal");
    CommandResult r = RunPartalign(MoveArgs(loop->path(), journal, way), "", Env(kCountOnly));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("wrote the new partition table (2 byte ranges)"), std::string::npos)
        << r.out;
    EXPECT_NE((r.out + r.err).find(way == "copies" ? "way: saved copies" : "way: flush-ordered"),
              std::string::npos)
        << r.out << r.err;
    total = KillPointsPassed(r);
    ASSERT_GT(total, 20u) << r.err;
    ExpectIntactAt(*loop, kNewStart, journal);
  }
  // Seeded kill points over the whole run, two inside the table write (the state write and its
  // flush count 2, then each table range is a write and a flush: 3 tears the first range, 5 the
  // second), and one during the resume itself.
  // How many points a run passes depends on the machine's timing too: the journal and commit
  // stages cover every batch that is ready when they start, so a run passes fewer points when a
  // stage lags and more when it keeps up. A seeded point is therefore a fraction of
  // the points a run passes; a run that ends before its point (exit 0) is checked intact at the
  // new place, and the case is run again with the point scaled to the points that run passed.
  struct KillCase {
    std::string phase_point;  // a fixed point in one phase ("table:3"), or empty
    double fraction = 0;      // else: the point as a fraction (below 0.9) of the points a run
                              // passes
    bool kill_resume_too = false;
  };
  std::mt19937_64 rng(7);
  std::vector<KillCase> cases;
  for (int i = 0; i < 3; ++i) cases.push_back({"", static_cast<double>(rng() % 900) / 1000});
  cases.push_back({"table:3"});
  cases.push_back({"table:5"});
  cases.push_back({"", 0.5, /*kill_resume_too=*/true});
  for (size_t i = 0; i < cases.size(); ++i) {
    const KillCase& c = cases[i];
    const std::string journal = journals_.File(fmt::format("case{}.journal", i));
    std::unique_ptr<LoopDevice> loop;
    CommandResult moved;
    uint64_t points = total;  // what the last complete run passed
    for (int attempt = 0;; ++attempt) {
      const std::string kill =
          c.phase_point.empty()
              ? std::to_string(1 +
                               static_cast<uint64_t>(c.fraction * static_cast<double>(points - 1)))
              : c.phase_point;
      SCOPED_TRACE(fmt::format("PARTALIGN_TEST_KILL_AFTER={} (try {})", kill, attempt + 1));
      loop.reset();  // the loop device of a try that ended before its point
      loop = FreshDisk(fmt::format("case{}-{}.img", i, attempt));
      moved = RunPartalign(MoveArgs(loop->path(), journal, way), "", Env(kill));
      if (moved.exit_code != 0 || !c.phase_point.empty() || attempt == 2) break;
      // Ended before the point: every point it passed is below it; it moved the partition.
      points = KillPointsPassed(moved);
      ASSERT_LT(points, std::stoull(kill)) << moved.err;
      ASSERT_GT(points, 20u) << moved.err;
      ExpectIntactAt(*loop, kNewStart, journal);
    }
    SCOPED_TRACE(fmt::format("case {}", i));
    ASSERT_EQ(moved.exit_code, 128 + SIGKILL) << moved.out << moved.err;
    if (c.kill_resume_too) {
      CommandResult killed = RunPartalign({"resume", journal, "--yes"}, "", Env("3"));
      ASSERT_EQ(killed.exit_code, 128 + SIGKILL) << killed.err;
    }
    CommandResult resumed = RunPartalign({"resume", journal, "--yes"}, "", Env());
    if (resumed.err.find("is not a registered journal") != std::string::npos) {
      // Killed while creating the journal: the device was never written.
      EXPECT_EQ(resumed.exit_code, 1);
      std::filesystem::remove(journal);
      ExpectIntactAt(*loop, kOldStart, journal);
      continue;
    }
    if (resumed.out.find("was interrupted while starting and never wrote") != std::string::npos) {
      // Killed after the registration, before the header was durable (docs/mover.md I8):
      // resume removed the journal; the device was never written.
      EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
      ExpectIntactAt(*loop, kOldStart, journal);
      continue;
    }
    ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
    ExpectIntactAt(*loop, kNewStart, journal);
  }
}

TEST_P(MoveKillTest, KilledThenRolledBackTheOldLayoutIsIntact) {
  const std::string way = GetParam();
  for (const std::string kill : {"move:40", "table:4"}) {
    SCOPED_TRACE("PARTALIGN_TEST_KILL_AFTER=" + kill);
    std::unique_ptr<LoopDevice> loop = FreshDisk("rollback.img");
    const std::string journal = journals_.File("rollback.journal");
    CommandResult moved = RunPartalign(MoveArgs(loop->path(), journal, way), "", Env(kill));
    ASSERT_EQ(moved.exit_code, 128 + SIGKILL) << moved.err;
    // While the move is unfinished, a new one is refused and told what to run.
    CommandResult again =
        RunPartalign(MoveArgs(loop->path(), journals_.File("other.journal")), "", Env());
    EXPECT_EQ(again.exit_code, 4);  // the one status of an unfinished move
    EXPECT_NE(again.err.find("partalign resume " + journal), std::string::npos) << again.err;
    CommandResult back = RunPartalign({"resume", "--rollback", journal, "--yes"}, "", Env());
    ASSERT_EQ(back.exit_code, 0) << back.out << back.err;
    EXPECT_NE(back.out.find("rolled back"), std::string::npos) << back.out;
    ExpectIntactAt(*loop, kOldStart, journal);
  }
}

INSTANTIATE_TEST_SUITE_P(Ways, MoveKillTest, ::testing::Values("copies", "ordered"));

// The refusals: nothing is written in any of them.
class MoveRefusalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PARTALIGN_REQUIRE_DEVICES();
    image_ = dir_.File("disk.img");
    test::CreateSparseFile(image_, kImageBytes);
    ASSERT_EQ(RunCommand({"sfdisk", "--quiet", image_},
                         fmt::format("label: dos\nstart={}, size={}\n", kOldStart, kPartSectors))
                  .exit_code,
              0);
    loop_ = std::make_unique<LoopDevice>(image_, kSector, /*direct_io=*/true);
    ASSERT_EQ(RunCommand({"partx", "-a", loop_->path()}).exit_code, 0);
    ASSERT_EQ(RunCommand({"mkfs.ext4", "-q", "-F", loop_->PartitionPath(1)}).exit_code, 0);
    before_ = test::ReadFile(image_);
  }

  CommandResult Move(const std::string& target, const std::string& journal, bool yes = true) {
    std::vector<std::string> args{
        "move",      target, "--from",   std::to_string(kOldStart * kSector),
        "--to",      "1MiB", "--length", std::to_string(kPartBytes),
        "--journal", journal};
    if (yes) args.push_back("--yes");
    return RunPartalign(args, "", {{"PARTALIGN_STATE_DIR", state_.path()}});
  }

  // `unchanged`: compare the whole image with before (not while a file system on it is
  // mounted: the mount itself writes to it).
  void ExpectRefused(const CommandResult& r, const std::string& reason, bool unchanged = true) {
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find(reason), std::string::npos) << r.err;
    if (unchanged) {
      EXPECT_TRUE(test::ReadFile(image_) == before_) << "the disk changed";
    }
    std::error_code ec;
    EXPECT_TRUE(std::filesystem::is_empty(journals_.path(), ec)) << "a journal was created";
  }

  test::TempDir dir_;
  test::TempDir journals_;
  test::TempDir state_;
  test::TempDir mount_dir_;
  std::string image_;
  std::string before_;
  std::unique_ptr<LoopDevice> loop_;
};

TEST_F(MoveRefusalTest, WithoutYes) {
  ExpectRefused(Move(loop_->path(), journals_.File("j"), /*yes=*/false), "without --yes");
}

TEST_F(MoveRefusalTest, WhileAPartitionIsMounted) {
  test::MountPoint mounted(loop_->PartitionPath(1), mount_dir_.path());
  ExpectRefused(
      Move(loop_->path(), journals_.File("j")),
      fmt::format("('{}') is mounted on '{}'", loop_->PartitionPath(1), mount_dir_.path()),
      /*unchanged=*/false);
}

TEST_F(MoveRefusalTest, JournalOnAPartitionOfTheTarget) {
  test::MountPoint mounted(loop_->PartitionPath(1), mount_dir_.path());
  ExpectRefused(Move(loop_->path(), mount_dir_.path() + "/move.journal"),
                fmt::format("is stored on '{}'", loop_->PartitionPath(1)), /*unchanged=*/false);
  EXPECT_FALSE(std::filesystem::exists(mount_dir_.path() + "/move.journal"));
}

TEST_F(MoveRefusalTest, JournalInsideTheImageBeingMoved) {
  // The target is the image file; the journal would live in the file system stored in it.
  test::MountPoint mounted(loop_->PartitionPath(1), mount_dir_.path());
  CommandResult r = Move(image_, mount_dir_.path() + "/move.journal");
  ASSERT_TRUE(mounted.Unmount());
  before_ = test::ReadFile(image_);  // the mount itself touched the file system
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find(image_), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the disk being changed"), std::string::npos) << r.err;
}

TEST_F(MoveRefusalTest, JournalOnTmpfs) {
  if (!std::filesystem::is_directory("/dev/shm")) GTEST_SKIP() << "no /dev/shm here";
  ExpectRefused(Move(loop_->path(), "/dev/shm/partalign-test.journal"), "power failure");
}

TEST_F(MoveRefusalTest, ResumeOnAnotherDevice) {
  const std::string journal = journals_.File("j");
  CommandResult killed = RunPartalign(
      {"move", loop_->path(), "--from", std::to_string(kOldStart * kSector), "--to", "1MiB",
       "--length", std::to_string(kPartBytes), "--journal", journal, "--yes"},
      "", {{"PARTALIGN_STATE_DIR", state_.path()}, {"PARTALIGN_TEST_KILL_AFTER", "move:5"}});
  ASSERT_EQ(killed.exit_code, 128 + SIGKILL) << killed.err;
  const std::string other_image = dir_.File("other.img");
  test::CreateSparseFile(other_image, kImageBytes);
  LoopDevice other(other_image, kSector);
  CommandResult r = RunPartalign({"resume", journal, "--device", other.path(), "--yes"}, "",
                                 {{"PARTALIGN_STATE_DIR", state_.path()}});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("not backed by the file the journal recorded"), std::string::npos) << r.err;
  CommandResult done =
      RunPartalign({"resume", journal, "--yes"}, "", {{"PARTALIGN_STATE_DIR", state_.path()}});
  EXPECT_EQ(done.exit_code, 0) << done.err;
}

// On an image file the whole command works without root.
TEST(MoveImageTest, MovesWithProgressAndRefusesWithoutYes) {
  test::TempDir dir;
  test::TempDir journals;
  test::TempDir state;
  const std::string image = dir.File("disk.img");
  const std::string bytes = RandomBytes(16 << 20, 11);
  std::ofstream(image, std::ios::binary) << bytes;
  const std::map<std::string, std::string> env{{"PARTALIGN_STATE_DIR", state.path()}};
  const std::vector<std::string> args{
      "move", image,      "--from", "32256",     "--to",
      "1MiB", "--length", "12MiB",  "--journal", journals.File("j")};

  CommandResult refused = RunPartalign(args, "", env);
  EXPECT_EQ(refused.exit_code, 3);
  EXPECT_NE(refused.err.find("refusing to write without --yes"), std::string::npos) << refused.err;
  EXPECT_TRUE(test::ReadFile(image) == bytes);
  // Nothing measured (the probe writes beside the journal) before the move is confirmed.
  EXPECT_EQ(refused.err.find("way:"), std::string::npos) << refused.err;
  EXPECT_TRUE(std::filesystem::is_empty(journals.path()));

  std::vector<std::string> with_yes = args;
  with_yes.insert(with_yes.end(), {"--yes", "--progress"});
  CommandResult moved = RunPartalign(with_yes, "", env);
  ASSERT_EQ(moved.exit_code, 0) << moved.err;
  EXPECT_NE(moved.out.find("moved 12582912 bytes (12 MiB)"), std::string::npos) << moved.out;
  EXPECT_NE(moved.out.find("; verified (xxh3-128"), std::string::npos) << moved.out;
  // Where the time went, stage by stage: each chunk read once from the source, written once and
  // read back once; the commits flush the device and write a state.
  const std::regex stages(
      "stages \\(each on its own thread, times overlap, within the copy and read-back's "
      "[0-9]+\\.[0-9]{3} s\\): read [0-9.]+ s 12 MiB; journal "
      "[0-9.]+ s [0-9.]+ [KM]iB \\([0-9]+ flush(es)? [0-9.]+ s\\); write [0-9.]+ s 12 MiB; "
      "commit [0-9.]+ s \\([0-9]*[02468] flushes [0-9.]+ s\\); read-back [0-9.]+ s 12 MiB\n");
  EXPECT_TRUE(std::regex_search(moved.out, stages)) << moved.out;
  // One line per phase and second on a pipe, the last at 100% (no pre-scan: the copy reads
  // each chunk once).
  EXPECT_EQ(moved.err.find("partalign: scanning"), std::string::npos) << moved.err;
  EXPECT_NE(moved.err.find("partalign: moving     12 MiB of 12 MiB  100%"), std::string::npos)
      << moved.err;
  EXPECT_TRUE(test::ReadFile(image).substr(1 << 20, 12 << 20) == bytes.substr(32256, 12 << 20));
}

// A move beyond its source writes every copied byte outside it, which a rollback must put
// back from the journal: more than the journal keeps is refused before the question (exit 3),
// with or without --yes, and nothing is written or measured.
TEST(MoveImageTest, MoreOutsideItsSourceThanTheJournalKeepsIsRefusedBeforeItAsks) {
  test::TempDir dir;
  test::TempDir journals;
  test::TempDir state;
  const std::string image = dir.File("disk.img");
  const std::string bytes = RandomBytes(140 << 20, 12);
  std::ofstream(image, std::ios::binary) << bytes;
  const std::map<std::string, std::string> env{{"PARTALIGN_STATE_DIR", state.path()}};
  // 65 MiB from 1 MiB to 70 MiB: no overlap.
  const std::vector<std::string> args{
      "move",  image,      "--from", "1MiB",      "--to",
      "70MiB", "--length", "65MiB",  "--journal", journals.File("j")};
  for (bool yes : {false, true}) {
    std::vector<std::string> run = args;
    if (yes) run.push_back("--yes");
    const CommandResult refused = RunPartalign(run, "", env);
    EXPECT_EQ(refused.exit_code, 3) << refused.err;
    EXPECT_NE(refused.err.find("the move writes 65 MiB outside its source (byte 73400320 to "
                               "141557760), which a rollback must put back; the journal keeps "
                               "at most 64 MiB of them: the move is refused; nothing was written"),
              std::string::npos)
        << refused.err;
    EXPECT_EQ(refused.err.find("refusing to write without --yes"), std::string::npos)
        << refused.err;
    EXPECT_EQ(refused.err.find("way:"), std::string::npos) << refused.err;
    EXPECT_TRUE(std::filesystem::is_empty(journals.path()));
    EXPECT_TRUE(test::ReadFile(image) == bytes);
  }
  // 64 MiB beyond the source: within what the journal keeps, moved.
  std::vector<std::string> within = {"move",  image,      "--from", "1MiB",      "--to",
                                     "70MiB", "--length", "64MiB",  "--journal", journals.File("j"),
                                     "--yes"};
  const CommandResult moved = RunPartalign(within, "", env);
  ASSERT_EQ(moved.exit_code, 0) << moved.err;
  EXPECT_TRUE(test::ReadFile(image).substr(70 << 20, 64 << 20) == bytes.substr(1 << 20, 64 << 20));
}

// The two safe ways of a small shift (docs/mover.md §5a) move the same bytes: asked for with
// --way, or chosen by the measurement, which leaves no probe file behind and says both
// estimates.
TEST(MoveImageTest, EachWayMovesTheSameBytesAndSaysWhichItTook) {
  const std::string bytes = RandomBytes(16 << 20, 12);
  for (const std::string way : {"ordered", "copies", "auto"}) {
    SCOPED_TRACE(way);
    test::TempDir dir;
    test::TempDir journals;
    test::TempDir state;
    const std::string image = dir.File("disk.img");
    std::ofstream(image, std::ios::binary) << bytes;
    CommandResult moved =
        RunPartalign({"move", image, "--from", "32256", "--to", "1MiB", "--length", "12MiB",
                      "--journal", journals.File("j"), "--way", way, "--yes"},
                     "", {{"PARTALIGN_STATE_DIR", state.path()}});
    ASSERT_EQ(moved.exit_code, 0) << moved.err;
    if (way == "ordered") {
      EXPECT_NE(moved.err.find("partalign: way: flush-ordered, no saved copies (asked for with "
                               "--way; chunks of 128 KiB, 7 in flight; instead of about 12 MiB "
                               "of saved copies)\n"),
                std::string::npos)
          << moved.err;
      EXPECT_NE(moved.out.find("; 0 B of saved copies written to the journal"), std::string::npos)
          << moved.out;
    } else if (way == "copies") {
      EXPECT_NE(moved.err.find("partalign: way: saved copies (asked for with --way; about 12 MiB "
                               "of saved copies; instead of flush-ordered: chunks of 128 KiB, 7 "
                               "in flight)\n"),
                std::string::npos)
          << moved.err;
      EXPECT_NE(moved.out.find("; 12 MiB of saved copies written to the journal"),
                std::string::npos)
          << moved.out;
    } else {
      const std::regex measured(
          "partalign: way: (saved copies|flush-ordered, no saved copies) \\(.*[0-9.]+ s "
          "writing at [0-9.]+ [KMG]iB/s.*; .*[0-9.]+ s writing at [0-9.]+ [KMG]iB/s.*\\)\n");
      EXPECT_TRUE(std::regex_search(moved.err, measured)) << moved.err;
      EXPECT_FALSE(std::filesystem::exists(journals.File("j.probe")));
    }
    const std::string after = test::ReadFile(image);
    ASSERT_EQ(after.size(), bytes.size());
    EXPECT_TRUE(after.substr(1 << 20, 12 << 20) == bytes.substr(32256, 12 << 20));
    // What the move must not have written: before the source, after the destination.
    EXPECT_TRUE(after.substr(0, 32256) == bytes.substr(0, 32256));
    EXPECT_TRUE(after.substr(13 << 20) == bytes.substr(13 << 20));
  }
}

TEST(MoveImageTest, ResumeExplainsAFileThatIsNoJournal) {
  test::TempDir dir;
  test::TempDir state;
  const std::string not_a_journal = dir.File("notes.txt");
  std::ofstream(not_a_journal) << "hello";
  CommandResult r =
      RunPartalign({"resume", not_a_journal, "--yes"}, "", {{"PARTALIGN_STATE_DIR", state.path()}});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("too short to be a move journal"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("is not a registered journal"), std::string::npos) << r.err;
  EXPECT_EQ(test::ReadFile(not_a_journal), "hello") << "never removed";
}

// Issue #37, item 7: `move` says what lives at the destination, and refuses a destination over
// the partition table or over another partition (whose bytes the move would destroy) unless
// --force. On an image file: no root needed.
TEST(MoveDestinationTest, RefusesATableAreaOrAnotherPartitionUnlessForced) {
  test::TempDir dir;
  test::TempDir journals;
  test::TempDir state;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, 32ull << 20);
  // Partition 1 at 1 MiB and partition 2 at 9 MiB, 4 MiB each, full of random bytes.
  test::SfdiskImage(image, "label: dos\nstart=2048, size=8192\nstart=18432, size=8192\n", 512);
  std::mt19937_64 rng(37);
  {
    std::fstream file(image, std::ios::in | std::ios::out | std::ios::binary);
    for (uint64_t at : {1ull << 20, 9ull << 20}) {
      std::string bytes(4 << 20, '\0');
      for (char& c : bytes) c = static_cast<char>(rng());
      file.seekp(static_cast<std::streamoff>(at));
      file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
  }
  const std::string before = test::ReadFile(image);
  const std::map<std::string, std::string> env{{"PARTALIGN_STATE_DIR", state.path()}};
  auto move = [&](const std::string& to, std::vector<std::string> extra = {}) {
    std::vector<std::string> args{
        "move", image,      "--from", "1MiB",      "--to",
        to,     "--length", "4MiB",   "--journal", journals.File("j.partalign-journal"),
        "--yes"};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunPartalign(args, "", env);
  };
  for (const auto& [to, what] : {std::pair<std::string, std::string>{"0", "the MBR (bytes 0-511)"},
                                 {"9MiB", "partition 2 (bytes 9437184-13631487"},
                                 {"11MiB", "partition 2 (bytes 9437184-13631487"}}) {
    SCOPED_TRACE("--to " + to);
    const CommandResult r = move(to);
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_NE(r.err.find("overlaps " + what), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
    EXPECT_TRUE(test::ReadFile(image) == before) << "the disk changed";
    EXPECT_FALSE(std::filesystem::exists(journals.File("j.partalign-journal")));
  }
  // Free space: said, and moved.
  const CommandResult free = move("20MiB");
  ASSERT_EQ(free.exit_code, 0) << free.out << free.err;
  EXPECT_NE(free.err.find("the destination (bytes 20971520-25165823): free space"),
            std::string::npos)
      << free.err;
  std::string expected = before;
  expected.replace(20 << 20, 4 << 20, before.substr(1 << 20, 4 << 20));
  EXPECT_TRUE(test::ReadFile(image) == expected) << "only the destination changes";
  // --force: partition 2 is overwritten, as asked, and said.
  const CommandResult forced = move("9MiB", {"--force"});
  ASSERT_EQ(forced.exit_code, 0) << forced.out << forced.err;
  EXPECT_NE(forced.err.find("overlaps partition 2"), std::string::npos) << forced.err;
  EXPECT_NE(forced.err.find("(--force)"), std::string::npos) << forced.err;
  expected.replace(9 << 20, 4 << 20, before.substr(1 << 20, 4 << 20));
  EXPECT_TRUE(test::ReadFile(image) == expected) << "only the destination changes";
}

}  // namespace
}  // namespace partalign
