// SPDX-License-Identifier: GPL-3.0-or-later
// Issue #30 items 4 and 8: every command verify and translate print as advice is run here,
// word for word (RunAdvice: through sh, as a person pastes it), in the situation that printed
// it, and does what it says: plan after a bridge, an entry put back with sfdisk, translate
// with --from-sector-size, a start moved where the disk has 512-byte sectors, a DOS table
// converted to GPT with sgdisk, a vfat partition wiped and made anew, and an NTFS partition
// translated with --accept (read afterwards with ntfs-3g). verify says up front when translate
// would refuse, and what to do instead. Image files where they suffice, loop devices (root)
// where a disk must change its sector size.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <regex>

#include <fmt/format.h>

#include "support/advice.h"
#include "support/device_test.h"
#include "support/ext4_image.h"
#include "support/loop_device.h"
#include "support/mount_point.h"
#include "support/moved_disk.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/sfdisk.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::AdviceIn;
using test::CommandResult;
using test::FileSet;
using test::MovedDisk;
using test::RunAdvice;
using test::RunCommand;
using test::RunPartalign;

// 4096-byte blocks: on these small partitions mke2fs would pick 1024, which no disk with
// 4096-byte sectors mounts (translate refuses it, rightly).
const std::vector<std::string> kMkfsExt4{"mkfs.ext4", "-q", "-F", "-b", "4096"};
const std::vector<std::string> kMkfsVfat{"mkfs.vfat"};

CommandResult Expect(const std::vector<std::string>& args, int expected) {
  CommandResult r = RunPartalign(args);
  EXPECT_EQ(r.exit_code, expected) << test::Describe(args, r);
  return r;
}

nlohmann::json Json(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << text;
  return j;
}

// After a bridge's topology: verify asks for plan, and the plan it names changes something.
TEST(MigrateAdviceTest, VerifyNamesThePlanThatRealignsTheDisk) {
  test::TempDir dir;
  const std::string image = dir.File("bridge.img");
  test::CreateSparseFile(image, 256ull << 20);
  // Where parted puts partitions behind the JMicron bridge: multiples of 65535 sectors.
  ASSERT_EQ(test::WriteWithSfdisk(image,
                                  "label: gpt\nstart=65535, size=131070\n"
                                  "start=196605, size=131070\n")
                .exit_code,
            0);
  Expect({"snapshot", image, "--assume", "usb-jmicron-0xffff", "-o", dir.File("s")}, 0);
  CommandResult v = Expect({"verify", image, "--against", dir.File("s")}, 2);
  const std::string plan = AdviceIn(v.out, "action: plan: [^\n]*'(partalign plan [^']+)' says");
  EXPECT_EQ(plan, fmt::format("partalign plan {}", image));
  CommandResult p = RunAdvice(plan + " --json", dir.path());
  ASSERT_EQ(p.exit_code, 0) << p.out << p.err;
  for (const nlohmann::json& a : Json(p.out)["actions"]) {
    EXPECT_NE(a["kind"], "none") << a.dump();
    EXPECT_EQ(a["new_start_sector"].get<uint64_t>() % 2048, 0u) << a.dump();
  }
}

