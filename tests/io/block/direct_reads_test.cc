// SPDX-License-Identifier: GPL-3.0-or-later
// ReadRanges: many ranges of an image file and of a loop device with direct I/O read in one
// batch, each buffer holding exactly the bytes of its range (O_DIRECT where the ranges allow
// it, buffered where they do not), and an error for a range past the end.
#include "io/block/direct_reads.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "partalign/util/units.h"
#include "support/device_test.h"
#include "support/loop_device.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

constexpr uint64_t kImageBytes = 16 * kMiB;

// An image whose byte at offset i is (i / 512 + i) % 251: every sector differs from its
// neighbours, so a range read from the wrong place shows.
std::string Pattern() {
  std::string bytes(kImageBytes, '\0');
  for (uint64_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i / 512 + i) % 251);
  return bytes;
}

void ExpectRanges(const std::string& path, const std::string& image,
                  const std::vector<ByteRange>& ranges) {
  Result<std::vector<AlignedBuffer>> read = ReadRanges(path, ranges);
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_EQ(read->size(), ranges.size());
  for (size_t i = 0; i < ranges.size(); ++i) {
    const std::string got(reinterpret_cast<const char*>((*read)[i].data()), ranges[i].length);
    EXPECT_EQ(got, image.substr(ranges[i].offset, ranges[i].length))
        << path << ": range " << i << " at " << ranges[i].offset;
  }
}

// Every partition's head on the loop device's 128 "partitions" of 64 KiB, and ranges O_DIRECT
// cannot read (odd offsets and lengths), which are read buffered.
std::vector<ByteRange> Heads() {
  std::vector<ByteRange> ranges;
  for (uint64_t at = kMiB; at + 64 * 1024 <= kImageBytes; at += 96 * 1024) {
    ranges.push_back({at, 64 * 1024});
  }
  return ranges;
}

TEST(DirectReadsTest, EveryRangeOfAnImageIsReadInOneBatch) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  const std::string bytes = Pattern();
  test::WriteFile(image, bytes);
  ExpectRanges(image, bytes, Heads());
  ExpectRanges(image, bytes, {{0, 512}, {4096 + 7, 100}, {kImageBytes - 512, 512}, {512, 0}});
  EXPECT_FALSE(ReadRanges(image, {{kImageBytes - 512, 1024}}));
  EXPECT_FALSE(ReadRanges(dir.File("missing.img"), {{0, 512}}));
}

TEST(DirectReadsTest, EveryRangeOfALoopDeviceWithDirectIoIsReadInOneBatch) {
  PARTALIGN_REQUIRE_DEVICES();
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  const std::string bytes = Pattern();
  test::WriteFile(image, bytes);
  test::LoopDevice loop(image, 512, /*direct_io=*/true);
  ExpectRanges(loop.path(), bytes, Heads());
  ExpectRanges(loop.path(), bytes, {{0, 512}, {4096 + 7, 100}, {kImageBytes - 512, 512}});
  EXPECT_FALSE(ReadRanges(loop.path(), {{kImageBytes - 512, 1024}}));
}

}  // namespace
}  // namespace partalign
