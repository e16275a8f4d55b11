// SPDX-License-Identifier: GPL-3.0-or-later
// A table backup is bound to its disk beyond size and sector size (issue 11, items 2 and 3):
// its ranges must hold the table it names, each range where that table or the apply's write
// put it, and the disk must show that table's identity (label, disk GUID or identifier,
// partition GUIDs) or, when it shows none, the bytes that were around the ranges. A tampered
// or foreign backup is refused with the disk untouched; the owner's disk, even wiped, is
// restored byte for byte.
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>

#include "support/apply_layouts.h"
#include "support/device_test.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::RunCommand;
using test::RunPartalign;

constexpr unsigned long long kImageBytes = 64ull << 20;
constexpr int kFailure = 1;
constexpr int kRefused = 3;

// An image partitioned with `layout`, its copy before apply, and the backup apply took.
struct AppliedImage {
  test::TempDir dir;
  std::string image = dir.File("disk.img");
  std::string original = dir.File("original.img");
  std::string applied = dir.File("applied.img");
  std::string backup;

  // `with_data`: random bytes in partition 1, so that a sector written into it would show. The
  // apply then moves them, and restore refuses such a backup (the journal is the way back):
  // without data the apply changes the table only, and its backup restores.
  explicit AppliedImage(const std::string& layout, bool with_data = true) {
    test::CreateSparseFile(image, kImageBytes);
    test::SfdiskImage(image, test::ApplyLayoutNamed(layout).script, 512);
    if (with_data) {
      test::RunOrThrow({"dd", "if=/dev/urandom", "of=" + image, "bs=512", "seek=63", "count=2000",
                        "conv=notrunc", "status=none"});
    }
    test::RunOrThrow({"cp", "--sparse=always", image, original});
    const std::string plan = dir.File("plan.json");
    CommandResult r = RunPartalign({"plan", "-o", plan, image});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    r = RunPartalign({"apply", "--yes", "--journal-dir", dir.File("journals"), "--backup-dir",
                      dir.File("backups"), plan});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    std::vector<std::string> files = test::FilesIn(dir.File("backups"), ".partalign-backup");
    EXPECT_FALSE(files.empty());
    backup = files.empty() ? "" : files.back();
    test::RunOrThrow({"cp", "--sparse=always", image, applied});
  }

  // `target` (default: a copy of the applied image) after `restore --yes` of `backup_file`.
  CommandResult Restore(const std::string& backup_file, const std::string& target) const {
    return RunPartalign(
        {"restore", "--yes", "--backup-dir", dir.File("undo"), "--target", target, backup_file});
  }
  std::string Copy(const std::string& name) const {
    const std::string path = dir.File(name);
    test::RunOrThrow({"cp", "--sparse=always", applied, path});
    return path;
  }
  std::string Edited(const std::function<void(nlohmann::json&)>& edit) const {
    nlohmann::json j = nlohmann::json::parse(test::ReadFile(backup));
    edit(j);
    const std::string path = dir.File("edited.partalign-backup");
    test::WriteFile(path, j.dump(1));
    return path;
  }
};

