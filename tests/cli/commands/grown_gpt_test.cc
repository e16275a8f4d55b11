// SPDX-License-Identifier: GPL-3.0-or-later
// A GPT disk copied onto a bigger disk (issue 40 item 10): sgdisk makes the table on a small
// image, the partitions get known bytes, then `truncate` makes the image bigger - the backup GPT
// stays where the small disk ended. plan offers the table-only step that moves it to the end,
// apply makes it with a backup, sgdisk -v / sfdisk / parted read the disk without a complaint,
// no partition byte and no entry changed, and restore gives back the old table sectors exactly.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "support/device_test.h"
#include "support/loop_device.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::RunCommand;
using test::RunPartalign;

constexpr uint64_t kSmallBytes = 32ull << 20;  // the disk the table was made on
constexpr uint64_t kBigBytes = 64ull << 20;    // the disk it was copied onto
constexpr uint64_t kSmallSectors = kSmallBytes / 512;
constexpr uint64_t kBigSectors = kBigBytes / 512;

// `count` sectors of `image` from `first`.
std::string Sectors(const std::string& image, uint64_t first, uint64_t count) {
  std::ifstream in(image, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(first * 512));
  std::string bytes(count * 512, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  EXPECT_TRUE(in) << image << " sector " << first;
  return bytes;
}

void WriteAt(const std::string& image, uint64_t offset, const std::string& bytes) {
  std::fstream out(image, std::ios::binary | std::ios::in | std::ios::out);
  out.seekp(static_cast<std::streamoff>(offset));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out) << image;
}

// The partitions' entries as sfdisk reads them (start, size, type, UUID, name, attributes).
nlohmann::json Entries(const std::string& target) {
  nlohmann::json t = test::SfdiskJson(target);
  return t["partitions"];
}

struct GrownGpt {
  test::TempDir dir;
  std::string image = dir.File("disk.img");
  std::string data;  // what partition 1 holds (sectors 2048-4095), and partition 2 its reverse

  GrownGpt() {
    test::CreateSparseFile(image, kSmallBytes);
    CommandResult made =
        RunCommand({"sgdisk", "-n1:2048:4095", "-c1:data", "-n2:4096:20479", "-c2:more", image});
    EXPECT_EQ(made.exit_code, 0) << made.out << made.err;
    for (uint64_t i = 0; i < 2048 * 512; ++i) data.push_back(static_cast<char>((i * 7 + 3) % 251));
    WriteAt(image, 2048 * 512, data);
    WriteAt(image, 4096 * 512, std::string(data.rbegin(), data.rend()));
    // The copy onto a bigger disk: the new sectors read as zeros, the backup stays mid-disk.
    std::filesystem::resize_file(image, kBigBytes);
  }
};

