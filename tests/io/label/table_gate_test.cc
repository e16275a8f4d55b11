// SPDX-License-Identifier: GPL-3.0-or-later
// The validation gate on image files: on tables the real sfdisk, sgdisk and parted write, the
// scan agrees with libfdisk (ReadPartitionTable compares the two and fails otherwise) and with
// sfdisk -J; on damaged tables ReadPartitionTable refuses with the scan's finding before
// libfdisk reads anything - including the two tables on which libfdisk 2.38 aborts. No root
// needed: libfdisk and libblkid read regular files.
#include "io/label/table_gate.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <optional>

#include "io/device/target.h"
#include "io/table/fdisk_table.h"
#include "io/tools/fdisk_alignment.h"
#include "support/device_test.h"
#include "support/loop_device.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/table_images.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::RunCommand;

constexpr uint64_t kMiB = 1024 * 1024;

TableScan Scan(const std::string& image, uint64_t sector_size = 512) {
  Result<Target> t = OpenTarget(image);
  EXPECT_TRUE(t) << t.error().message;
  return ScanTarget(t->fd.get(), image, t->size_bytes, sector_size);
}

// The scan's partitions against sfdisk -J's: numbers, starts and sizes.
void ExpectScanMatchesSfdisk(const std::string& image, uint64_t sector_size = 512) {
  TableScan scan = Scan(image, sector_size);
  EXPECT_EQ(scan.severity(), TableSeverity::kNote);
  // sfdisk 2.38 reads an image file with 512-byte sectors only (it has no --sector-size): at
  // any other size it reads the image through a loop device of that sector size.
  std::optional<test::LoopDevice> loop;
  if (sector_size != 512) loop.emplace(image, static_cast<unsigned>(sector_size));
  const std::vector<std::string> argv{"sfdisk", "-J", loop ? loop->path() : image};
  CommandResult r = RunCommand(argv);
  ASSERT_EQ(r.exit_code, 0) << test::Describe(argv, r);
  nlohmann::json sf = nlohmann::json::parse(r.out)["partitiontable"];
  ASSERT_EQ(scan.partitions.size(), sf["partitions"].size()) << image;
  for (size_t i = 0; i < scan.partitions.size(); ++i) {
    const ScannedPartition& p = scan.partitions[i];
    const nlohmann::json& q = sf["partitions"][i];
    EXPECT_EQ(
        loop ? loop->PartitionPath(static_cast<int>(p.number)) : image + std::to_string(p.number),
        q["node"].get<std::string>());
    EXPECT_EQ(p.start_sector, q["start"].get<uint64_t>());
    EXPECT_EQ(p.size_sectors, q["size"].get<uint64_t>());
  }
  Result<TableRead> read =
      ReadPartitionTable(image, {.sector_size = sector_size, .probe_contents = false});
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_TRUE(read->table.findings.empty());
  EXPECT_EQ(read->table.partitions.size(), scan.partitions.size());
}

