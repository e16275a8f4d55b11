// SPDX-License-Identifier: GPL-3.0-or-later
// FindFirstNonZero over ranges long enough to be read with O_DIRECT, several chunks in flight
// (a whole partition's proof), and short ones read buffered: the first byte that is not zero,
// wherever it lies in a chunk, nullopt for zeros, an error for a range past a device's end. On an
// image file (holes skipped) and on a loop device with direct I/O.
#include "io/device/zero_scan.h"

#include <fcntl.h>

#include <fstream>
#include <string>

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

TEST(ZeroScanTest, TheFirstNonZeroByteOfAnImageIsFoundInLongAndShortRanges) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kImageBytes);
  WriteByte(image, kDataAt);
  ExpectScans(image);
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

}  // namespace
}  // namespace partalign