TEST(GrownGptTest, PlanRelocatesTheBackupApplyMakesItAndRestoreUndoesIt) {
  PARTALIGN_REQUIRE_DEVICES();
  GrownGpt disk;
  // The state the test starts from: what gdisk calls a problem.
  CommandResult verify = RunCommand({"sgdisk", "-v", disk.image});
  ASSERT_NE(verify.out.find("doesn't reside"), std::string::npos) << verify.out << verify.err;

  test::LoopDevice loop(disk.image, 512);
  const std::string dev = loop.path();
  const nlohmann::json entries_before = Entries(dev);
  const std::string head_before = Sectors(disk.image, 0, 34);
  const std::string old_backup = Sectors(disk.image, kSmallSectors - 33, 33);
  const std::string tail_before = Sectors(disk.image, kBigSectors - 33, 33);

  // audit says what the disk is.
  CommandResult audit = RunPartalign({"audit", dev});
  EXPECT_EQ(audit.exit_code, 0) << audit.out << audit.err;
  const std::string said = fmt::format(
      "the backup GPT header is at sector {}, but the disk ends at sector {}: a copy of a "
      "smaller disk (or the disk grew); plan relocates the backup GPT to the end as a "
      "table-only step",
      kSmallSectors - 1, kBigSectors - 1);
  EXPECT_NE((audit.out + audit.err).find(said), std::string::npos) << audit.out << audit.err;

  // plan: the step in the text and in the plan file; the partitions stay.
  const std::string plan_file = disk.dir.File("plan.json");
  CommandResult plan = RunPartalign({"plan", dev, "-o", plan_file});
  ASSERT_EQ(plan.exit_code, 0) << plan.out << plan.err;
  const std::string step = fmt::format(
      "table-only: relocate the backup GPT from sector {} to the end of the disk (sector {}); "
      "the usable area then ends at sector {}, not {}",
      kSmallSectors - 1, kBigSectors - 1, kBigSectors - 34, kSmallSectors - 34);
  EXPECT_NE(plan.out.find(step), std::string::npos) << plan.out;
  // libfdisk's own warnings would only repeat the note: not printed.
  EXPECT_EQ(plan.err.find("libfdisk"), std::string::npos) << plan.err;
  nlohmann::json doc = nlohmann::json::parse(test::ReadFile(plan_file));
  ASSERT_TRUE(doc.contains("relocate_backup_gpt")) << doc.dump(2);
  EXPECT_EQ(doc["relocate_backup_gpt"]["from_lba"], kSmallSectors - 1);
  EXPECT_EQ(doc["relocate_backup_gpt"]["to_lba"], kBigSectors - 1);
  EXPECT_EQ(doc["relocate_backup_gpt"]["new_last_usable_lba"], kBigSectors - 34);
  for (const nlohmann::json& a : doc["actions"]) EXPECT_EQ(a["kind"], "none") << a;

  // The dry run shows the step and writes nothing.
  CommandResult dry = RunPartalign({"apply", "--dry-run", plan_file});
  ASSERT_EQ(dry.exit_code, 0) << dry.out << dry.err;
  EXPECT_NE(dry.out.find(step), std::string::npos) << dry.out;
  EXPECT_EQ(Sectors(disk.image, 0, 34), head_before);
  EXPECT_EQ(Sectors(disk.image, kBigSectors - 33, 33), tail_before);

  const std::string backups = disk.dir.File("backups");
  CommandResult apply = RunPartalign({"apply", "--yes", "--backup-dir", backups, plan_file});
  ASSERT_EQ(apply.exit_code, 0) << apply.out << apply.err;
  EXPECT_NE(apply.out.find("Verified:"), std::string::npos) << apply.out;

  // The oracles read a sound disk, without a warning.
  verify = RunCommand({"sgdisk", "-v", dev});
  EXPECT_EQ(verify.exit_code, 0);
  EXPECT_NE(verify.out.find("No problems found"), std::string::npos) << verify.out;
  CommandResult dump = RunCommand({"sfdisk", "-d", dev});
  EXPECT_EQ(dump.exit_code, 0);
  EXPECT_EQ(dump.err, "");
  EXPECT_NE(dump.out.find(fmt::format("last-lba: {}", kBigSectors - 34)), std::string::npos)
      << dump.out;
  CommandResult parted = RunCommand({"parted", "-s", dev, "unit", "s", "print"});
  EXPECT_EQ(parted.exit_code, 0);
  EXPECT_EQ(parted.err, "");
  EXPECT_EQ(parted.out.find("Warning"), std::string::npos) << parted.out;
  // audit has nothing to say about the backup any more.
  audit = RunPartalign({"audit", dev});
  EXPECT_EQ((audit.out + audit.err).find("backup GPT"), std::string::npos) << audit.out;

  // What must not change: every entry, every partition byte, the gap between them.
  EXPECT_EQ(Entries(dev), entries_before);
  EXPECT_EQ(Sectors(disk.image, 2048, 2048), disk.data);
  EXPECT_EQ(Sectors(disk.image, 4096, 2048), std::string(disk.data.rbegin(), disk.data.rend()));
  // The old backup, left mid-disk, is cleared: no reader finds a stale copy.
  EXPECT_EQ(Sectors(disk.image, kSmallSectors - 33, 33), std::string(33 * 512, '\0'));
  EXPECT_EQ(Sectors(disk.image, kBigSectors - 1, 1).substr(0, 8), "EFI PART");

  // restore puts the old table back, byte for byte: the first 34 sectors, the old backup,
  // and the end of the disk zero again.
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(backups)) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  CommandResult restore =
      RunPartalign({"restore", "--yes", "--backup-dir", disk.dir.File("undo"), files[0]});
  ASSERT_EQ(restore.exit_code, 0) << restore.out << restore.err;
  EXPECT_EQ(Sectors(disk.image, 0, 34), head_before);
  EXPECT_EQ(Sectors(disk.image, kSmallSectors - 33, 33), old_backup);
  EXPECT_EQ(Sectors(disk.image, kBigSectors - 33, 33), tail_before);
  EXPECT_EQ(Sectors(disk.image, 2048, 2048), disk.data);
}