TEST(TableGateTest, TablesTheRealToolsWriteAgreeWithLibfdiskAndSfdisk) {
  PARTALIGN_REQUIRE_DEVICES();  // the 4096-byte case goes through a loop device
  test::TempDir dir;
  struct Case {
    const char* name;
    unsigned sector_size;
    std::vector<std::string> make;  // argv; IMAGE is replaced by the image path
    std::string input;
  };
  const std::vector<Case> cases = {
      {"sfdisk-gpt",
       512,
       {"sfdisk", "--quiet", "IMAGE"},
       "label: gpt\nfirst-lba: 34\nstart=34, size=100\nstart=2048, size=4096, type=uefi\nsize=8M\n"
       "start=40000, size=1000, name=\"x\"\n"},
      {"sfdisk-gpt-4096",
       4096,
       {"sfdisk", "--quiet", "LOOP4096"},
       "label: gpt\nsize=1M\nsize=2M\n"},
      {"sfdisk-dos-logicals",
       512,
       {"sfdisk", "--quiet", "IMAGE"},
       "label: dos\nstart=63, size=2000\nstart=4096, type=5\nsize=1M\nsize=2M\nsize=3M\n"},
      {"sgdisk-gpt",
       512,
       {"sgdisk", "-n", "1:2048:+1M", "-n", "3:0:+3M", "-t", "3:8200", "IMAGE"},
       ""},
      {"parted-msdos",
       512,
       {"parted",  "-s",   "IMAGE",  "mklabel",  "msdos",   "mkpart", "primary",
        "1MiB",    "5MiB", "mkpart", "extended", "5MiB",    "40MiB",  "mkpart",
        "logical", "6MiB", "9MiB",   "mkpart",   "logical", "10MiB",  "20MiB"},
       ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string image = dir.File(std::string(c.name) + ".img");
    test::CreateSparseFile(image, 64 * kMiB);
    {
      // sfdisk writes a table for 4096-byte sectors only onto a device that has them.
      std::optional<test::LoopDevice> loop;
      std::vector<std::string> argv = c.make;
      for (std::string& a : argv) {
        if (a == "IMAGE") a = image;
        if (a == "LOOP4096") a = loop.emplace(image, 4096).path();
      }
      CommandResult r = RunCommand(argv, c.input);
      ASSERT_EQ(r.exit_code, 0) << test::Describe(argv, r);
    }
    ExpectScanMatchesSfdisk(image, c.sector_size);
  }
}

TEST(TableGateTest, BuiltTablesAreReadTheSameBySfdisk) {
  // The test images themselves, checked against the oracle: what the scanner is tested on is
  // what sfdisk reads.
  test::TempDir dir;
  test::GptSpec gpt;
  gpt.disk_sectors = 64 * kMiB / 512;
  gpt.entries = {{0, test::kEspGuid, "", 2048, 18431}, {4, test::kLinuxFsGuid, "", 20480, 40959}};
  test::WriteImageFile(test::MakeGptDisk(gpt), dir.File("gpt.img"));
  ExpectScanMatchesSfdisk(dir.File("gpt.img"));
  test::WriteImageFile(
      test::MakeDosDisk(64 * kMiB, 512, {{0x80, 0x83, 2048, 8192}},
                        {{12289, 4095}, {16385, 4095}, {20481, 8000}}, 12288, 40000),
      dir.File("dos.img"));
  ExpectScanMatchesSfdisk(dir.File("dos.img"));
}

// What ReadPartitionTable says about a damaged image: its error, or "" when it reads it.
std::string ReadError(const std::string& image) {
  Result<TableRead> read = ReadPartitionTable(image, {.probe_contents = true});
  return read ? "" : read.error().message;
}

TEST(TableGateTest, DamagedTablesAreRefusedBeforeLibfdiskReadsThem) {
  test::TempDir dir;
  test::GptSpec spec;
  spec.disk_sectors = 64 * kMiB / 512;
  spec.entries = {{0, test::kEspGuid, "", 2048, 18431}, {1, test::kLinuxFsGuid, "", 18432, 81919}};
  const uint64_t backup = test::BackupHeaderLba(spec);
  struct Case {
    const char* name;
    SparseDisk disk;
    const char* expected;
  };
  std::vector<Case> cases;
  auto gpt_with = [&](auto&& damage) {
    SparseDisk d = test::MakeGptDisk(spec);
    damage(d);
    return d;
  };
  // libfdisk 2.38 aborts in fdisk_get_freespaces() on this one: `last + grain` wraps.
  cases.push_back({"entry-ends-at-2^64-1", gpt_with([&](SparseDisk& d) {
                     for (uint64_t lba : {test::PrimaryHeaderLba(), backup}) {
                       test::SetGptEntryField(&d, 512, lba, 1, 40, 8, ~uint64_t{0});
                     }
                   }),
                   "partition 2 (sectors 18432-18446744073709551615) ends beyond the end of "
                   "the disk"});
  cases.push_back({"entry-at-2^63", gpt_with([&](SparseDisk& d) {
                     for (uint64_t lba : {test::PrimaryHeaderLba(), backup}) {
                       test::SetGptEntryField(&d, 512, lba, 1, 32, 8, uint64_t{1} << 63);
                       test::SetGptEntryField(&d, 512, lba, 1, 40, 8, (uint64_t{1} << 63) + 8);
                     }
                   }),
                   "partition 2 (sectors 9223372036854775808-9223372036854775816) ends beyond"});
  cases.push_back({"both-headers-damaged", gpt_with([&](SparseDisk& d) {
                     test::CorruptGptHeader(&d, 512, test::PrimaryHeaderLba());
                     test::CorruptGptHeader(&d, 512, backup);
                   }),
                   "protective MBR, but no valid GPT: primary: header CRC"});
  cases.push_back({"gpt-without-pmbr",
                   gpt_with([](SparseDisk& d) { d.Write(0, std::vector<uint8_t>(512, 0)); }),
                   "sector 0 holds no protective MBR"});
  cases.push_back({"overlap", gpt_with([&](SparseDisk& d) {
                     for (uint64_t lba : {test::PrimaryHeaderLba(), backup}) {
                       test::SetGptEntryField(&d, 512, lba, 1, 32, 8, 10000);
                     }
                   }),
                   "partitions 1 (sectors 2048-18431) and 2 (sectors 10000-81919) overlap"});
  cases.push_back({"atari", test::MakeAtariDisk(64 * kMiB),
                   "it holds a partition table of type 'atari' (libblkid); partalign reads GPT "
                   "and DOS tables only"});
  std::vector<test::LogicalSpec> logicals;
  for (uint64_t i = 0; i < 64; ++i) logicals.push_back({2049 + i * 64, 63});
  cases.push_back({"64-logicals", test::MakeDosDisk(64 * kMiB, 512, {}, logicals, 2048, 20000),
                   "the EBR chain holds 64 logical partitions; libfdisk reads only 56"});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string image = dir.File(std::string(c.name) + ".img");
    test::WriteImageFile(c.disk, image);
    const std::string error = ReadError(image);
    EXPECT_EQ(error.rfind("'" + image + "': ", 0), 0u) << error;
    EXPECT_NE(error.find(c.expected), std::string::npos) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
}

TEST(TableGateTest, ReadOnlyFindingsAreReportedWithTheTable) {
  test::TempDir dir;
  const std::string image = dir.File("gpt.img");
  test::CreateSparseFile(image, 64 * kMiB);
  ASSERT_EQ(RunCommand({"sfdisk", "--quiet", image}, "label: gpt\nsize=4M\nsize=4M\n").exit_code,
            0);
  // Damage the backup header's CRC with a byte inside its disk GUID.
  SparseDisk copy = test::ReadImageFile(image);
  test::CorruptGptHeader(&copy, 512, 64 * kMiB / 512 - 1);
  test::WriteImageFile(copy, image);
  Result<TableRead> read = ReadPartitionTable(image);
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_EQ(read->table.findings.size(), 1u);
  EXPECT_EQ(read->table.findings[0].code, "gpt-backup-invalid");
  EXPECT_EQ(read->table.partitions.size(), 2u);
  EXPECT_FALSE(CheckChangeable(read->table));
  // libfdisk says the same in its own words.
  ASSERT_FALSE(read->warnings.empty());
  EXPECT_NE(read->warnings[0].find("The backup GPT table is corrupt"), std::string::npos);
}

TEST(TableGateTest, OneSectorImageWithOnlyTheSignatureIsAnEmptyDosTable) {
  // libfdisk 2.38 aborts on it in fdisk_get_freespaces() (`last_lba - 1` wraps at last LBA 0;
  // `sfdisk -F` shows it); partalign reads it without asking for free space.
  test::TempDir dir;
  const std::string image = dir.File("aa.img");
  SparseDisk disk(512);
  disk.Write(510, std::vector<uint8_t>{0x55, 0xAA});
  test::WriteImageFile(disk, image);
  Result<TableRead> read = ReadPartitionTable(image);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->table.label, LabelType::kDos);
  EXPECT_TRUE(read->table.partitions.empty());
  EXPECT_TRUE(read->table.free_regions.empty());
  LiveAlignment live;
  QueryFdiskAlignment(image, &live);  // must return, whatever it finds
}

TEST(TableGateTest, ExplainsLibfdiskQueriesAreGatedToo) {
  test::TempDir dir;
  test::GptSpec spec;
  spec.disk_sectors = 64 * kMiB / 512;
  spec.entries = {{0, test::kLinuxFsGuid, "", 2048, ~uint64_t{0}}};
  const std::string image = dir.File("wrap.img");
  test::WriteImageFile(test::MakeGptDisk(spec), image);
  Result<std::vector<uint64_t>> starts = ReadGptPartitionStarts(image);
  ASSERT_FALSE(starts);
  EXPECT_NE(starts.error().message.find("ends beyond the end of the disk"), std::string::npos)
      << starts.error().message;
  LiveAlignment live;
  QueryFdiskAlignment(image, &live);
  EXPECT_NE(live.fdisk_error.find("libfdisk not asked"), std::string::npos) << live.fdisk_error;
}

}  // namespace
}  // namespace partalign
