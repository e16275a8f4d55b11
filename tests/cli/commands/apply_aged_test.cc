// SPDX-License-Identifier: GPL-3.0-or-later
// An aged filesystem is realigned: ext4 at sector 63 whose files were written with others
// between them that were removed since, so that its used blocks lie in some 80 runs with free
// space between them. Moved up to 1 MiB, each run's destination lands a shift further, on free
// blocks of the same partition. The mover counted those bytes as written outside its source,
// kept them for a rollback, and refused the move once they passed the 64 MiB the journal keeps
// ("the move writes 518.03 MiB outside its source ... the move is refused", after the dry run
// had shown the plan without a word). Now only the bytes past the partition's end count
// (docs/mover.md §4): apply moves it, the used bytes are intact, e2fsck is clean.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>

#include <fmt/format.h>

#include "io/used/used_map_reader.h"
#include "partalign/move/move_plan.h"
#include "support/device_test.h"
#include "support/disk_invariant.h"
#include "support/mount_point.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::PartitionedLoop;
using test::RunCommand;
using test::RunOrThrow;

// p1: 2 GiB at sector 63; the disk ends 64 MiB after it.
constexpr uint64_t kStart = 63;
constexpr uint64_t kSectors = 4194304;
constexpr unsigned long long kDiskBytes = (kStart + kSectors) * 512 + (64ull << 20);
constexpr int kKept = 160;
constexpr uint64_t kKeptBytes = 2ull << 20;
constexpr uint64_t kRemovedBytes = 6ull << 20;

// The bytes the copied chunks' destinations cover that no copied chunk's source does: what the
// mover kept for a rollback before 2026-12-05, brute force over the chunks.
uint64_t OldOutsideBytes(const MoveGeometry& m) {
  std::vector<std::pair<uint64_t, uint64_t>> sources;  // [begin, end), sorted
  for (uint64_t c = 0; c < ChunkCount(m); ++c) {
    const ChunkExtent e = ChunkExtentOf(m, c);
    sources.emplace_back(m.source_bytes + e.position_bytes,
                         m.source_bytes + e.position_bytes + e.length_bytes);
  }
  uint64_t outside = 0;
  for (uint64_t c = 0; c < ChunkCount(m); ++c) {
    const ChunkExtent e = ChunkExtentOf(m, c);
    const uint64_t begin = m.dest_bytes + e.position_bytes;
    const uint64_t end = begin + e.length_bytes;
    uint64_t covered = 0;
    for (const auto& [b, f] : sources) {
      if (f > begin && b < end) covered += std::min(f, end) - std::max(b, begin);
    }
    outside += e.length_bytes - covered;
  }
  return outside;
}

TEST(ApplyAgedTest, AFilesystemWithManyFreeGapsIsMovedAndItsUsedBytesKept) {
  PARTALIGN_REQUIRE_DEVICES();
  const std::string script =
      fmt::format("label: gpt\nfirst-lba: 34\nstart={}, size={}\n", kStart, kSectors);
  PartitionedLoop disk(script, 512, kDiskBytes);
  std::filesystem::create_directories(disk.File("state"));
  std::filesystem::create_directories(disk.File("mnt"));
  const std::string node = disk.loop().PartitionPath(1);
  RunOrThrow({"mkfs.ext4", "-q", "-F", "-b", "4096", node});
  // Files of random bytes, each allocated whole and flushed before the next, with 8 MiB
  // allocated after each, removed at the end.
  std::mt19937_64 random(41);
  std::map<std::string, std::string> kept;
  {
    test::MountPoint mounted(node, disk.File("mnt"));
    for (int i = 0; i < kKept; ++i) {
      std::string content(kKeptBytes, '\0');
      for (size_t at = 0; at + 8 <= content.size(); at += 8) {
        const uint64_t r = random();
        std::memcpy(&content[at], &r, 8);
      }
      const std::string name = fmt::format("kept{}", i);
      // Allocated, then written: its blocks are where the allocation put them.
      const int fd = ::open(disk.File("mnt/" + name).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      ASSERT_GE(fd, 0) << name;
      ASSERT_EQ(::posix_fallocate(fd, 0, static_cast<off_t>(kKeptBytes)), 0);
      ASSERT_EQ(::pwrite(fd, content.data(), content.size(), 0),
                static_cast<ssize_t>(content.size()));
      ASSERT_EQ(::fsync(fd), 0);
      ::close(fd);
      kept[name] = std::move(content);
      const std::string gap = disk.File(fmt::format("mnt/gap{}", i));
      const int gap_fd = ::open(gap.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      ASSERT_GE(gap_fd, 0) << gap;
      ASSERT_EQ(::posix_fallocate(gap_fd, 0, static_cast<off_t>(kRemovedBytes)), 0);
      ::close(gap_fd);
    }
    for (int i = 0; i < kKept; ++i) std::filesystem::remove(disk.File(fmt::format("mnt/gap{}", i)));
    ASSERT_TRUE(mounted.Unmount());
  }
  const std::string before = disk.Snapshot("before.img");

  // The case this is: at either grain of a small shift, its runs would have kept more than the
  // journal keeps, by the old count; by the new one, at most the shift.
  const int fd = ::open(disk.device().c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  Result<UsedMap> used = ProbeUsedMap(fd, disk.device(), kStart * 512, kSectors * 512);
  ::close(fd);
  ASSERT_TRUE(used) << used.error().message;
  MoveGeometry move;
  move.source_bytes = kStart * 512;
  move.dest_bytes = 2048 * 512;
  move.length_bytes = kSectors * 512;
  for (uint64_t chunk : {kSmallMoveChunkBytes, kDefaultMoveChunkBytes}) {
    MoveGeometry at = move;
    at.chunk_bytes = chunk;
    Result<CopySet> copy = CopySet::FromRuns(ChunkRunsOf(*used, chunk), RangeChunkCount(at));
    ASSERT_TRUE(copy) << copy.error().message;
    at.copy = *copy;
    EXPECT_GT(at.copy.runs().size(), 66u) << "chunk " << chunk;
    EXPECT_GT(OldOutsideBytes(at), kMaxDestinationOutsideSourceBytes) << "chunk " << chunk;
    EXPECT_LE(TotalBytes(DestinationOutsideSource(at)), ShiftBytes(at)) << "chunk " << chunk;
  }

  const std::map<std::string, std::string> env{{"PARTALIGN_STATE_DIR", disk.File("state")}};
  const std::string plan = disk.File("plan.json");
  const CommandResult planned = test::RunPartalign({"plan", "-o", plan, disk.device()}, "", env);
  ASSERT_EQ(planned.exit_code, 0) << planned.out << planned.err;
  const CommandResult applied = test::RunPartalign(test::ApplyArgs(disk, plan), "", env);
  ASSERT_EQ(applied.exit_code, 0) << applied.out << applied.err;
  EXPECT_EQ(test::KernelStartSize(disk.loop(), 1).first, 2048u);
  for (const std::string& v :
       test::DiskInvariantViolations(before, disk.device(), test::DiskInvariantOptions{})) {
    ADD_FAILURE() << v;
  }
  const CommandResult e2fsck = RunCommand({"e2fsck", "-fn", node});
  EXPECT_EQ(e2fsck.exit_code, 0) << e2fsck.out << e2fsck.err;
  test::MountPoint mounted(node, disk.File("mnt"), "ro");
  for (const auto& [name, content] : kept) {
    EXPECT_TRUE(test::ReadFile(disk.File("mnt/" + name)) == content) << name;
  }
}

}  // namespace
}  // namespace partalign
