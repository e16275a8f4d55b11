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

// The partition of each layout that starts aligned (apply leaves it in place): 10 MiB at
// 32 MiB (GPT, partition 3) or at 30 MiB (DOS, logical partition 7).
uint64_t AlignedPartitionSector(const std::string& layout) {
  return layout.rfind("gpt", 0) == 0 ? 65536 : 61440;
}
constexpr uint64_t kAlignedPartitionSectors = 20480;

// An ext4 (a new UUID each time) written into `image` at `sector` (512-byte sectors).
void PutExt4(const test::TempDir& dir, const std::string& image, uint64_t sector) {
  const std::string fs = dir.File("fs.img");
  test::CreateSparseFile(fs, kAlignedPartitionSectors * 512);
  test::RunOrThrow({"mkfs.ext4", "-q", "-F", fs});
  test::RunOrThrow({"dd", "if=" + fs, "of=" + image, "bs=512", "seek=" + std::to_string(sector),
                    "conv=notrunc,sparse", "status=none"});
  ::unlink(fs.c_str());
}

// What a wipe leaves of a table: a DOS MBR zeroed, or a GPT's both ends (the protective MBR,
// the primary header and entries; the backup entries and header).
void WipeTable(const std::string& image) {
  test::RunOrThrow(
      {"dd", "if=/dev/zero", "of=" + image, "bs=512", "count=34", "conv=notrunc", "status=none"});
  test::RunOrThrow({"dd", "if=/dev/zero", "of=" + image, "bs=512", "count=33",
                    "seek=" + std::to_string(kImageBytes / 512 - 33), "conv=notrunc",
                    "status=none"});
}

enum class Contents {
  kNone,       ///< empty partitions: apply changes the table only
  kData,       ///< random bytes in partition 1: apply moves them
  kFilesystem  ///< an ext4 in the aligned partition, the others empty: the table only
};

// An image partitioned with `layout`, its copy before apply, and the backup apply took.
struct AppliedImage {
  test::TempDir dir;
  std::string image = dir.File("disk.img");
  std::string original = dir.File("original.img");
  std::string applied = dir.File("applied.img");
  std::string backup;

  // kData: random bytes in partition 1, so that a sector written into it would show. The
  // apply then moves them, and restore refuses such a backup (the journal is the way back):
  // without data the apply changes the table only, and its backup restores.
  explicit AppliedImage(const std::string& layout, Contents contents = Contents::kData) {
    test::CreateSparseFile(image, kImageBytes);
    test::SfdiskImage(image, test::ApplyLayoutNamed(layout).script, 512);
    if (contents == Contents::kFilesystem) PutExt4(dir, image, AlignedPartitionSector(layout));
    if (contents == Contents::kData) {
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

// Another disk of the backup's size, made by `make`.
struct Other {
  const char* name;
  std::function<void(const std::string&)> make;
  std::string message;  ///< what the refusal says
};

// The backup of `disk` restored onto `other` (its table wiped first with `wipe`): refused,
// nothing written, `other.message` said. Returns what restore printed.
CommandResult RestoreOnAnother(const AppliedImage& disk, const Other& other, bool wipe) {
  SCOPED_TRACE(other.name);
  const std::string target = disk.dir.File("other.img");
  const std::string before = disk.dir.File("other-before.img");
  test::CreateSparseFile(target, kImageBytes);
  other.make(target);
  if (wipe) WipeTable(target);
  test::RunOrThrow({"cp", "--sparse=always", target, before});
  CommandResult r = disk.Restore(disk.backup, target);
  ExpectRefusedUntouched(r, kRefused, other.message, target, before);
  ::unlink(target.c_str());
  return r;
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
       "it shows no partition table, has no serial or WWN, and none of the "},
  };
  for (const Other& o : others) RestoreOnAnother(disk, o, /*wipe=*/false);
  EXPECT_TRUE(test::FilesIn(disk.dir.File("undo"), ".partalign-backup").empty());
}

// Issue 37 item 4: a disk whose table was wiped is told by what its partitions hold. The
// backup's own disk, wiped, is restored byte for byte; another disk of the same size, wiped
// too, is refused with the disk untouched, whether its partitions lie where the backup's did
// (with a filesystem of another UUID) or elsewhere (the backup's places inside its filesystem).
// The bytes around the ranges are zeros on all of them: they prove nothing.
class RestoreIdentityTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RestoreIdentityTest, AWipedDiskIsRestoredOnlyWhenItIsTheBackupsOwn) {
  PARTALIGN_REQUIRE_DEVICES();
  const std::string layout = GetParam();
  AppliedImage disk(layout, Contents::kFilesystem);
  ASSERT_FALSE(disk.backup.empty());
  const nlohmann::json saved = nlohmann::json::parse(test::ReadFile(disk.backup));
  ASSERT_EQ(saved.value("moves", nlohmann::json::array()).size(), 0u) << "apply moved data";
  ASSERT_EQ(saved["format_version"], 3);

