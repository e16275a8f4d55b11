// SPDX-License-Identifier: GPL-3.0-or-later
// partalign snapshot, verify and translate on a disk that moves between a 4K-translating USB
// bridge and a SATA port: one image file attached to loop devices at 4096 and at 512 bytes per
// sector (docs/migration.md). Oracles: the kernel (BLKPG, sysfs), sfdisk, libblkid, e2fsck,
// fsck.vfat, the files themselves, and sfdisk's own recalculation of a `sector-size:` dump.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

#include "support/device_test.h"
#include "support/disk_invariant.h"
#include "support/loop_device.h"
#include "support/moved_disk.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CheckFiles;
using test::CmpFiles;
using test::CommandResult;
using test::FileSet;
using test::MakeFiles;
using test::MakeFilesystemWithFiles;
using test::MovedDisk;
using test::RunCommand;
using test::RunPartalign;

const std::vector<std::string> kMkfsExt4{"mkfs.ext4", "-q", "-F"};
const std::vector<std::string> kMkfsVfat{"mkfs.vfat"};

// 64 MiB, partitioned behind a 4K bridge: ext4 (1-21 MiB) and vfat (21-41 MiB).
constexpr const char* kGpt4k =
    "label: gpt\n"
    "start=256, size=5120, name=\"data\"\n"
    "start=5376, size=5120, type=EBD0A0A2-B9E5-4433-87C0-68B6B72699C7, name=\"share\"\n";

// The same with DOS and logical partitions: p1 ext4, extended 21-61 MiB holding p5 ext4 (EBR at
// 21 MiB) and p6 vfat (EBR at 41 MiB).
constexpr const char* kDos4k =
    "label: dos\n"
    "start=256, size=5120, type=83\n"
    "start=5376, size=10240, type=5\n"
    "start=5632, size=4864, type=83\n"
    "start=10752, size=4864, type=c\n";

nlohmann::json ParseJson(const CommandResult& r) {
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
  return j;
}