TEST(GrownGptTest, TheRelocationGoesWithAMoveOfData) {
  PARTALIGN_REQUIRE_DEVICES();
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kSmallBytes);
  // Partition 1 at sector 2047 (misaligned) holds an ext4: plan moves it up one sector.
  CommandResult made =
      RunCommand({"sfdisk", "-q", image},
                 "label: gpt\nfirst-lba: 34\nstart=2047,size=8192\nstart=20480,size=8192\n");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  CommandResult fs = RunCommand(
      {"mkfs.ext4", "-q", "-F", "-E", fmt::format("offset={}", 2047 * 512), image, "4M"});
  ASSERT_EQ(fs.exit_code, 0) << fs.err;
  std::filesystem::resize_file(image, kBigBytes);
  test::LoopDevice loop(image, 512);
  const std::string plan_file = dir.File("plan.json");
  CommandResult plan = RunPartalign({"plan", loop.path(), "-o", plan_file});
  ASSERT_EQ(plan.exit_code, 0) << plan.out << plan.err;
  EXPECT_NE(plan.out.find("1 move data"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("table-only: relocate the backup GPT"), std::string::npos) << plan.out;
  CommandResult apply = RunPartalign({"apply", "--yes", "--backup-dir", dir.File("backups"),
                                      "--journal-dir", dir.File("j"), plan_file});
  ASSERT_EQ(apply.exit_code, 0) << apply.out << apply.err;
  CommandResult verify = RunCommand({"sgdisk", "-v", loop.path()});
  EXPECT_NE(verify.out.find("No problems found"), std::string::npos) << verify.out;
  nlohmann::json t = test::SfdiskJson(loop.path());
  EXPECT_EQ(t["lastlba"], kBigSectors - 34) << t;
  EXPECT_EQ(t["partitions"][0]["start"], 2048) << t;
  EXPECT_EQ(t["partitions"][1]["start"], 20480) << t;
  // The filesystem, at its new place, is clean.
  const std::string moved = dir.File("p1.img");
  {
    std::ofstream out(moved, std::ios::binary);
    const std::string bytes = Sectors(image, 2048, 8192);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  CommandResult fsck = RunCommand({"e2fsck", "-fn", moved});
  EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
  EXPECT_EQ(Sectors(image, kSmallSectors - 33, 33), std::string(33 * 512, '\0'));
}

TEST(GrownGptTest, ADosCopyOntoABiggerDiskSaysWhereItsNewSpaceIs) {
  PARTALIGN_REQUIRE_DEVICES();
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kSmallBytes);
  CommandResult made = RunCommand({"sfdisk", "-q", image},
                                  "label: dos\nstart=2048,size=8192\nstart=20480,size=8192\n");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  std::filesystem::resize_file(image, kBigBytes);
  test::LoopDevice loop(image, 512);
  const std::string mbr = Sectors(image, 0, 1);
  CommandResult plan = RunPartalign({"plan", loop.path(), "-o", dir.File("plan.json")});
  ASSERT_EQ(plan.exit_code, 0) << plan.out << plan.err;
  EXPECT_NE(plan.out.find(fmt::format("free after the last partition: sectors 28672-{} (50 MiB)",
                                      kBigSectors - 1)),
            std::string::npos)
      << plan.out;
  EXPECT_EQ(Sectors(image, 0, 1), mbr);  // plan writes nothing
}

TEST(GrownGptTest, DamagedBackupStaysRefused) {
  PARTALIGN_REQUIRE_DEVICES();
  GrownGpt disk;
  // Not only misplaced: one byte of the backup header's CRC-covered fields is changed.
  std::string header = Sectors(disk.image, kSmallSectors - 1, 1);
  header[40] = static_cast<char>(header[40] ^ 0x5a);
  WriteAt(disk.image, (kSmallSectors - 1) * 512, header);
  test::LoopDevice loop(disk.image, 512);
  const std::string head_before = Sectors(disk.image, 0, 34);
  CommandResult plan = RunPartalign({"plan", loop.path(), "-o", disk.dir.File("plan.json")});
  EXPECT_NE(plan.exit_code, 0) << plan.out;
  EXPECT_NE(plan.err.find("partalign changes only a sound table"), std::string::npos) << plan.err;
  EXPECT_FALSE(std::filesystem::exists(disk.dir.File("plan.json")));
  EXPECT_EQ(Sectors(disk.image, 0, 34), head_before);
}

}  // namespace
}  // namespace partalign
