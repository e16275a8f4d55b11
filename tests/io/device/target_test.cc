// SPDX-License-Identifier: GPL-3.0-or-later
// OpenTarget and DropCachedPages on a loop device held open all along (as a mounted partition
// holds its disk): bytes written through a partition's node after they were read through the
// whole disk are read as the disk holds them, not as the whole disk's page cache kept them.
#include "io/device/target.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "io/block/block_io.h"
#include "support/device_test.h"
#include "support/partitioned_loop.h"

namespace partalign {
namespace {

constexpr uint64_t kPartitionStart = 2048 * 512;
constexpr size_t kBytes = 8192;

std::vector<uint8_t> Read(const Target& t, uint64_t offset) {
  std::vector<uint8_t> bytes(kBytes);
  Result<size_t> got = ReadAt(t.fd.get(), bytes.data(), bytes.size(), offset, t.path);
  EXPECT_TRUE(got) << got.error().message;
  return bytes;
}

// kBytes of `value` at the start of the partition `node`, written with O_DIRECT.
std::vector<uint8_t> WriteThroughNode(const std::string& node, uint8_t value) {
  AlignedBuffer buffer(kBytes);
  std::memset(buffer.data(), value, kBytes);
  const int fd = ::open(node.c_str(), O_WRONLY | O_DIRECT | O_CLOEXEC);
  EXPECT_GE(fd, 0) << node << ": " << std::strerror(errno);
  EXPECT_EQ(::pwrite(fd, buffer.data(), kBytes, 0), static_cast<ssize_t>(kBytes))
      << node << ": " << std::strerror(errno);
  if (fd >= 0) ::close(fd);
  return std::vector<uint8_t>(kBytes, value);
}

TEST(TargetTest, ReadsWhatAPartitionsNodeWroteAfterTheWholeDiskCachedIt) {
  PARTALIGN_REQUIRE_DEVICES();
  const test::PartitionedLoop disk("label: dos\nstart=2048, size=12288\n", 512, 8ull << 20);
  const test::LoopDevice& loop = disk.loop();

  // Held from the start, like the disk of a mounted partition: the kernel keeps its cache.
  Result<Target> held = OpenTarget(loop.path());
  ASSERT_TRUE(held) << held.error().message;
  const std::vector<uint8_t> zeros(kBytes, 0);
  ASSERT_EQ(Read(*held, kPartitionStart), zeros);  // now in the whole disk's page cache

  // Written through the partition's node, as its file system writes it; through the held
  // descriptor, the old bytes still (the hazard: without it nothing here is tested).
  const std::vector<uint8_t> first = WriteThroughNode(loop.PartitionPath(1), 0x5A);
  EXPECT_EQ(Read(*held, kPartitionStart), zeros) << "the whole disk's cache followed the node";
  DropCachedPages(*held);
  EXPECT_EQ(Read(*held, kPartitionStart), first);

  // Again, and a new open reads the disk.
  const std::vector<uint8_t> second = WriteThroughNode(loop.PartitionPath(1), 0xA5);
  EXPECT_EQ(Read(*held, kPartitionStart), first) << "the whole disk's cache followed the node";
  Result<Target> opened = OpenTarget(loop.path());
  ASSERT_TRUE(opened) << opened.error().message;
  EXPECT_EQ(Read(*opened, kPartitionStart), second);
}

}  // namespace
}  // namespace partalign
