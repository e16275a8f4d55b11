// SPDX-License-Identifier: GPL-3.0-or-later
// FindFirstNonZero over ranges long enough to be read with O_DIRECT, several chunks in flight
// (a whole partition's proof), and short ones read buffered: the first byte that is not zero,
// wherever it lies in a chunk, nullopt for zeros, an error for a range past a device's end. On an
// image file (holes skipped) and on a loop device with direct I/O. FindFirstNonZeroInEach: many
// short ranges (in O_DIRECT batches on the loop device), the same answers as FindFirstNonZero
// range by range.
#include "io/device/zero_scan.h"

#include <fcntl.h>

#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "io/util/unique_fd.h"
#include "partalign/util/units.h"
#include "support/device_test.h"
#include "support/loop_device.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

constexpr uint64_t kImageBytes = 96 * kMiB;
// Past the first batch of chunks in flight (4 x 4 MiB), not on a chunk's or a sector's start.
constexpr uint64_t kDataAt = 41 * kMiB + 123;

void WriteByte(const std::string& path, uint64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(offset));
  f.put('x');
  ASSERT_TRUE(f.flush()) << path;
}

void ExpectScans(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(fd.valid()) << path;
  Result<std::optional<uint64_t>> whole = FindFirstNonZero(fd.get(), path, 0, kImageBytes);
  ASSERT_TRUE(whole) << whole.error().message;
  EXPECT_EQ(*whole, std::optional<uint64_t>(kDataAt));
  // From an offset: the answer is relative to it.
  Result<std::optional<uint64_t>> from = FindFirstNonZero(fd.get(), path, 2 * kMiB, 60 * kMiB);
  ASSERT_TRUE(from) << from.error().message;
  EXPECT_EQ(*from, std::optional<uint64_t>(kDataAt - 2 * kMiB));
  // Zeros before the byte and after it, long (direct) and short (buffered) ranges.
  for (uint64_t start : {uint64_t{0}, 42 * kMiB}) {
    for (uint64_t length : {kMiB, 20 * kMiB, 40 * kMiB}) {
      if (start + length > kImageBytes || (start <= kDataAt && kDataAt < start + length)) continue;
      Result<std::optional<uint64_t>> zeros = FindFirstNonZero(fd.get(), path, start, length);
      ASSERT_TRUE(zeros) << zeros.error().message;
      EXPECT_EQ(*zeros, std::nullopt) << start << " + " << length;
    }
  }
}

// Heads of 1 MiB every 2 MiB (more than one batch of 16 MiB), a byte written into some of them
// at odd places, and ranges the direct reads cannot make (an odd offset, an odd length, an empty
// one, one longer than a batch's range): each answer is FindFirstNonZero's for that range.
void ExpectEachScan(const std::string& path, bool writable_image) {
  std::vector<ByteRange> ranges;
  for (uint64_t i = 0; i < 30; ++i) ranges.push_back({i * 2 * kMiB, kMiB});
  if (writable_image) {
    for (uint64_t at :
         {uint64_t{0}, 2 * kMiB + kMiB - 1, 8 * kMiB + 4097, 34 * kMiB + 512, 58 * kMiB + 77}) {
      WriteByte(path, at);
    }
  }
  ranges.push_back({3 * kMiB + 1, 1000});  // odd offset and length: buffered
  ranges.push_back({5 * kMiB, 0});         // empty
  ranges.push_back({0, 6 * kMiB});         // longer than a batch's range
  ranges.push_back({40 * kMiB, 3 * kMiB});
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(fd.valid()) << path;
  Result<std::vector<std::optional<uint64_t>>> each =
      FindFirstNonZeroInEach(fd.get(), path, ranges);
  ASSERT_TRUE(each) << each.error().message;
  ASSERT_EQ(each->size(), ranges.size());
  size_t with_data = 0;
  for (size_t i = 0; i < ranges.size(); ++i) {
    Result<std::optional<uint64_t>> one =
        FindFirstNonZero(fd.get(), path, ranges[i].offset, ranges[i].length);
    ASSERT_TRUE(one) << one.error().message;
    EXPECT_EQ((*each)[i], *one) << "range " << i << " at " << ranges[i].offset;
    if (*one) ++with_data;
  }
  // The bytes written, and kDataAt (in the gap after the head at 40 MiB, in the last range).
  EXPECT_EQ((*each)[0], std::optional<uint64_t>(0));
  EXPECT_EQ((*each)[1], std::optional<uint64_t>(kMiB - 1));
  EXPECT_EQ((*each)[4], std::optional<uint64_t>(4097));
  EXPECT_EQ((*each)[17], std::optional<uint64_t>(512));
  EXPECT_EQ((*each)[29], std::optional<uint64_t>(77));
  EXPECT_EQ((*each)[2], std::nullopt);
  EXPECT_EQ((*each)[ranges.size() - 1], std::optional<uint64_t>(kDataAt - 40 * kMiB));
  EXPECT_EQ(with_data, 7u);  // five heads, the long range from 0, the range at 40 MiB
}

TEST(ZeroScanTest, TheFirstNonZeroByteOfAnImageIsFoundInLongAndShortRanges) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kImageBytes);
  WriteByte(image, kDataAt);
  ExpectScans(image);
}

TEST(ZeroScanTest, EachOfManyShortRangesOfAnImageIsScanned) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kImageBytes);
  WriteByte(image, kDataAt);
  ExpectEachScan(image, /*writable_image=*/true);
}

TEST(ZeroScanTest, TheFirstNonZeroByteOfALoopDeviceWithDirectIoIsFound) {
  PARTALIGN_REQUIRE_DEVICES();
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kImageBytes);
  WriteByte(image, kDataAt);
  test::LoopDevice loop(image, 512, /*direct_io=*/true);
  ExpectScans(loop.path());
  // Ending past the device's end: not empty, an error (the direct reads fail there, and the
  // buffered read says where).
  UniqueFd fd(::open(loop.path().c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(fd.valid());
  Result<std::optional<uint64_t>> past =
      FindFirstNonZero(fd.get(), loop.path(), kImageBytes - 40 * kMiB, 64 * kMiB);
  ASSERT_FALSE(past);
  EXPECT_NE(past.error().message.find("cannot read byte"), std::string::npos)
      << past.error().message;
}

TEST(ZeroScanTest, EachOfManyShortRangesOfALoopDeviceWithDirectIoIsScanned) {
  PARTALIGN_REQUIRE_DEVICES();
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kImageBytes);
  WriteByte(image, kDataAt);
  // The bytes are written to the image (and checked there) before the loop device reads it.
  ExpectEachScan(image, /*writable_image=*/true);
  test::LoopDevice loop(image, 512, /*direct_io=*/true);
  ExpectEachScan(loop.path(), /*writable_image=*/false);
  // A batch with a range past the device's end: an error, not a range found empty.
  UniqueFd fd(::open(loop.path().c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(fd.valid());
  const std::vector<ByteRange> past = {{0, kMiB}, {kImageBytes - kMiB / 2, kMiB}};
  Result<std::vector<std::optional<uint64_t>>> each =
      FindFirstNonZeroInEach(fd.get(), loop.path(), past);
  ASSERT_FALSE(each);
  EXPECT_NE(each.error().message.find("cannot read byte"), std::string::npos)
      << each.error().message;
}

}  // namespace
}  // namespace partalign
