// SPDX-License-Identifier: GPL-3.0-or-later
// FindDiskUsers: /proc/swaps parsing; holders (device-mapper, md) from a fake sysfs tree, since
// this machine has neither; a loop device backed by an image; a disk nobody uses.
#include "io/device/in_use.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "support/device_test.h"
#include "support/loop_device.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;

// Every exclusive open and lock of a move waits for a holder that is going away (a partalign
// killed with I/O in flight keeps its files for milliseconds): what the attempt makes once it
// is no longer busy, any other error at once.
TEST(RetryWhileBusyTest, WhatAnAttemptMakesIsReturnedOnceItIsNoLongerBusy) {
  int attempts = 0;
  Result<std::string> made = RetryWhileBusy<std::string>([&]() -> Result<std::string> {
    if (++attempts < 3) return Error{"held by a process going away", EBUSY};
    return std::string("opened");
  });
  ASSERT_TRUE(made) << made.error().message;
  EXPECT_EQ(*made, "opened");
  EXPECT_EQ(attempts, 3);
}

TEST(RetryWhileBusyTest, AnErrorOtherThanBusyIsReturnedAtOnce) {
  int attempts = 0;
  Result<int> made = RetryWhileBusy<int>([&]() -> Result<int> {
    ++attempts;
    return Error{"no such device", ENOENT};
  });
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().errno_value, ENOENT);
  EXPECT_EQ(made.error().message, "no such device");
  EXPECT_EQ(attempts, 1);
}

TEST(InUseTest, ProcSwapsNamesAreUnescaped) {
  const std::string text =
      "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
      "/dev/loop3p2                            partition\t102396\t\t0\t\t-2\n"
      "/swap\\040file                          file\t\t1024\t\t0\t\t-3\n";
  EXPECT_EQ(ParseProcSwaps(text), (std::vector<std::string>{"/dev/loop3p2", "/swap file"}));
  EXPECT_TRUE(ParseProcSwaps("Filename Type Size Used Priority\n").empty());
}

// What blocks a write (issue #29): the whole disk's users always, a partition's users when the
// write changes its entry or writes any of its bytes; nothing else.
TEST(InUseTest, OnlyUsersOfWhatTheWriteChangesBlockIt) {
  const DiskUser disk{0, "/dev/sda", "is mounted on '/mnt'", {}};
  const DiskUser root{1, "/dev/sda1", "is mounted on '/'", {1 << 20, 100 << 20}};
  const DiskUser data{2, "/dev/sda2", "is mounted on '/srv'", {101 << 20, 50 << 20}};
  WriteScope scope;
  scope.whole_disk = false;
  scope.partitions = {2};
  scope.bytes = {{(101 << 20) + 32256, 50 << 20}, {0, 512}};
  EXPECT_TRUE(Blocks(disk, scope));
  EXPECT_FALSE(Blocks(root, scope));
  EXPECT_TRUE(Blocks(data, scope));
  // A table-only change of partition 3 that writes nothing of partition 2: 2 may stay.
  WriteScope table_only;
  table_only.whole_disk = false;
  table_only.partitions = {3};
  table_only.bytes = {{0, 512}};
  EXPECT_FALSE(Blocks(data, table_only));
  // One byte of partition 1 written: it blocks.
  table_only.bytes.push_back({(101 << 20) - 1, 1});
  EXPECT_TRUE(Blocks(root, table_only));
  // The whole disk (translate): everybody blocks.
  EXPECT_TRUE(Blocks(root, WriteScope::WholeDisk()));
}

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  test::WriteFile(path.string(), text);
}

// A 16 MiB image on a loop device, and a fake /sys with the loop device's entry (`disk`,
// reached through dev/block/MAJ:MIN) for the test to fill: FindDiskUsers reads that tree and
// the mountinfo and swaps files Sources() writes.
struct FakeSysfs {
  static std::string Image(const test::TempDir& dir) {
    const std::string image = dir.File("disk.img");
    test::CreateSparseFile(image, 16ull << 20);
    return image;
  }
  static std::string DeviceNumber(const std::string& node) {
    struct stat st {};
    if (::stat(node.c_str(), &st) != 0) ADD_FAILURE() << "cannot stat " << node;
    return fmt::format("{}:{}", major(st.st_rdev), minor(st.st_rdev));
  }

  FakeSysfs() {
    Write(disk / "dev", number + "\n");
    fs::create_directories(sys / "dev/block");
    fs::create_symlink(disk, sys / "dev/block" / number);
  }

  InUseSources Sources(const std::string& mountinfo) const {
    InUseSources sources;
    sources.sysfs_root = sys.string();
    sources.mountinfo = dir.File("mountinfo");
    sources.swaps = dir.File("swaps");
    test::WriteFile(sources.mountinfo, mountinfo);
    test::WriteFile(sources.swaps, "Filename Type Size Used Priority\n");
    return sources;
  }

  test::TempDir dir;
  test::LoopDevice loop{Image(dir), 512};
  std::string name = loop.name();
  std::string number = DeviceNumber(loop.path());
  fs::path sys = dir.File("sys");
  fs::path disk = sys / "devices/virtual/block" / name;
};