void ExpectRefusedUntouched(const CommandResult& r, int code, const std::string& message,
                            const std::string& target, const std::string& before) {
  EXPECT_EQ(r.exit_code, code) << r.out << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos) << message << "\n" << r.err;
  EXPECT_NE(r.err.find("nothing was written"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_EQ(test::CmpFiles(target, before), "");
}

TEST(RestoreBindingTest, ARangeMovedElsewhereIsRefusedBeforeAnyWrite) {
  PARTALIGN_REQUIRE_DEVICES();
  AppliedImage disk("gpt_512");
  // The primary entry array's range (16 KiB) pointed into partition 1: bytes and xxh64
  // untouched, so only its place is wrong.
  const std::string edited = disk.Edited([](nlohmann::json& j) {
    for (nlohmann::json& r : j["ranges"]) {
      if (r["role"] == "gpt-entries") r["offset_bytes"] = 100 * 512;
    }
  });
  const std::string copy = disk.Copy("copy.img");
  ExpectRefusedUntouched(disk.Restore(edited, copy), kFailure, "does not hold the table it names",
                         copy, disk.applied);
  EXPECT_TRUE(test::FilesIn(disk.dir.File("undo"), ".partalign-backup").empty());
}

TEST(RestoreBindingTest, AMovedRangeOnlyTheWriteUsedIsRefused) {
  PARTALIGN_REQUIRE_DEVICES();
  // DOS: the EBRs of the moved logical partitions have new places, which the saved table does
  // not use: their ranges are checked against what the disk holds there.
  AppliedImage disk("dos_512");
  bool edited_one = false;
  const std::string edited = disk.Edited([&](nlohmann::json& j) {
    for (nlohmann::json& r : j["ranges"]) {
      if (r["role"] == "ebr" && r["old_index"].is_null() && !edited_one) {
        r["offset_bytes"] = 500 * 512;  // inside partition 1, which holds random bytes
        edited_one = true;
      }
    }
  });
  ASSERT_TRUE(edited_one) << test::ReadFile(disk.backup);
  const std::string copy = disk.Copy("copy.img");
  ExpectRefusedUntouched(disk.Restore(edited, copy), kRefused,
                         "is not part of the table the backup holds, and the disk holds neither "
                         "its saved bytes there nor what the apply wrote",
                         copy, disk.applied);
}

TEST(RestoreBindingTest, AnotherImageOfTheSameSizeIsRefused) {
  PARTALIGN_REQUIRE_DEVICES();
  AppliedImage disk("gpt_512");
  struct Other {
    const char* name;
    std::function<void(const std::string&)> make;
    const char* message;
  };
  const std::vector<Other> others = {
      {"dos", [](const std::string& p) { test::SfdiskImage(p, "label: dos\nsize=10M\n", 512); },
       "the disk holds a dos table, the backup a gpt table"},
      {"gpt with other GUIDs",
       [](const std::string& p) {
         test::SfdiskImage(p, test::ApplyLayoutNamed("gpt_512").script, 512);
       },
       "disk GUID: backup "},
      {"a whole-disk filesystem",
       [](const std::string& p) {
         test::RunOrThrow({"mkfs.ext4", "-q", "-F", p});
       },
       "the disk shows no partition table, and its "},
  };
  for (const Other& o : others) {
    SCOPED_TRACE(o.name);
    const std::string target = disk.dir.File("other.img");
    const std::string before = disk.dir.File("other-before.img");
    test::CreateSparseFile(target, kImageBytes);
    o.make(target);
    test::RunOrThrow({"cp", "--sparse=always", target, before});
    ExpectRefusedUntouched(disk.Restore(disk.backup, target), kRefused, o.message, target, before);
    ::unlink(target.c_str());
  }
  EXPECT_TRUE(test::FilesIn(disk.dir.File("undo"), ".partalign-backup").empty());
}

TEST(RestoreBindingTest, TheOwnersDiskIsRestoredEvenWipedAndOldBackupsStillWork) {
  PARTALIGN_REQUIRE_DEVICES();
  AppliedImage disk("gpt_512", /*with_data=*/false);
  ASSERT_FALSE(disk.backup.empty());
  ASSERT_EQ(nlohmann::json::parse(test::ReadFile(disk.backup))
                .value("moves", nlohmann::json::array())
                .size(),
            0u);
  // Wiped: no table signature left; the bytes around the saved ranges tell it is this disk.
  const std::string wiped = disk.Copy("wiped.img");
  test::RunOrThrow({"wipefs", "--all", "--force", "--quiet", wiped});
  ASSERT_EQ(RunCommand({"blkid", "-p", wiped}).exit_code, 2) << "wipefs left a signature";
  CommandResult r = disk.Restore(disk.backup, wiped);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(test::CmpFiles(wiped, disk.original), "");

  // A format version 1 backup (no context): still restores the disk it names by its table...
  const std::string v1 = disk.Edited([](nlohmann::json& j) {
    j["format_version"] = 1;
    j.erase("context");
  });
  const std::string copy = disk.Copy("copy.img");
  r = disk.Restore(v1, copy);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(test::CmpFiles(copy, disk.original), "");
  // ... but cannot tell a wiped disk is the one.
  const std::string wiped_again = disk.Copy("wiped2.img");
  test::RunOrThrow({"wipefs", "--all", "--force", "--quiet", wiped_again});
  const std::string wiped_before = disk.dir.File("wiped2-before.img");
  test::RunOrThrow({"cp", "--sparse=always", wiped_again, wiped_before});
  ExpectRefusedUntouched(disk.Restore(v1, wiped_again), kRefused,
                         "the backup records no bytes around its ranges (format version 1)",
                         wiped_again, wiped_before);
}

}  // namespace
}  // namespace partalign
