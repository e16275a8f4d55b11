// SPDX-License-Identifier: GPL-3.0-or-later
// FindDiskUsers: /proc/swaps parsing; holders (device-mapper, md) from a fake sysfs tree, since
// this machine has neither; a loop device backed by an image; a disk nobody uses.
#include "io/device/in_use.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "support/device_test.h"
#include "support/loop_device.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;

TEST(InUseTest, ProcSwapsNamesAreUnescaped) {
  const std::string text =
      "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
      "/dev/loop3p2                            partition\t102396\t\t0\t\t-2\n"
      "/swap\\040file                          file\t\t1024\t\t0\t\t-3\n";
  EXPECT_EQ(ParseProcSwaps(text), (std::vector<std::string>{"/dev/loop3p2", "/swap file"}));
  EXPECT_TRUE(ParseProcSwaps("Filename Type Size Used Priority\n").empty());
}

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  test::WriteFile(path.string(), text);
}

TEST(InUseTest, HoldersAreNamedFromSysfs) {
  PARTALIGN_REQUIRE_DEVICES();  // needs a real block device node to stat
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, 16ull << 20);
  test::LoopDevice loop(image, 512);
  struct stat st {};
  ASSERT_EQ(::stat(loop.path().c_str(), &st), 0);
  const std::string name = loop.name();
  // A fake /sys: the disk with one partition, held by LVM (device-mapper) and the whole disk
  // by an md array.
  const fs::path sys = dir.File("sys");
  const fs::path disk = sys / "devices/virtual/block" / name;
  Write(disk / "dev", fmt::format("{}:{}\n", major(st.st_rdev), minor(st.st_rdev)));
  Write(disk / (name + "p1") / "partition", "1\n");
  Write(disk / (name + "p1") / "dev", "259:99\n");
  fs::create_directories(disk / (name + "p1") / "holders" / "dm-0");
  fs::create_directories(disk / "holders" / "md127");
  Write(sys / "block/dm-0/dm/name", "vg-root\n");
  fs::create_directories(sys / "block/md127/md");
  fs::create_directories(sys / "dev/block");
  fs::create_symlink(
      disk, sys / "dev/block" / fmt::format("{}:{}", major(st.st_rdev), minor(st.st_rdev)));
  InUseSources sources;
  sources.sysfs_root = sys.string();
  sources.mountinfo = dir.File("mountinfo");
  sources.swaps = dir.File("swaps");
  test::WriteFile(sources.mountinfo, "");
  test::WriteFile(sources.swaps, "Filename Type Size Used Priority\n");

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
