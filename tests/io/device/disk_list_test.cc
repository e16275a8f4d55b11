// SPDX-License-Identifier: GPL-3.0-or-later
// audit --all's list of disks, on a fake /sys/block and on this machine's.
#include "io/device/disk_list.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/temp_dir.h"

namespace partalign {
namespace {

void FakeDisk(const std::filesystem::path& sys_block, const std::string& name,
              const std::string& size) {
  std::filesystem::create_directories(sys_block / name);
  std::ofstream(sys_block / name / "size") << size << "\n";
}

TEST(DiskListTest, KeepsDisksThatCanHoldATableAndNothingElse) {
  test::TempDir dir;
  const std::filesystem::path sys = dir.File("block");
  FakeDisk(sys, "sdb", "2048");
  FakeDisk(sys, "nvme0n1", "1000215216");
  FakeDisk(sys, "vda", "41943040");
  FakeDisk(sys, "sdc", "0");  // card reader without a card
  for (const char* skipped : {"loop0", "ram0", "zram0", "sr0", "fd0", "dm-0", "md127"}) {
    FakeDisk(sys, skipped, "2048");
  }
  Result<std::vector<std::string>> disks = ListWholeDisks(sys.string());
  ASSERT_TRUE(disks) << disks.error().message;
  EXPECT_EQ(*disks, (std::vector<std::string>{"/dev/nvme0n1", "/dev/sdb", "/dev/vda"}));
}

TEST(DiskListTest, AMissingDirectoryIsAnErrorThatNamesIt) {
  Result<std::vector<std::string>> disks = ListWholeDisks("/nonexistent/sys/block");
  ASSERT_FALSE(disks);
  EXPECT_NE(disks.error().message.find("/nonexistent/sys/block"), std::string::npos);
}

}  // namespace
}  // namespace partalign