std::map<std::string, std::string> Blkid(const std::string& node) {
  CommandResult r = RunCommand({"blkid", "-p", "-o", "export", node});
  std::map<std::string, std::string> tags;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    size_t eq = line.find('=');
    if (eq != std::string::npos) tags[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return tags;
}

// Each partition's start and size in bytes, as sfdisk reads `target` (extended ones included).
std::vector<std::pair<uint64_t, uint64_t>> SfdiskBytes(const std::string& target) {
  nlohmann::json t = test::SfdiskJson(target);
  const uint64_t ss = t["sectorsize"];
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (const nlohmann::json& p : t["partitions"]) {
    out.emplace_back(p["start"].get<uint64_t>() * ss, p["size"].get<uint64_t>() * ss);
  }
  return out;
}

// sfdisk's own translation (Debian 12's 2.38.1 recalculates a dump made with another sector
// size) applied to a copy of `image` taken before partalign's, attached with `sector_size`:
// "" when it is byte for byte the image partalign translated, else cmp's answer.
std::string CompareWithSfdisk(const MovedDisk& disk, const std::string& before,
                              const std::string& dump, unsigned sector_size) {
  const std::string oracle = disk.File("sfdisk-oracle.img");
  test::RunOrThrow({"cp", "--sparse=always", before, oracle});
  {
    test::LoopDevice loop(oracle, sector_size);
    CommandResult r = RunCommand({"sfdisk", "--no-reread", "--no-tell-kernel", loop.path()}, dump);
    if (r.exit_code != 0) return "sfdisk failed: " + r.out + r.err;
    if (r.err.find("recalculated") == std::string::npos) {
      return "sfdisk did not say it recalculated the dump: " + r.err;
    }
  }
  // sfdisk leaves the old table's sectors it does not reuse as they were (a stale backup GPT
  // for the old sector size); partalign clears them. Every other byte must be the same.
  const std::string theirs = test::ReadFile(oracle);
  const std::string ours = test::ReadFile(disk.image());
  const std::string old_bytes = test::ReadFile(before);
  if (theirs.size() != ours.size() || ours.size() != old_bytes.size()) return "sizes differ";
  for (size_t i = 0; i < ours.size(); ++i) {
    if (theirs[i] == ours[i]) continue;
    if (ours[i] == 0 && theirs[i] == old_bytes[i]) continue;  // stale old table, cleared
    return "byte " + std::to_string(i) + " differs from sfdisk's and is not a cleared stale one";
  }
  return "";
}

bool HasChange(const nlohmann::json& verify, const std::string& field, const nlohmann::json& before,
               const nlohmann::json& after) {
  for (const nlohmann::json& c : verify["changes"]) {
    if (c["field"] == field && c["before"] == before && c["after"] == after) return true;
  }
  return false;
}

TEST(TranslateTest, GptMovedFrom4096To512IsTranslatedAndEveryFileSurvives) {
  PARTALIGN_REQUIRE_DEVICES();
  MovedDisk disk(kGpt4k, 4096);
  const FileSet ext4_files = MakeFiles("ext4");
  const FileSet vfat_files = MakeFiles("vfat");
  MakeFilesystemWithFiles(kMkfsExt4, disk.loop().PartitionPath(1), disk.File("m1"), ext4_files);
  MakeFilesystemWithFiles(kMkfsVfat, disk.loop().PartitionPath(2), disk.File("m2"), vfat_files);
  const std::map<std::string, std::string> ext4_tags = Blkid(disk.loop().PartitionPath(1));
  const std::vector<std::pair<uint64_t, uint64_t>> places = SfdiskBytes(disk.device());
  const std::string dump = RunCommand({"sfdisk", "-d", disk.device()}).out;
  const std::string snapshot = disk.File("usb.partalign-snapshot");
  CommandResult snap = RunPartalign({"snapshot", disk.device(), "-o", snapshot});
  ASSERT_EQ(snap.exit_code, 0) << snap.out << snap.err;

  // The disk moves to a SATA port: 512-byte sectors; nothing sees its partitions.
  disk.Reattach(512, /*partitions=*/false);
  const std::string before = disk.Copy("before.img");
  CommandResult verify = RunPartalign({"verify", disk.device(), "--against", snapshot, "--json"});
  ASSERT_EQ(verify.exit_code, 2) << verify.out << verify.err;
  nlohmann::json v = ParseJson(verify);
  EXPECT_TRUE(v["same_disk"].get<bool>());
  EXPECT_EQ(v["matched_by"], "table_guids");
  EXPECT_TRUE(HasChange(v, "logical_sector_size", 4096, 512)) << v["changes"].dump(1);
  EXPECT_EQ(v["actions"], nlohmann::json::array({"translate"}));

  CommandResult dry = RunPartalign({"translate", disk.device(), "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.out << dry.err;
  EXPECT_NE(dry.out.find("Dry run: nothing was written."), std::string::npos);
  EXPECT_EQ(CmpFiles(disk.image(), before), "");

  const std::string backups = disk.File("backups");
  CommandResult t = RunPartalign({"translate", disk.device(), "--yes", "--backup-dir", backups});
  ASSERT_EQ(t.exit_code, 0) << t.out << t.err;
  EXPECT_EQ(CompareWithSfdisk(disk, before, dump, 512), "");
  // Every partition where its bytes were, nothing else changed (the table read at 4096 bytes
  // a sector before, 512 after).
  test::DiskInvariantOptions invariant;
  invariant.before_sector_size = 4096;
  invariant.after_sector_size = 512;
  for (const std::string& violation :
       test::DiskInvariantViolations(before, disk.device(), invariant)) {
    ADD_FAILURE() << violation;
  }

  // The kernel (BLKPG), sfdisk and libblkid see the partitions at the same byte offsets.
  EXPECT_EQ(SfdiskBytes(disk.device()), places);
  for (int n : {1, 2}) {
    EXPECT_EQ(test::KernelStartSize(disk.loop(), n),
              std::make_pair(places[n - 1].first / 512, places[n - 1].second / 512))
        << "partition " << n;
  }
  const std::map<std::string, std::string> tags = Blkid(disk.loop().PartitionPath(1));
  EXPECT_EQ(tags.at("TYPE"), "ext4");
  EXPECT_EQ(tags.at("UUID"), ext4_tags.at("UUID"));
  CommandResult e2fsck = RunCommand({"e2fsck", "-fn", disk.loop().PartitionPath(1)});
  EXPECT_EQ(e2fsck.exit_code, 0) << e2fsck.out << e2fsck.err;
  CommandResult fsck = RunCommand({"fsck.vfat", "-n", disk.loop().PartitionPath(2)});
  EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
  EXPECT_EQ(CheckFiles(disk.loop().PartitionPath(1), disk.File("m1"), ext4_files), "");
  EXPECT_EQ(CheckFiles(disk.loop().PartitionPath(2), disk.File("m2"), vfat_files), "");

  verify = RunPartalign({"verify", disk.device(), "--against", snapshot, "--json"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  v = ParseJson(verify);
  EXPECT_EQ(v["actions"], nlohmann::json::array({"none"}));
  EXPECT_TRUE(HasChange(v, "table_sector_size", 4096, 512)) << v["changes"].dump(1);

  // The backup puts the table written for 4096-byte sectors back, byte for byte.
  std::vector<std::string> files = test::FilesIn(backups, ".partalign-backup");
  ASSERT_EQ(files.size(), 1u);
  CommandResult restore =
      RunPartalign({"restore", "--yes", "--backup-dir", disk.File("undo"), files[0]});
  ASSERT_EQ(restore.exit_code, 0) << restore.out << restore.err;
  EXPECT_EQ(CmpFiles(disk.image(), before), "");
}

TEST(TranslateTest, DosWithLogicalPartitionsRoundTripsAndKeepsEveryByte) {
  PARTALIGN_REQUIRE_DEVICES();
  MovedDisk disk(kDos4k, 4096);
  const FileSet files1 = MakeFiles("p1");
  const FileSet files5 = MakeFiles("p5");
  const FileSet files6 = MakeFiles("p6");
  MakeFilesystemWithFiles(kMkfsExt4, disk.loop().PartitionPath(1), disk.File("m1"), files1);
  MakeFilesystemWithFiles(kMkfsExt4, disk.loop().PartitionPath(5), disk.File("m5"), files5);
  MakeFilesystemWithFiles(kMkfsVfat, disk.loop().PartitionPath(6), disk.File("m6"), files6);
  const std::vector<std::pair<uint64_t, uint64_t>> places = SfdiskBytes(disk.device());
  const std::string dump = RunCommand({"sfdisk", "-d", disk.device()}).out;
  const std::string original = disk.Copy("original.img");

  disk.Reattach(512, /*partitions=*/false);
  // A DOS table says nothing about its sector size: translate finds it where the filesystems are.
  CommandResult t =
      RunPartalign({"translate", disk.device(), "--yes", "--backup-dir", disk.File("b1")});
  ASSERT_EQ(t.exit_code, 0) << t.out << t.err;
  EXPECT_EQ(CompareWithSfdisk(disk, original, dump, 512), "");
  EXPECT_EQ(SfdiskBytes(disk.device()), places);
  for (int n : {1, 5, 6}) {
    const auto& [start, size] = places[n == 1 ? 0 : n - 3];
    EXPECT_EQ(test::KernelStartSize(disk.loop(), n), std::make_pair(start / 512, size / 512))
        << "partition " << n;
  }
  for (int n : {1, 5}) {
    CommandResult e2fsck = RunCommand({"e2fsck", "-fn", disk.loop().PartitionPath(n)});
    EXPECT_EQ(e2fsck.exit_code, 0) << e2fsck.out << e2fsck.err;
  }
  CommandResult fsck = RunCommand({"fsck.vfat", "-n", disk.loop().PartitionPath(6)});
  EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
  EXPECT_EQ(CheckFiles(disk.loop().PartitionPath(1), disk.File("m1"), files1), "");
  EXPECT_EQ(CheckFiles(disk.loop().PartitionPath(5), disk.File("m5"), files5), "");
  EXPECT_EQ(CheckFiles(disk.loop().PartitionPath(6), disk.File("m6"), files6), "");

  // And back behind the 4K bridge: the same image, byte for byte.
  disk.Reattach(4096, /*partitions=*/false);
  t = RunPartalign({"translate", disk.device(), "--yes", "--backup-dir", disk.File("b2")});
  ASSERT_EQ(t.exit_code, 0) << t.out << t.err;
  EXPECT_EQ(SfdiskBytes(disk.device()), places);
  for (const auto& [start, size] : places) {
    EXPECT_EQ(test::DigestBytes(disk.image(), start, size),
              test::DigestBytes(original, start, size))
        << "partition at byte " << start;
  }
  EXPECT_EQ(CmpFiles(disk.image(), original), "");
}

// Each refusal: exit 3, a line naming the reason, not a byte of the image changed.
class TranslateRefusalTest : public ::testing::Test {
 protected:
  void ExpectRefused(const std::vector<std::string>& args, const std::string& image,
                     const std::string& reason) {
    const std::string digest = test::DigestBytes(image, 0, std::filesystem::file_size(image));
    CommandResult r = RunPartalign(args);
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_NE(r.err.find(reason), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("nothing was written"), std::string::npos) << r.err;
    EXPECT_EQ(test::DigestBytes(image, 0, std::filesystem::file_size(image)), digest);
  }
};

TEST_F(TranslateRefusalTest, FilesystemsThatNeedSmallSectorsAreNotMovedTo4096) {
  PARTALIGN_REQUIRE_DEVICES();
  MovedDisk disk("label: gpt\nstart=2048, size=20480\nstart=22528, size=20480\n", 512);
  MakeFilesystemWithFiles(kMkfsVfat, disk.loop().PartitionPath(1), disk.File("m1"), MakeFiles("a"));
  MakeFilesystemWithFiles({"mkfs.ext4", "-q", "-F", "-b", "1024"}, disk.loop().PartitionPath(2),
                          disk.File("m2"), MakeFiles("b"));
  disk.Reattach(4096, /*partitions=*/false);
  ExpectRefused({"translate", disk.device(), "--yes", "--backup-dir", disk.File("b")}, disk.image(),
                "partition 1: its vfat filesystem has 512-byte sectors");
  CommandResult r = RunPartalign({"translate", disk.device(), "--dry-run"});
  EXPECT_NE(r.err.find("partition 2: its ext4 filesystem has 1024-byte blocks"), std::string::npos)
      << r.err;
  EXPECT_TRUE(test::FilesIn(disk.File("b"), ".partalign-backup").empty());
}

TEST_F(TranslateRefusalTest, StartsThatAreNotWhole4096ByteSectorsAreRefused) {
  PARTALIGN_REQUIRE_DEVICES();
  MovedDisk disk("label: dos\nstart=63, size=20417\nstart=20480, size=20480\n", 512);
  disk.Reattach(4096, /*partitions=*/false);
  ExpectRefused({"translate", disk.device(), "--yes"}, disk.image(),
                "partition 1: its start (sector 63 of 512 bytes, byte 32256) is not a multiple "
                "of 4096 bytes");
}

TEST_F(TranslateRefusalTest, AGptHeaderOutvotesAWrongFromSectorSize) {
  PARTALIGN_REQUIRE_DEVICES();
  MovedDisk disk(kGpt4k, 4096);
  disk.Reattach(512, /*partitions=*/false);
  ExpectRefused({"translate", disk.device(), "--from-sector-size", "2048", "--yes"}, disk.image(),
                "GPT header found at byte 4096");
}

TEST_F(TranslateRefusalTest, AnImageInUseByALoopDeviceIsRefused) {
  PARTALIGN_REQUIRE_DEVICES();
  MovedDisk disk(kGpt4k, 4096);
  // The image file itself, while a loop device still has it attached: another writer.
  ExpectRefused({"translate", disk.image(), "--sector-size", "512", "--yes"}, disk.image(),
                "in use");
}

TEST_F(TranslateRefusalTest, DosBeyondTwoTiBIn512ByteSectorsIsRefused) {
  // An image file: no root needed. 3 TiB, sparse, one DOS partition made behind a 4K bridge.
  test::TempDir dir;
  const std::string image = dir.File("big.img");
  test::CreateSparseFile(image, 3ull << 40);
  test::SfdiskImage(image, "label: dos\nstart=256, size=805306000, type=83\n", 4096);
  struct stat st_before {};
  ASSERT_EQ(::stat(image.c_str(), &st_before), 0);
  const std::string head = test::DigestBytes(image, 0, 1 << 20);
  const std::string tail = test::DigestBytes(image, (3ull << 40) - (1 << 20), 1 << 20);
  CommandResult r = RunPartalign({"translate", image, "--sector-size", "512", "--from-sector-size",
                                  "4096", "--yes", "--backup-dir", dir.File("b")});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("a DOS table cannot hold them (2 TiB at most with 512-byte sectors); "
                       "convert the table to GPT first where it is read right"),
            std::string::npos)
      << r.err;
  struct stat st_after {};
  ASSERT_EQ(::stat(image.c_str(), &st_after), 0);
  EXPECT_EQ(st_after.st_mtim.tv_sec, st_before.st_mtim.tv_sec);
  EXPECT_EQ(st_after.st_mtim.tv_nsec, st_before.st_mtim.tv_nsec);
  EXPECT_EQ(test::DigestBytes(image, 0, 1 << 20), head);
  EXPECT_EQ(test::DigestBytes(image, (3ull << 40) - (1 << 20), 1 << 20), tail);
}

TEST(TranslateTest, ATableWrittenForTheDiskSectorSizeIsLeftAlone) {
  PARTALIGN_REQUIRE_DEVICES();
  MovedDisk disk(kGpt4k, 4096);
  const std::string before = disk.Copy("before.img");
  CommandResult r = RunPartalign({"translate", disk.device(), "--yes"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("nothing to translate"), std::string::npos) << r.out;
  EXPECT_EQ(CmpFiles(disk.image(), before), "");
}

}  // namespace
}  // namespace partalign