// A partition deleted since the snapshot, its data still in place: verify names the sfdisk
// command that puts its entry back as it was; run, the partition and its files are back.
TEST(MigrateAdviceTest, VerifyPutsADeletedEntryBackWithSfdisk) {
  test::TempDir dir;
  const std::string image = dir.File("gpt.img");
  test::CreateSparseFile(image, 128ull << 20);
  ASSERT_EQ(test::WriteWithSfdisk(image,
                                  "label: gpt\nstart=2048, size=40960\n"
                                  "start=43008, size=81920, name=\"data\"\n"
                                  "start=124928, size=40960\n")
                .exit_code,
            0);
  const FileSet files = test::MakeFiles("entry");
  test::MakeExt4At(image, 43008, 81920, files, dir, "root");
  const nlohmann::json before = test::SfdiskJson(image)["partitions"][1];
  Expect({"snapshot", image, "-o", dir.File("s")}, 0);
  test::RunOrThrow({"sfdisk", "--quiet", "--delete", image, "2"});
  CommandResult v = Expect({"verify", image, "--against", dir.File("s")}, 0);
  const std::string command = AdviceIn(v.out, "rather than creating a new one: (echo [^\n]+)\n");
  EXPECT_NE(command.find(fmt::format("| sfdisk -N 2 {}", image)), std::string::npos) << command;
  CommandResult r = RunAdvice(command, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const nlohmann::json after = test::SfdiskJson(image)["partitions"][1];
  for (const char* key : {"node", "start", "size", "type", "uuid", "name"}) {
    EXPECT_EQ(after[key], before[key]) << key;
  }
  EXPECT_EQ(test::CheckExt4At(image, 43008, 81920, files, dir), "");
  CommandResult again = Expect({"verify", image, "--against", dir.File("s")}, 0);
  EXPECT_EQ(again.out.find("No partition 2 any more"), std::string::npos) << again.out;
}

// A DOS table without filesystems says nothing of its sector size: written for 4096 and read
// at 512, its entries fit the disk either way, so translate takes it for the disk's own and
// names the --from-sector-size that translates it; run, it does.
TEST(MigrateAdviceTest, TranslateNamesFromSectorSizeWhenTheTableSaysNothing) {
  test::TempDir dir;
  const std::string image = dir.File("dos4k.img");
  test::CreateSparseFile(image, 128ull << 20);
  test::SfdiskImage(image, "label: dos\nstart=256, size=5120, type=83\n", 4096);
  CommandResult t = Expect({"translate", image, "--dry-run"}, 0);
  EXPECT_NE(t.out.find("nothing to translate"), std::string::npos) << t.out;
  const std::string command =
      AdviceIn(t.out, "'(partalign translate --from-sector-size 4096 [^']+)' translates it");
  EXPECT_EQ(command, fmt::format("partalign translate --from-sector-size 4096 {}", image));
  CommandResult r = RunAdvice(command + " --yes --backup-dir b", dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  nlohmann::json table = test::SfdiskJson(image);
  EXPECT_EQ(table["partitions"][0]["start"], 2048);
  EXPECT_EQ(table["partitions"][0]["size"], 40960);
}

// A start that no 4096-byte sector addresses: translate says to move it first where the disk
// has 512-byte sectors with partalign plan; done, translate then keeps every file.
TEST(MigrateAdviceTest, TranslateNamesThePlanThatMovesAStartFirst) {
  test::TempDir dir;
  const std::string image = dir.File("dos63.img");
  test::CreateSparseFile(image, 128ull << 20);
  ASSERT_EQ(test::WriteWithSfdisk(image, "label: dos\nstart=63, size=100000, type=83\n").exit_code,
            0);
  const FileSet files = test::MakeFiles("start63");
  test::MakeExt4At(image, 63, 100000, files, dir, "root");
  const std::vector<std::string> to4k{"translate",          image, "--sector-size", "4096",
                                      "--from-sector-size", "512"};
  std::vector<std::string> dry = to4k;
  dry.push_back("--dry-run");
  CommandResult t = Expect(dry, 3);
  const std::string plan = AdviceIn(t.err, "sectors \\('(partalign plan)' there puts");
  EXPECT_NE(t.err.find("move it first where the disk has 512-byte sectors"), std::string::npos)
      << t.err;
  CommandResult p = RunAdvice(plan + " -o plan.json " + image, dir.path());
  ASSERT_EQ(p.exit_code, 0) << p.out << p.err;
  CommandResult a = RunAdvice("partalign apply plan.json --yes --backup-dir backups", dir.path());
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  std::vector<std::string> write = to4k;
  write.insert(write.end(), {"--yes", "--backup-dir", dir.File("b")});
  Expect(write, 0);
  // The table is for 4096-byte sectors now; sfdisk prints its entries as they are.
  const uint64_t start_4k = test::SfdiskJson(image)["partitions"][0]["start"];
  EXPECT_EQ(start_4k * 4096 % (1 << 20), 0u);  // where plan put it: on 1 MiB
  EXPECT_EQ(test::CheckExt4At(image, start_4k * 4096 / 512, 100000, files, dir), "");
}

// A DOS table past 2 TiB in 512-byte sectors: translate names sgdisk --mbrtogpt where the table
// is read right; done, translate makes the GPT for 512-byte sectors at the same byte offsets.
TEST(MigrateAdviceTest, TranslateNamesTheGptConversionADosTableNeeds) {
  PARTALIGN_REQUIRE_DEVICES();
  test::TempDir dir;
  const std::string image = dir.File("big.img");
  test::CreateSparseFile(image, 3ull << 40);
  test::SfdiskImage(image, "label: dos\nstart=256, size=805306000, type=83\n", 4096);
  CommandResult t = Expect(
      {"translate", image, "--sector-size", "512", "--from-sector-size", "4096", "--dry-run"}, 3);
  const std::string convert = AdviceIn(t.err, "\\((sgdisk --mbrtogpt DEVICE)\\)");
  {
    test::LoopDevice loop(image, 4096);
    CommandResult c =
        RunAdvice(std::regex_replace(convert, std::regex("DEVICE"), loop.path()), dir.path());
    ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  }
  Expect({"translate", image, "--sector-size", "512", "--from-sector-size", "4096", "--yes",
          "--backup-dir", dir.File("b")},
         0);
  nlohmann::json table = test::SfdiskJson(image);
  EXPECT_EQ(table["label"], "gpt");
  EXPECT_EQ(table["partitions"][0]["start"], 2048);
  EXPECT_EQ(table["partitions"][0]["size"], 805306000ull * 8);
}

// vfat made with 512-byte sectors, the disk now at 4096: verify says translate refuses and
// what to do instead; translate says why. Both ways out work: the disk at 512 again is as it
// was, and wiping the vfat there lets translate through, after which it is made anew.
TEST(MigrateAdviceTest, VfatThatCannotMoveTo4096IsNotAdvisedForTranslate) {
  PARTALIGN_REQUIRE_DEVICES();
  MovedDisk disk("label: gpt\nstart=2048, size=20480\nstart=22528, size=20480\n", 512);
  const FileSet vfat = test::MakeFiles("vfat");
  const FileSet ext4 = test::MakeFiles("ext4");
  test::MakeFilesystemWithFiles(kMkfsVfat, disk.loop().PartitionPath(1), disk.File("m1"), vfat);
  test::MakeFilesystemWithFiles(kMkfsExt4, disk.loop().PartitionPath(2), disk.File("m2"), ext4);
  Expect({"snapshot", disk.device(), "-o", disk.File("s")}, 0);
  disk.Reattach(4096, /*partitions=*/false);

  CommandResult v = Expect({"verify", disk.device(), "--against", disk.File("s"), "--json"}, 2);
  const nlohmann::json j = Json(v.out);
  EXPECT_EQ(j["actions"], nlohmann::json::array({"translate"}));
  const std::string reason = j["action_reasons"][0];
  EXPECT_NE(reason.find(fmt::format("'partalign translate {}' refuses it: partition 1: its vfat",
                                    disk.device())),
            std::string::npos)
      << reason;
  EXPECT_NE(reason.find("Instead: use the disk where it has 512-byte sectors"), std::string::npos)
      << reason;
  EXPECT_EQ(j["translate_refusals"].size(), 1u);
  CommandResult refused = Expect({"translate", disk.device(), "--dry-run"}, 3);
  EXPECT_NE(refused.err.find("Keep using the disk where it has 512-byte sectors, or there copy "
                             "its files elsewhere and wipe it (wipefs -a on the partition), then "
                             "translate and make it anew (mkfs.vfat) on the 4096-byte disk"),
            std::string::npos)
      << refused.err;

  // The disk where it has 512-byte sectors: nothing to do, every file there.
  disk.Reattach(512, /*partitions=*/true);
  Expect({"verify", disk.device(), "--against", disk.File("s")}, 0);
  EXPECT_EQ(test::CheckFiles(disk.loop().PartitionPath(1), disk.File("m1"), vfat), "");
  // Or: the files kept elsewhere (`vfat`), the vfat wiped there, translated at 4096, made anew.
  test::RunOrThrow({"wipefs", "-a", "-q", disk.loop().PartitionPath(1)});
  disk.Reattach(4096, /*partitions=*/false);
  Expect({"translate", disk.device(), "--yes", "--backup-dir", disk.File("b")}, 0);
  test::MakeFilesystemWithFiles(kMkfsVfat, disk.loop().PartitionPath(1), disk.File("m1"), vfat);
  EXPECT_EQ(test::CheckFiles(disk.loop().PartitionPath(1), disk.File("m1"), vfat), "");
  EXPECT_EQ(test::CheckFiles(disk.loop().PartitionPath(2), disk.File("m2"), ext4), "");
}

// Issue #30 item 8: NTFS made with 512-byte sectors beside an ext4, the disk now at 4096.
// translate's refusal says what really breaks (Windows, the boot sector's bytes per sector) and
// names --accept; verify names the command with it; run, the table is translated, ntfs-3g
// reads the NTFS and the ext4 is not held hostage.
TEST(MigrateAdviceTest, NtfsIsTranslatedWhenItsSectorSizeIsAccepted) {
  PARTALIGN_REQUIRE_DEVICES();
  MovedDisk disk(
      "label: gpt\nstart=2048, size=20480\nstart=22528, size=40960, "
      "type=EBD0A0A2-B9E5-4433-87C0-68B6B72699C7\n",
      512);
  const FileSet ext4 = test::MakeFiles("beside");
  test::MakeFilesystemWithFiles(kMkfsExt4, disk.loop().PartitionPath(1), disk.File("m1"), ext4);
  test::RunOrThrow({"mkntfs", "-q", "-F", "-Q", "-s", "512", disk.loop().PartitionPath(2)});
  const std::string mount = disk.File("ntfs");
  std::filesystem::create_directories(mount);
  {
    test::MountPoint m(disk.loop().PartitionPath(2), mount);  // mount.ntfs: ntfs-3g (FUSE)
    test::WriteFile(mount + "/note.txt", "written at 512");
  }
  Expect({"snapshot", disk.device(), "-o", disk.File("s")}, 0);
  disk.Reattach(4096, /*partitions=*/false);

  CommandResult refused = Expect({"translate", disk.device(), "--dry-run"}, 3);
  EXPECT_NE(refused.err.find("partition 2: its NTFS boot sector says 512 bytes per sector "
                             "(BytesPerSector), the new table is for 4096-byte sectors: Windows "
                             "mounts an NTFS volume only when the two are the same"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("Linux's ntfs-3g reads it all the same (--accept 2 translates the "
                             "table anyway"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(refused.err.find("the kernel cannot mount it"), std::string::npos) << refused.err;
  Expect({"translate", disk.device(), "--accept", "1", "--dry-run"}, 1);

  CommandResult v = Expect({"verify", disk.device(), "--against", disk.File("s")}, 2);
  const std::string command = AdviceIn(v.out, "'(partalign translate --accept 2 [^']+)' rewrites");
  EXPECT_EQ(command, fmt::format("partalign translate --accept 2 {}", disk.device()));
  CommandResult t = RunAdvice(command + " --yes --backup-dir b", disk.dir().path());
  ASSERT_EQ(t.exit_code, 0) << t.out << t.err;
  EXPECT_NE(t.out.find("Note: partition 2: accepted (--accept 2)"), std::string::npos) << t.out;
  EXPECT_EQ(test::CheckFiles(disk.loop().PartitionPath(1), disk.File("m1"), ext4), "");
  test::MountPoint m(disk.loop().PartitionPath(2), mount, "ro");
  EXPECT_EQ(test::ReadFile(mount + "/note.txt"), "written at 512");
}

}  // namespace
}  // namespace partalign
