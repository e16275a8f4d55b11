// SPDX-License-Identifier: GPL-3.0-or-later
// Table write markers (translate's, docs/migration.md "Interrupted"): a marker names its
// backup, is found by the identity of the disk the backup was taken from - its path only when
// the disk has nothing else to tell it by - and is gone once removed.
#include "io/table/table_write_marker.h"

#include <stdlib.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "io/table/backup_file.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

// PARTALIGN_STATE_DIR set for the test's lifetime.
class StateDir {
 public:
  explicit StateDir(const std::string& dir) { ::setenv("PARTALIGN_STATE_DIR", dir.c_str(), 1); }
  ~StateDir() { ::unsetenv("PARTALIGN_STATE_DIR"); }
};

TableBackup Translated(const std::string& path, const std::string& backing_file) {
  TableBackup b;
  b.partalign_version = "0.1.0";
  b.created = "2026-12-02T10:15:00Z";
  b.command = "translate";
  b.device.disk = {path, 16ull << 20, 4096, "", ""};
  b.device.backing_file = backing_file;
  b.label = LabelType::kGpt;
  b.sector_size = 4096;
  b.table_sector_size = 512;
  b.table_fingerprint = "xxh64:00000000000000aa";
  b.sfdisk_dump = "label: gpt\n";
  TableTransition t;
  t.label = LabelType::kGpt;
  t.ranges = {{TableAreaRole::kGptHeader, 4096, 4096, 0, 0, std::vector<uint8_t>(4096, 1),
               std::vector<uint8_t>(4096, 2)}};
  b.ranges = BackupRangesOf(t);
  HashBackupRanges(t, &b);
  return b;
}

TEST(TableWriteMarkerTest, FoundByTheDisksIdentityUntilRemoved) {
  test::TempDir dir;
  StateDir state(dir.File("state"));
  EXPECT_EQ(TableWriteMarkerDir(), dir.File("state") + "/table-writes");
  const TableBackup loop = Translated("/dev/loop3", "/images/disk.img");
  Result<std::string> backup = WriteBackupFile(dir.File("my backups"), "a.partalign-backup", loop);
  ASSERT_TRUE(backup) << backup.error().message;
  EXPECT_TRUE(FindMarkedTableWrites(loop.device).empty());
  Result<std::string> marker = MarkTableWrite(*backup);
  ASSERT_TRUE(marker) << marker.error().message;

  // The loop device renamed (attached again): its backing file tells it.
  BackupDevice renamed = loop.device;
  renamed.disk.path = "/dev/loop7";
  std::vector<MarkedTableWrite> found = FindMarkedTableWrites(renamed);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].backup_path, *backup);
  EXPECT_EQ(found[0].marker_path, *marker);
  EXPECT_EQ(found[0].backup, loop);
  // Another image behind it, another size: another disk.
  BackupDevice other = loop.device;
  other.backing_file = "/images/other.img";
  EXPECT_TRUE(FindMarkedTableWrites(other).empty());
  other = loop.device;
  other.disk.size_bytes *= 2;
  EXPECT_TRUE(FindMarkedTableWrites(other).empty());

  // An image file has nothing but its path (and size) to tell it by.
  const TableBackup image = Translated("/images/one.img", "");
  Result<std::string> image_backup =
      WriteBackupFile(dir.File("my backups"), "b.partalign-backup", image);
  ASSERT_TRUE(image_backup) << image_backup.error().message;
  ASSERT_TRUE(MarkTableWrite(*image_backup));
  EXPECT_EQ(FindMarkedTableWrites(image.device).size(), 1u);
  BackupDevice same_size = image.device;
  same_size.disk.path = "/images/two.img";
  EXPECT_TRUE(FindMarkedTableWrites(same_size).empty());

  ASSERT_TRUE(UnmarkTableWrite(*marker));
  EXPECT_TRUE(FindMarkedTableWrites(renamed).empty());
  EXPECT_TRUE(UnmarkTableWrite(*marker)) << "a missing marker is no error";
}

TEST(TableWriteMarkerTest, AMarkerWithoutItsBackupIsSkipped) {
  test::TempDir dir;
  StateDir state(dir.File("state"));
  const TableBackup loop = Translated("/dev/loop3", "/images/disk.img");
  Result<std::string> backup = WriteBackupFile(dir.path(), "a.partalign-backup", loop);
  ASSERT_TRUE(backup);
  ASSERT_TRUE(MarkTableWrite(*backup));
  test::WriteFile(TableWriteMarkerDir() + "/junk.table-write", "not a path\n");
  test::WriteFile(TableWriteMarkerDir() + "/gone.table-write", dir.File("gone") + "\n");
  EXPECT_EQ(FindMarkedTableWrites(loop.device).size(), 1u);
  std::filesystem::remove(*backup);
  EXPECT_TRUE(FindMarkedTableWrites(loop.device).empty());
}

}  // namespace
}  // namespace partalign
