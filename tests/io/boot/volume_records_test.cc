// SPDX-License-Identifier: GPL-3.0-or-later
// Each filesystem that records its start, made by its own mkfs at a 63-style start on a loop
// partition (so that mkfs writes the start itself, as on a real disk), with a file on it; the
// move simulated as the mover does it (the bytes copied to 2048, the table entry rewritten with
// sfdisk); the boot domain's edits applied. Then: every record says 2048 (read raw at the
// specification's offset, and by fsck.fat -v for FAT), the filesystem's own checker is clean
// (fsck.fat -n compares FAT32's backup boot sector, ntfsfix -n NTFS's, fsck.exfat -n the boot
// checksum), the file reads back, and no byte of the partition changed but the edits.
#include <gtest/gtest.h>

#include <regex>

#include <fmt/format.h>

#include "partalign/boot/boot_scan.h"
#include "partalign/util/byte_order.h"
#include "support/boot_disks.h"
#include "support/boot_sectors.h"
#include "support/device_test.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::Bytes;

constexpr uint64_t kOldStart = 63;
constexpr uint64_t kNewStart = 2048;
constexpr char kFileText[] = "partalign boot records: this file must survive the move\n";

enum class Fs { kNtfs, kFat12, kFat16, kFat32, kExfat };

struct FsCase {
  Fs fs;
  const char* name;
  const char* dos_type;
  uint64_t sectors;
  BootRecordKind kind;
  /// Where the start is recorded (bytes into the partition) and how wide.
  std::vector<uint64_t> record_offsets;
  unsigned record_width;
  const char* description;
};

void PrintTo(const FsCase& c, std::ostream* os) { *os << c.name; }

class VolumeRecordsTest : public testing::TestWithParam<FsCase> {};

// mkfs on the loop partition; a file on it.
void MakeFilesystem(const FsCase& c, const std::string& dev, const test::TempDir& dir) {
  const std::string file = dir.File("hello.txt");
  test::WriteFile(file, kFileText);
  switch (c.fs) {
    case Fs::kNtfs:
      // mkntfs reads the start with HDIO_GETGEO, which a loop device lacks: given as a disk's
      // would be.
      test::RunOrThrow(
          {"mkntfs", "-q", "-Q", "-p", std::to_string(kOldStart), "-H", "255", "-S", "63", dev});
      test::RunOrThrow({"ntfscp", "-f", dev, file, "/hello.txt"});
      break;
    case Fs::kFat12:
    case Fs::kFat16:
    case Fs::kFat32: {
      const std::string bits = c.fs == Fs::kFat12 ? "12" : c.fs == Fs::kFat16 ? "16" : "32";
      test::RunOrThrow({"mkfs.fat", "-F", bits, dev});  // hidden sectors from the kernel: 63
      test::RunOrThrow({"mcopy", "-i", dev, file, "::/hello.txt"});
      break;
    }
    case Fs::kExfat: {
      test::RunOrThrow({"mkfs.exfat", dev});  // PartitionOffset from sysfs: 63
      test::FuseMount mount("mount.exfat-fuse", dev, dir.File("mnt"));
      test::RunOrThrow({"cp", file, mount.path() + "/hello.txt"});
      break;
    }
  }
}

std::string ReadFileBack(const FsCase& c, const std::string& dev, const test::TempDir& dir) {
  switch (c.fs) {
    case Fs::kNtfs:
      return test::RunCommand({"ntfscat", dev, "/hello.txt"}).out;
    case Fs::kExfat: {
      test::FuseMount mount("mount.exfat-fuse", dev, dir.File("mnt"));
      return test::ReadFile(mount.path() + "/hello.txt");
    }
    default:
      return test::RunCommand({"mtype", "-i", dev, "::/hello.txt"}).out;
  }
}

// The filesystem's own checker, read-only: exit 0 and, for FAT, no word of a difference
// between the boot sector and its backup.
void ExpectCheckerClean(const FsCase& c, const std::string& dev) {
  std::vector<std::string> argv;
  switch (c.fs) {
    case Fs::kNtfs:
      argv = {"ntfsfix", "-n", dev};
      break;
    case Fs::kExfat:
      argv = {"fsck.exfat", "-n", dev};
      break;
    default:
      argv = {"fsck.fat", "-n", "-v", dev};
      break;
  }
  test::CommandResult r = test::RunCommand(argv);
  EXPECT_EQ(r.exit_code, 0) << test::Describe(argv, r);
  EXPECT_EQ(r.out.find("differ"), std::string::npos) << r.out;
  if (c.fs == Fs::kNtfs) {
    EXPECT_NE(r.out.find("Checking the alternate boot sector... OK"), std::string::npos) << r.out;
  }
  if (c.fs == Fs::kExfat) {
    EXPECT_NE(r.out.find("clean"), std::string::npos) << r.out;
  }
  if (c.fs == Fs::kFat12 || c.fs == Fs::kFat16 || c.fs == Fs::kFat32) {
    // fsck.fat's own reading of the boot sector.
    EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\n\s*2048 hidden sectors\n)"))) << r.out;
  }
}

