// SPDX-License-Identifier: GPL-3.0-or-later
// DropCachedPages, and where it is called, on a loop device held open all along (as a mounted
// partition holds its disk): bytes written through a partition's node after they were read
// through the whole disk are read as the disk holds them, not as the whole disk's page cache
// kept them - after DropCachedPages, after ProbeTarget (a command's first read) and after
// OpenForTableWrite (a write's hold).
#include "io/device/target.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "io/device/device_probe.h"
#include "io/device/in_use.h"
#include "support/device_test.h"
#include "support/partitioned_loop.h"
#include "support/stack_tools.h"

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

class CachedPagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PARTALIGN_REQUIRE_DEVICES();
    disk_ = std::make_unique<test::PartitionedLoop>("label: dos\nstart=2048, size=12288\n", 512,
                                                    8ull << 20);
    // Held from the start, like the disk of a mounted partition: the kernel keeps its cache.
    Result<Target> held = OpenTarget(disk_->device());
    ASSERT_TRUE(held) << held.error().message;
    held_ = std::make_unique<Target>(std::move(*held));
  }

  // The partition's first bytes read through the held descriptor (so cached), then written
  // through the partition's node as its file system would write them; read through the held
  // descriptor again after `drop`: the bytes written.
  void ExpectNewBytesAfter(const std::function<void()>& drop) {
    const std::vector<uint8_t> before = Read(*held_, kPartitionStart);
    const std::vector<uint8_t> written(kBytes, static_cast<uint8_t>(before[0] + 0x5A));
    test::WriteBytesAt(disk_->loop().PartitionPath(1), 0, written);
    // The hazard: without it, nothing here would be tested.
    ASSERT_EQ(Read(*held_, kPartitionStart), before) << "the whole disk's cache followed the node";
    drop();
    EXPECT_EQ(Read(*held_, kPartitionStart), written);
  }

  std::unique_ptr<test::PartitionedLoop> disk_;
  std::unique_ptr<Target> held_;
};

TEST_F(CachedPagesTest, DropCachedPagesReadsTheDiskAgain) {
  ExpectNewBytesAfter([&] { DropCachedPages(*held_); });
  ExpectNewBytesAfter([&] { DropCachedPages(*held_); });  // and again
}

TEST_F(CachedPagesTest, ProbeTargetStartsFromTheDisk) {
  ExpectNewBytesAfter([&] {
    Result<DeviceInfo> probed = ProbeTarget(disk_->device(), {});
    EXPECT_TRUE(probed) << probed.error().message;
  });
}

TEST_F(CachedPagesTest, OpenForTableWriteForgetsWhatWasCachedBeforeItsHold) {
  ExpectNewBytesAfter([&] {
    Result<Target> held = OpenForTableWrite(disk_->device());
    EXPECT_TRUE(held) << held.error().message;
  });
}

}  // namespace
}  // namespace partalign