TEST(InUseTest, HoldersAreNamedFromSysfs) {
  PARTALIGN_REQUIRE_DEVICES();  // needs a real block device node to stat
  FakeSysfs f;
  const std::string& name = f.name;
  const test::LoopDevice& loop = f.loop;
  // The disk with one partition, held by LVM (device-mapper), and the whole disk by an md
  // array.
  Write(f.disk / (name + "p1") / "partition", "1\n");
  Write(f.disk / (name + "p1") / "dev", "259:99\n");
  fs::create_directories(f.disk / (name + "p1") / "holders" / "dm-0");
  fs::create_directories(f.disk / "holders" / "md127");
  Write(f.sys / "block/dm-0/dm/name", "vg-root\n");
  fs::create_directories(f.sys / "block/md127/md");
  const InUseSources sources = f.Sources("");

  Result<std::vector<DiskUser>> users = FindDiskUsers(loop.path(), sources);
  ASSERT_TRUE(users) << users.error().message;
  ASSERT_EQ(users->size(), 2u);
  std::vector<std::string> described;
  for (const DiskUser& u : *users) described.push_back(Describe(u));
  std::sort(described.begin(), described.end());
  EXPECT_EQ(described[0], "'" + loop.path() + "' is held by md array 'md127'");
  EXPECT_EQ(described[1],
            "partition 1 ('/dev/" + name + "p1') is held by device-mapper device 'vg-root' (dm-0)");
}

// Two paths to one disk (dm-multipath's, or a disk on two controllers): the same WWID in
// sysfs. A partition mounted through the other path is in use on this one, given to the
// partition whose bytes it covers.
TEST(InUseTest, APartitionMountedThroughAnotherPathToTheSameDiskIsInUse) {
  PARTALIGN_REQUIRE_DEVICES();  // needs a real block device node to stat
  FakeSysfs f;
  const std::string& name = f.name;
  const test::LoopDevice& loop = f.loop;
  const fs::path& sys = f.sys;
  const fs::path& disk = f.disk;
  Write(disk / "size", "32768\n");
  Write(disk / "wwid", "naa.600508b1001c4d3a\n");
  for (int n : {1, 2}) {
    const fs::path part = disk / fmt::format("{}p{}", name, n);
    Write(part / "partition", fmt::format("{}\n", n));
    Write(part / "dev", fmt::format("259:{}\n", 90 + n));
    Write(part / "start", n == 1 ? "2048\n" : "10240\n");
    Write(part / "size", "8192\n");
  }
  // The other path: sdz, same WWID, its partition 2 (same place) mounted.
  const fs::path other = sys / "devices/pci0000:00/host9/block/sdz";
  Write(other / "dev", "65:144\n");
  Write(other / "size", "32768\n");
  Write(other / "device/wwid", "naa.600508b1001c4d3a\n");
  Write(other / "sdz2/partition", "2\n");
  Write(other / "sdz2/dev", "65:146\n");
  Write(other / "sdz2/start", "10240\n");
  Write(other / "sdz2/size", "8192\n");
  // And a disk with another WWID, mounted: nothing to do with this one.
  const fs::path unrelated = sys / "devices/pci0000:00/host9/block/sdy";
  Write(unrelated / "dev", "65:128\n");
  Write(unrelated / "wwid", "naa.600508b1001c0000\n");
  fs::create_directories(sys / "block");
  for (const fs::path& d : {disk, other, unrelated}) {
    fs::create_symlink(d, sys / "block" / d.filename());
  }
  fs::create_symlink(other, sys / "dev/block/65:144");
  const InUseSources sources = f.Sources(
      "40 27 65:146 / /srv rw,relatime - ext4 /dev/sdz2 rw\n"
      "41 27 65:128 / /other rw,relatime - ext4 /dev/sdy rw\n");

  Result<std::vector<DiskUser>> users = FindDiskUsers(loop.path(), sources);
  ASSERT_TRUE(users) << users.error().message;
  ASSERT_EQ(users->size(), 1u);
  EXPECT_EQ(Describe(users->front()),
            fmt::format("partition 2 ('/dev/{}p2') is mounted on '/srv' through '/dev/sdz2' "
                        "(another path to the same disk (WWID naa.600508b1001c4d3a))",
                        name));
}

TEST(InUseTest, ImageAttachedToALoopDeviceIsInUse) {
  PARTALIGN_REQUIRE_DEVICES();
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, 16ull << 20);
  Result<std::vector<DiskUser>> users = FindDiskUsers(image);
  ASSERT_TRUE(users) << users.error().message;
  EXPECT_TRUE(users->empty());
  {
    test::LoopDevice loop(image, 512);
    users = FindDiskUsers(image);
    ASSERT_TRUE(users) << users.error().message;
    ASSERT_EQ(users->size(), 1u);
    EXPECT_EQ(Describe(users->front()),
              "'" + image + "' is attached to loop device '" + loop.path() + "'");
    // The loop device itself: attached to nothing, mounted nowhere.
    users = FindDiskUsers(loop.path());
    ASSERT_TRUE(users) << users.error().message;
    EXPECT_TRUE(users->empty());
  }
}

}  // namespace
}  // namespace partalign