uint64_t RecordAt(const std::string& dev, uint64_t offset, unsigned width) {
  const Bytes b = test::ReadBytes(dev, offset, width);
  return width == 4 ? *Le<uint32_t>(b, 0) : *Le<uint64_t>(b, 0);
}

TEST_P(VolumeRecordsTest, MovedFrom63To2048EveryRecordFollows) {
  PARTALIGN_REQUIRE_DEVICES();
  const FsCase& c = GetParam();
  test::PartitionedLoop disk(fmt::format("label: dos\nlabel-id: 0x5eed0001\nstart={}, size={}, "
                                         "type={}, bootable\n",
                                         kOldStart, c.sectors, c.dos_type),
                             512);
  const std::string dev = disk.loop().PartitionPath(1);
  MakeFilesystem(c, dev, disk.dir());
  for (uint64_t at : c.record_offsets) {
    ASSERT_EQ(RecordAt(dev, at, c.record_width), kOldStart) << "mkfs wrote the start at " << at;
  }

  // What plan would compute: the records and their edits, before anything moves.
  const BootDisk table = test::BootDiskBySfdisk(disk.device(), 512);
  const std::vector<PartitionMove> moves = {{1, kOldStart, kNewStart, c.sectors, c.sectors}};
  const BootReport report = test::ScanBoot(disk.device(), table, moves);
  ASSERT_FALSE(report.refused()) << test::DescribeReport(report);
  const BootFinding* found = nullptr;
  for (const BootFinding& f : report.findings) {
    if (f.kind == c.kind && f.partition == 1) found = &f;
  }
  ASSERT_NE(found, nullptr) << test::DescribeReport(report);
  EXPECT_EQ(found->verdict, BootVerdict::kUpdate);
  EXPECT_EQ(found->description, c.description);

  // The move, as the mover and apply's table write do it; then the edits at the new place.
  const Bytes before = test::ReadBytes(disk.device(), kOldStart * 512, c.sectors * 512);
  test::MoveSectors(disk.device(), 512, kOldStart, kNewStart, c.sectors);
  test::RewritePartition(disk.device(), 1, kNewStart, c.sectors);
  disk.loop().DeletePartitions();
  test::AddKernelPartitions(disk.loop(), 512);
  test::ApplyBootEdits(disk.device(), 512, report, {{1, kNewStart}});

  // Nothing else in the partition changed: the differing bytes are exactly the edits'. (Read
  // before the file is read back: exfat-fuse updates access times.)
  const Bytes after = test::ReadBytes(disk.device(), kNewStart * 512, c.sectors * 512);
  std::vector<std::pair<uint64_t, uint64_t>> allowed;
  for (const ByteEdit& e : report.Edits()) {
    ASSERT_EQ(e.partition, 1u);
    allowed.emplace_back(e.offset_bytes, e.offset_bytes + e.new_bytes.size() - 1);
  }
  for (const auto& [first, last] : test::DifferingRuns(before, after)) {
    bool inside = false;
    for (const auto& [a, b] : allowed) inside |= first >= a && last <= b;
    EXPECT_TRUE(inside) << "bytes " << first << ".." << last << " changed outside the edits";
  }
  for (uint64_t at : c.record_offsets) {
    EXPECT_EQ(RecordAt(dev, at, c.record_width), kNewStart) << "record at byte " << at;
  }
  ExpectCheckerClean(c, dev);
  EXPECT_EQ(ReadFileBack(c, dev, disk.dir()), kFileText);

  // The same scan on the moved disk finds nothing left to do.
  const BootReport again =
      test::ScanBoot(disk.device(), test::BootDiskBySfdisk(disk.device(), 512), {});
  EXPECT_TRUE(again.Edits().empty()) << test::DescribeReport(again);
}

INSTANTIATE_TEST_SUITE_P(
    Filesystems, VolumeRecordsTest,
    testing::Values(
        FsCase{Fs::kNtfs,
               "ntfs",
               "7",
               40000,
               BootRecordKind::kNtfsBootSector,
               {0x1C, 39999 * 512 + 0x1C},
               4,
               "NTFS boot sector: hidden sectors 63 -> 2048, primary and backup"},
        FsCase{Fs::kFat12,
               "fat12",
               "1",
               16000,
               BootRecordKind::kFatBootSector,
               {0x1C},
               4,
               "FAT12 boot sector: hidden sectors 63 -> 2048"},
        FsCase{Fs::kFat16,
               "fat16",
               "6",
               40000,
               BootRecordKind::kFatBootSector,
               {0x1C},
               4,
               "FAT16 boot sector: hidden sectors 63 -> 2048"},
        FsCase{Fs::kFat32,
               "fat32",
               "c",
               80000,
               BootRecordKind::kFatBootSector,
               {0x1C, 6 * 512 + 0x1C},
               4,
               "FAT32 boot sector: hidden sectors 63 -> 2048, primary and backup"},
        FsCase{Fs::kExfat,
               "exfat",
               "7",
               40000,
               BootRecordKind::kExfatBootRegion,
               {64, 12 * 512 + 64},
               8,
               "exFAT boot region: PartitionOffset 63 -> 2048, main and backup (boot checksums "
               "recomputed)"}),
    [](const testing::TestParamInfo<FsCase>& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace partalign