  const std::string wiped = disk.Copy("wiped.img");
  WipeTable(wiped);
  ASSERT_EQ(test::RunCommand({"sfdisk", "-d", wiped}).exit_code, 1) << "a table is left";
  CommandResult r = disk.Restore(disk.backup, wiped);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(test::CmpFiles(wiped, disk.original), "");

  const std::vector<Other> others = {
      {"the same layout, another filesystem",
       [&](const std::string& p) {
         test::SfdiskImage(p, test::ApplyLayoutNamed(layout).script, 512);
         PutExt4(disk.dir, p, AlignedPartitionSector(layout));
       },
       "the backup saw ext4 UUID "},
      {"one partition over the whole disk",
       [&](const std::string& p) {
         test::SfdiskImage(p, "label: " + layout.substr(0, 3) + "\nstart=2048\n", 512);
         test::RunOrThrow({"mkfs.ext4", "-q", "-F", "-E", "offset=1048576", p, "60M"});
       },
       // Where apply put partition 1 (1 MiB): that disk's ext4 starts there.
       "the backup saw no signature there, the disk holds ext4 UUID "},
      {"a fresh disk", [](const std::string&) {}, "none of the "},
  };
  for (const Other& o : others) {
    r = RestoreOnAnother(disk, o, /*wipe=*/true);
    EXPECT_NE(r.err.find("restore needs the backup's table on the disk"), std::string::npos)
        << r.err;
  }
}

INSTANTIATE_TEST_SUITE_P(Labels, RestoreIdentityTest, ::testing::Values("gpt_512", "dos_512"));

TEST(RestoreBindingTest, OldBackupsRestoreADiskThatShowsTheirTableAndNoOtherWiped) {
  PARTALIGN_REQUIRE_DEVICES();
  AppliedImage disk("gpt_512", Contents::kFilesystem);
  ASSERT_FALSE(disk.backup.empty());
  // Format versions 1 (no context) and 2 (no identity) are still read: they restore the disk
  // that shows the table they hold...
  const std::string v2 = disk.Edited([](nlohmann::json& j) {
    j["format_version"] = 2;
    j.erase("identity");
  });
  test::RunOrThrow({"cp", v2, disk.dir.File("v2.partalign-backup")});
  const std::string v1 = disk.Edited([](nlohmann::json& j) {
    j["format_version"] = 1;
    j.erase("identity");
    j.erase("context");
  });
  for (const std::string& old : {disk.dir.File("v2.partalign-backup"), v1}) {
    SCOPED_TRACE(old);
    const std::string copy = disk.Copy("copy.img");
    CommandResult r = disk.Restore(old, copy);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(test::CmpFiles(copy, disk.original), "");
    // ... but a wiped disk, even their own, shows them nothing to tell whose it is: the zeros
    // around their ranges are on every fresh disk.
    const std::string wiped = disk.Copy("wiped.img");
    WipeTable(wiped);
    const std::string wiped_before = disk.dir.File("wiped-before.img");
    test::RunOrThrow({"cp", "--sparse=always", wiped, wiped_before});
    const std::string version = old == v1 ? "1" : "2";
    ExpectRefusedUntouched(disk.Restore(old, wiped), kRefused,
                           "the disk shows no partition table to tell whose it is, and the "
                           "backup (format version " +
                               version +
                               ") records neither a serial or WWN nor what its "
                               "partitions held",
                           wiped, wiped_before);
  }
}

}  // namespace
}  // namespace partalign
