// SPDX-License-Identifier: GPL-3.0-or-later
// ReadMountTable (libmount) on a mountinfo file written here: the fields partalign reads, a
// read-only mount told from a read-write one by the mount's own options.
#include "io/device/mount_table.h"

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace partalign {
namespace {

TEST(MountTableTest, ReadsEachMountAndWhetherItIsReadOnly) {
  test::TempDir dir;
  const std::string mountinfo = dir.File("mountinfo");
  // The superblock options of the first say "ro", the mount's "rw": a bind mount made read-
  // write over a read-only filesystem is not what the mount says. The second is read-only.
  test::WriteFile(mountinfo,
                  "26 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 ro,errors=remount-ro\n"
                  "31 26 7:2 / /boot ro,nosuid,relatime shared:9 - ext4 /dev/loop0p2 ro\n"
                  "40 26 0:25 / /run rw,nosuid,nodev shared:12 - tmpfs tmpfs rw,mode=755\n");
  Result<std::vector<MountEntry>> mounts = ReadMountTable(mountinfo);
  ASSERT_TRUE(mounts) << mounts.error().message;
  ASSERT_EQ(mounts->size(), 3u);
  EXPECT_EQ((*mounts)[0].target, "/");
  EXPECT_EQ((*mounts)[0].source, "/dev/vda1");
  EXPECT_EQ((*mounts)[0].major, 254u);
  EXPECT_EQ((*mounts)[0].minor, 1u);
  EXPECT_FALSE((*mounts)[0].read_only);
  EXPECT_EQ((*mounts)[1].target, "/boot");
  EXPECT_EQ((*mounts)[1].fstype, "ext4");
  EXPECT_EQ((*mounts)[1].minor, 2u);
  EXPECT_TRUE((*mounts)[1].read_only);
  EXPECT_FALSE((*mounts)[2].read_only);
  EXPECT_EQ((*mounts)[2].major, 0u);
}

TEST(MountTableTest, AMissingTableIsAnErrorNamingIt) {
  Result<std::vector<MountEntry>> mounts = ReadMountTable("/nonexistent/mountinfo");
  ASSERT_FALSE(mounts);
  EXPECT_NE(mounts.error().message.find("/nonexistent/mountinfo"), std::string::npos)
      << mounts.error().message;
}

}  // namespace
}  // namespace partalign
