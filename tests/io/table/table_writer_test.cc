// SPDX-License-Identifier: GPL-3.0-or-later
// WriteTableRanges on a loop device: it writes the table's sectors and nothing else, also when
// the sectors beside them belong to a partition written through its own node since the whole
// disk's page cache last read them (a partition that stays in use while apply writes the table
// of the others).
#include "io/table/table_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "io/device/target.h"
#include "support/boot_disks.h"
#include "support/device_test.h"
#include "support/partitioned_loop.h"
#include "support/stack_tools.h"

namespace partalign {
namespace {

constexpr uint64_t kSector = 512;

TEST(TableWriterTest, WritesOnlyItsSectorsBesideAPartitionWrittenThroughItsOwnNode) {
  PARTALIGN_REQUIRE_DEVICES();
  // An EBR at sector 8 of a logical partition's chain shares its 4 KiB block (sectors 8-15)
  // with the partition before it, as on a disk laid out in cylinders: here partition 1 ends at
  // sector 7 and partition 2 starts at sector 9, each a neighbour of sector 8 in the block. The
  // disk's size is a multiple of 4 KiB: the kernel caches it in 4 KiB blocks.
  const test::PartitionedLoop disk("label: dos\nstart=1, size=7\nstart=9, size=16375\n", kSector,
                                   8ull << 20);
  const test::LoopDevice& loop = disk.loop();
  const std::string& image = disk.image();

  TableRange ebr;  // new bytes for sector 8 alone (an EBR)
  ebr.offset_bytes = 8 * kSector;
  ebr.length_bytes = kSector;
  ebr.old_bytes.assign(kSector, 0);
  ebr.new_bytes.assign(kSector, 0xEB);
  TableRange mbr;  // and for the MBR
  mbr.offset_bytes = 0;
  mbr.length_bytes = kSector;
  mbr.old_bytes = test::ReadBytes(image, 0, kSector);
  mbr.new_bytes = mbr.old_bytes;
  mbr.new_bytes[0] = 0xFA;
  const std::vector<uint8_t> last_of_1(kSector, 0xA1), first_of_2(kSector, 0xB2);
  {
    Result<Target> whole = OpenTarget(loop.path(), {.write = true});
    ASSERT_TRUE(whole) << whole.error().message;
    // apply reads the table through the whole disk first (libfdisk, libblkid): the blocks of
    // sectors 0-7 and 8-15 are in the whole disk's page cache from then on.
    std::vector<uint8_t> cached(8192);
    ASSERT_EQ(::pread(whole->fd.get(), cached.data(), cached.size(), 0), 8192)
        << std::strerror(errno);
    // Partitions 1 and 2 are in use: their owners write through the partition nodes.
    test::WriteBytesAt(loop.PartitionPath(1), 6 * kSector, last_of_1);  // disk sector 7
    test::WriteBytesAt(loop.PartitionPath(2), 0, first_of_2);           // disk sector 9
    Status s = WriteTableRanges(whole->fd.get(), loop.path(), kSector, {ebr, mbr});
    ASSERT_TRUE(s) << s.error().message;
    // Read back through the same descriptor, the table's sectors hold the new bytes.
    Result<std::vector<uint8_t>> read = ReadExactly(whole->fd.get(), loop.path(), 0, 9 * kSector);
    ASSERT_TRUE(read) << read.error().message;
    EXPECT_EQ(std::vector<uint8_t>(read->begin(), read->begin() + kSector), mbr.new_bytes);
    EXPECT_EQ(std::vector<uint8_t>(read->begin() + 8 * kSector, read->end()), ebr.new_bytes);
  }

  // The table sectors hold the new bytes, and the partitions' sectors what their owners wrote.
  EXPECT_EQ(test::ReadBytes(image, 8 * kSector, kSector), ebr.new_bytes);
  EXPECT_EQ(test::ReadBytes(image, 0, kSector), mbr.new_bytes);
  EXPECT_EQ(test::ReadBytes(image, 7 * kSector, kSector), last_of_1)
      << "the write of sector 0 wrote sector 7 back as the whole disk's cache held it";
  EXPECT_EQ(test::ReadBytes(image, 9 * kSector, kSector), first_of_2)
      << "the write of sector 8 wrote sector 9 back as the whole disk's cache held it";
}

// A table of 512-byte sectors on a disk of 4096-byte ones (read with --sector-size 512): O_DIRECT
// refuses a write smaller than the disk's sector, and the range is written through the page
// cache, the rest of its 4096-byte sector kept.
TEST(TableWriterTest, WritesARangeSmallerThanTheDisksSectorThroughThePageCache) {
  PARTALIGN_REQUIRE_DEVICES();
  const test::PartitionedLoop disk("label: gpt\nstart=256, size=1536\n", 4096, 8ull << 20);
  const std::vector<uint8_t> before = test::ReadBytes(disk.image(), 0, 4096);
  TableRange half;
  half.offset_bytes = 1024;
  half.length_bytes = kSector;
  half.old_bytes.assign(before.begin() + 1024, before.begin() + 1024 + kSector);
  half.new_bytes.assign(kSector, 0x42);
  {
    Result<Target> whole = OpenTarget(disk.device(), {.write = true});
    ASSERT_TRUE(whole) << whole.error().message;
    ASSERT_EQ(whole->logical_sector_size, 4096u);
    Status s = WriteTableRanges(whole->fd.get(), disk.device(), kSector, {half});
    ASSERT_TRUE(s) << s.error().message;
    EXPECT_EQ(::fcntl(whole->fd.get(), F_GETFL) & O_DIRECT, 0) << "the descriptor's flags restored";
  }
  std::vector<uint8_t> expected = before;
  std::copy(half.new_bytes.begin(), half.new_bytes.end(), expected.begin() + 1024);
  EXPECT_EQ(test::ReadBytes(disk.image(), 0, 4096), expected);
}

}  // namespace
}  // namespace partalign
