// SPDX-License-Identifier: GPL-3.0-or-later
// The core's on-disk parsers (vfat, XFS, btrfs, swap) against damaged metadata: each parser
// first reads a real filesystem made by its mkfs, recording which bytes it reads; then, seeded,
// bytes inside what it read are changed (one to eight at a time, random values, and the
// boundary values that break counts and offsets), and the parser runs again. It must return,
// with a map inside the partition whose ranges are sorted and disjoint and that contains the
// first 64 KiB, and read nothing outside the partition. (A fuzz harness in the style of the
// project's readers can replace the loop once one exists; these are the same inputs.)
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <functional>
#include <random>

#include <fmt/format.h>

#include "io/util/unique_fd.h"
#include "partalign/used/btrfs_used_map.h"
#include "partalign/used/fat_used_map.h"
#include "partalign/used/swap_used_map.h"
#include "partalign/used/xfs_used_map.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::RunOrThrow;
using test::TempDir;

// An image file as a ByteSource, with some bytes replaced, recording what is read.
class MutatedFile : public ByteSource {
 public:
  MutatedFile(const std::string& path, uint64_t size)
      : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)), size_(size) {}
  uint64_t size_bytes() const override { return size_; }
  Result<std::vector<uint8_t>> Read(uint64_t offset, uint64_t length) const override {
    if (offset > size_ || length > size_ - offset) {
      ++out_of_range_;
      return MakeError("out of range");
    }
    std::vector<uint8_t> bytes(length);
    if (::pread(fd_.get(), bytes.data(), length, static_cast<off_t>(offset)) !=
        static_cast<ssize_t>(length)) {
      return MakeError("short read");
    }
    for (const auto& [at, value] : changes_) {
      if (at >= offset && at < offset + length) bytes[at - offset] = value;
    }
    if (recording_) read_.emplace_back(offset, length);
    return bytes;
  }

  std::vector<std::pair<uint64_t, uint8_t>> changes_;
  mutable std::vector<std::pair<uint64_t, uint64_t>> read_;
  mutable int out_of_range_ = 0;
  bool recording_ = true;

 private:
  UniqueFd fd_;
  uint64_t size_;
};

void ExpectSane(const UsedMap& map, uint64_t length, const std::string& trace) {
  uint64_t end = 0;
  bool first = true;
  for (const UsedRange& r : map.ranges()) {
    ASSERT_GT(r.length_bytes, 0u) << trace;
    ASSERT_TRUE(first || r.offset_bytes > end) << trace << ": ranges overlap or touch";
    ASSERT_LE(r.offset_bytes + r.length_bytes, length) << trace;
    end = r.offset_bytes + r.length_bytes;
    first = false;
  }
  ASSERT_FALSE(map.ranges().empty()) << trace;
  EXPECT_EQ(map.ranges().front().offset_bytes, 0u) << trace;
  EXPECT_GE(map.ranges().front().length_bytes, std::min(kUsedHeadBytes, length)) << trace;
}

// Runs `parse` on `image` once to learn what it reads, then `trials` times with bytes changed
// inside what it read.
// `checked`: the format has checksums or cross-checks that most damage trips (not swap, whose
// header is one signature in 64 KiB).
void Mutate(const std::string& image, uint64_t size, int trials, uint64_t seed,
            const std::function<Result<UsedMap>(const ByteSource&)>& parse, bool checked = true) {
  MutatedFile file(image, size);
  Result<UsedMap> clean = parse(file);
  ASSERT_TRUE(clean) << clean.error().message;
  ASSERT_TRUE(clean->notes().empty()) << image << ": " << clean->notes().front();
  ASSERT_FALSE(file.read_.empty());
  const auto read = file.read_;
  file.recording_ = false;
  std::mt19937_64 rng(seed);
  const uint8_t boundary[] = {0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff};
  int whole = 0;
  for (int trial = 0; trial < trials; ++trial) {
    file.changes_.clear();
    const int count = 1 + static_cast<int>(rng() % 8);
    for (int i = 0; i < count; ++i) {
      const auto& [offset, length] = read[rng() % read.size()];
      // Most reads are metadata blocks; their first bytes hold the fields that matter most.
      const uint64_t within =
          rng() % 2 == 0 ? rng() % std::min<uint64_t>(length, 512) : rng() % length;
      const uint8_t value =
          rng() % 2 == 0 ? boundary[rng() % sizeof(boundary)] : static_cast<uint8_t>(rng());
      file.changes_.emplace_back(offset + within, value);
    }
    Result<UsedMap> map = parse(file);
    const std::string trace = fmt::format("{} seed {} trial {}", image, seed, trial);
    if (!map) continue;  // swap: a hibernation signature made up by chance
    ExpectSane(*map, size, trace);
    if (::testing::Test::HasFatalFailure()) return;
    whole += map->IsWhole() ? 1 : 0;
  }
  EXPECT_EQ(file.out_of_range_, 0) << image << ": a parser asked for bytes outside the partition";
  // The checks catch damage: some trials end in a whole copy.
  if (checked) {
    EXPECT_GT(whole, 0) << image;
  }
}

constexpr int kTrials = 400;

TEST(UsedMapMutationTest, Vfat) {
  for (const char* bits : {"12", "16", "32"}) {
    TempDir dir;
    const std::string fs = dir.File("fs.img");
    const uint64_t size = bits[0] == '1' && bits[1] == '2' ? 8 << 20 : 300 << 20;
    test::CreateSparseFile(fs, size);
    RunOrThrow({"mkfs.vfat", "-F", bits, fs});
    Mutate(fs, size, kTrials, 12, [](const ByteSource& s) { return FatUsedMap(s); });
  }
}

TEST(UsedMapMutationTest, Xfs) {
  TempDir dir;
  const std::string fs = dir.File("fs.img");
  const uint64_t size = 300 << 20;
  test::CreateSparseFile(fs, size);
  RunOrThrow({"mkfs.xfs", "-q", fs});
  Mutate(fs, size, kTrials, 13, [](const ByteSource& s) { return XfsUsedMap(s); });
}

TEST(UsedMapMutationTest, Btrfs) {
  TempDir dir;
  const std::string fs = dir.File("fs.img");
  const uint64_t size = 300 << 20;
  test::CreateSparseFile(fs, size);
  RunOrThrow({"mkfs.btrfs", "-q", fs});
  Mutate(fs, size, kTrials, 14, [](const ByteSource& s) { return BtrfsUsedMap(s); });
}

TEST(UsedMapMutationTest, Swap) {
  TempDir dir;
  const std::string fs = dir.File("swap.img");
  const uint64_t size = 16 << 20;
  test::CreateSparseFile(fs, size);
  RunOrThrow({"mkswap", "-q", fs});
  Mutate(
      fs, size, kTrials, 15, [](const ByteSource& s) { return SwapUsedMap(s); },
      /*checked=*/false);
}

}  // namespace
}  // namespace partalign
