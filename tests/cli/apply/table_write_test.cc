// SPDX-License-Identifier: GPL-3.0-or-later
// Saving table backups: the same table backed up several times within one second (an apply
// stopped and run again at once, as a script recovering from a crash does) gets one file each,
// none overwritten.
#include "cli/apply/table_write.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "support/temp_dir.h"

namespace partalign {
namespace {

TEST(SaveBackupTest, SameTableWithinASecondGetsAFileEach) {
  test::TempDir dir;
  TableBackup b;
  b.partalign_version = "0.1.0";
  b.created = "2026-11-21T10:15:00Z";
  b.command = "apply";
  b.device.disk = {"/dev/loop3", 64ull << 20, 512, "", ""};
  b.device.kernel_name = "loop3";
  b.label = LabelType::kGpt;
  b.sector_size = 512;
  b.table_fingerprint = "xxh64:00000000000000aa";
  b.sfdisk_dump = "label: gpt\n";
  // Three in a row: at most one second boundary can fall between them, so at least two share
  // their second.
  std::set<std::string> paths;
  for (int i = 0; i < 3; ++i) {
    std::ostringstream out, err;
    std::optional<std::string> path = SaveBackup({out, err}, dir.File("backups"), b);
    ASSERT_TRUE(path) << err.str();
    EXPECT_NE(out.str().find(*path), std::string::npos) << out.str();
    EXPECT_TRUE(std::filesystem::is_regular_file(*path)) << *path;
    paths.insert(*path);
  }
  EXPECT_EQ(paths.size(), 3u);
}

}  // namespace
}  // namespace partalign
