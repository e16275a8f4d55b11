// SPDX-License-Identifier: GPL-3.0-or-later
// Backup files: written durably with private permissions, never overwritten, read back
// identical; a changed byte is caught by its xxh64.
#include "io/table/backup_file.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "support/temp_dir.h"

namespace partalign {
namespace {

TableBackup Example() {
  TableBackup b;
  b.partalign_version = "0.1.0";
  b.created = "2026-11-21T10:15:00Z";
  b.command = "apply";
  b.device.disk = {"/dev/loop3", 64ull << 20, 512, "", ""};
  b.label = LabelType::kGpt;
  b.sector_size = 512;
  b.table_fingerprint = "xxh64:00000000000000aa";
  b.sfdisk_dump = "label: gpt\n";
  TableTransition t;
  t.label = LabelType::kGpt;
  t.ranges = {{TableAreaRole::kGptHeader, 512, 512, 0, 0, std::vector<uint8_t>(512, 1),
               std::vector<uint8_t>(512, 2)}};
  b.ranges = BackupRangesOf(t);
  HashBackupRanges(t, &b);
  return b;
}

TEST(BackupFileTest, WritesPrivatelyAndReadsBack) {
  test::TempDir dir;
  const std::string backups = dir.File("a/b");
  TableBackup b = Example();
  EXPECT_EQ(b.ranges[0].xxh64.rfind("xxh64:", 0), 0u);
  EXPECT_NE(b.ranges[0].applied_xxh64, b.ranges[0].xxh64);
  Result<std::string> path = WriteBackupFile(backups, "x.partalign-backup", b);
  ASSERT_TRUE(path) << path.error().message;
  EXPECT_EQ(*path, backups + "/x.partalign-backup");
  struct stat st {};
  ASSERT_EQ(::stat(path->c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(backups.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  Result<TableBackup> back = ReadBackupFile(*path);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, b);
  // Never overwritten, and no temporary file left behind.
  Result<std::string> again = WriteBackupFile(backups, "x.partalign-backup", b);
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().message.find("File exists"), std::string::npos);
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(backups)) ++files;
  EXPECT_EQ(files, 1u);
}

TEST(BackupFileTest, ChangedBytesAreCaught) {
  test::TempDir dir;
  TableBackup b = Example();
  b.ranges[0].bytes[100] ^= 1;  // the hash is of the original bytes
  Result<std::string> path = WriteBackupFile(dir.path(), "y.partalign-backup", b);
  ASSERT_TRUE(path);
  Result<TableBackup> back = ReadBackupFile(*path);
  ASSERT_FALSE(back);
  EXPECT_NE(back.error().message.find("ranges[0]: the saved bytes do not match their xxh64"),
            std::string::npos)
      << back.error().message;
  EXPECT_FALSE(ReadBackupFile(dir.File("missing")));
}

}  // namespace
}  // namespace partalign
