// SPDX-License-Identifier: GPL-3.0-or-later
// ReadPartitionTable on image files made by the real sfdisk and parted, compared with what
// sfdisk -J reports for the same image (no root needed: libfdisk reads regular files).
#include "io/table/fdisk_table.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::RunCommand;
using test::SfdiskJson;

constexpr unsigned long long kImageBytes = 256ull << 20;

void Sfdisk(const std::string& image, const std::string& script) {
  std::vector<std::string> argv{"sfdisk", "--quiet", "--no-reread", "--no-tell-kernel", image};
  CommandResult r = RunCommand(argv, script);
  ASSERT_EQ(r.exit_code, 0) << test::Describe(argv, r);
}

// Writes `file` into `image` at `offset` without truncating it (a filesystem into a partition).
void Implant(const std::string& image, const std::string& file, unsigned long long offset) {
  CommandResult r =
      RunCommand({"dd", "if=" + file, "of=" + image, "bs=512",
                  "seek=" + std::to_string(offset / 512), "conv=notrunc,sparse", "status=none"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

TEST(FdiskTableTest, GptMatchesSfdiskJson) {
  test::TempDir dir;
  const std::string image = dir.File("gpt.img");
  test::CreateSparseFile(image, kImageBytes);
  Sfdisk(image,
         "label: gpt\n"
         "first-lba: 34\n"
         "start=63, size=20000, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, name=\"root\"\n"
         "start=65535, size=40960, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, name=\"esp\"\n"
         "size=10M\n");
  Result<TableRead> read = ReadPartitionTable(image);
  ASSERT_TRUE(read) << read.error().message;
  const PartitionTable& t = read->table;
  nlohmann::json sf = SfdiskJson(image);
  EXPECT_EQ(t.label, LabelType::kGpt);
  EXPECT_EQ(t.sector_size, sf["sectorsize"].get<uint64_t>());
  EXPECT_EQ(t.first_usable_lba, sf["firstlba"].get<uint64_t>());
  EXPECT_EQ(t.last_usable_lba, sf["lastlba"].get<uint64_t>());
  EXPECT_EQ(t.disk_id, sf["id"].get<std::string>());
  EXPECT_EQ(t.disk_size_sectors, kImageBytes / 512);
  ASSERT_EQ(t.partitions.size(), sf["partitions"].size());
  for (size_t i = 0; i < t.partitions.size(); ++i) {
    const Partition& p = t.partitions[i];
    const nlohmann::json& q = sf["partitions"][i];
    EXPECT_EQ(p.number, i + 1);
    EXPECT_EQ(p.kind, PartitionKind::kPrimary);
    EXPECT_EQ(p.start_sector, q["start"].get<uint64_t>());
    EXPECT_EQ(p.size_sectors, q["size"].get<uint64_t>());
    EXPECT_EQ(p.type_code, q["type"].get<std::string>());
    EXPECT_EQ(p.uuid, q["uuid"].get<std::string>());
    EXPECT_EQ(p.name, q.value("name", ""));
  }
  EXPECT_EQ(t.partitions[0].start_sector, 63u);
  EXPECT_EQ(t.partitions[1].start_sector, 65535u);
  EXPECT_EQ(t.partitions[0].name, "root");
  EXPECT_EQ(t.partitions[0].type_name, "Linux filesystem");
  EXPECT_EQ(t.partitions[1].type_name, "EFI System");
}

TEST(FdiskTableTest, GptAreasCoverBothHeadersAndEntryArrays) {
  test::TempDir dir;
  const std::string image = dir.File("gpt.img");
  test::CreateSparseFile(image, kImageBytes);
  Sfdisk(image, "label: gpt\n,10M\n");
  Result<TableRead> read = ReadPartitionTable(image);
  ASSERT_TRUE(read) << read.error().message;
  const std::vector<TableArea>& a = read->table.areas;
  ASSERT_EQ(a.size(), 5u);
  EXPECT_EQ(a[0].offset_bytes, 0u);  // protective MBR
  EXPECT_EQ(a[0].size_bytes, 512u);
  EXPECT_EQ(a[1].offset_bytes, 512u);   // primary header at LBA 1
  EXPECT_EQ(a[2].offset_bytes, 1024u);  // entries at LBA 2
  EXPECT_EQ(a[2].size_bytes, 128u * 128);
  EXPECT_EQ(a[4].offset_bytes, kImageBytes - 512);  // backup header at the last LBA
  EXPECT_EQ(a[3].offset_bytes + a[3].size_bytes, kImageBytes - 512);
}

TEST(FdiskTableTest, DosWithLogicalPartitionsMatchesSfdiskJson) {
  test::TempDir dir;
  const std::string image = dir.File("dos.img");
  test::CreateSparseFile(image, kImageBytes);
  Sfdisk(image,
         "label: dos\n"
         "start=63, size=20000, type=83, bootable\n"
         "start=30000, size=400000, type=5\n"
         "start=30063, size=10000, type=83\n"
         "start=50000, size=10000, type=82\n");
  Result<TableRead> read = ReadPartitionTable(image);
  ASSERT_TRUE(read) << read.error().message;
  const PartitionTable& t = read->table;
  nlohmann::json sf = SfdiskJson(image);
  EXPECT_EQ(t.label, LabelType::kDos);
  EXPECT_EQ(t.disk_id, sf["id"].get<std::string>());
  ASSERT_EQ(t.partitions.size(), sf["partitions"].size());
  for (size_t i = 0; i < t.partitions.size(); ++i) {
    EXPECT_EQ(t.partitions[i].start_sector, sf["partitions"][i]["start"].get<uint64_t>());
    EXPECT_EQ(t.partitions[i].size_sectors, sf["partitions"][i]["size"].get<uint64_t>());
  }
  ASSERT_EQ(t.partitions.size(), 4u);
  EXPECT_TRUE(t.partitions[0].bootable);
  EXPECT_EQ(t.partitions[0].type_code, "0x83");
  EXPECT_EQ(t.partitions[1].kind, PartitionKind::kExtended);
  EXPECT_EQ(t.partitions[2].kind, PartitionKind::kLogical);
  EXPECT_EQ(t.partitions[2].number, 5u);
  EXPECT_EQ(t.partitions[3].number, 6u);
  EXPECT_EQ(t.partitions[3].type_code, "0x82");
  // The MBR and one EBR per logical partition hold table data: each carries the 0x55AA
  // boot signature, and each EBR lies inside the extended partition before its logical one.
  ASSERT_EQ(t.areas.size(), 3u);
  EXPECT_EQ(t.areas[0].offset_bytes, 0u);
  const std::string bytes = test::ReadFile(image);
  for (const TableArea& area : t.areas) {
    EXPECT_EQ(area.size_bytes, 512u);
    EXPECT_EQ(static_cast<unsigned char>(bytes[area.offset_bytes + 510]), 0x55) << area.name;
    EXPECT_EQ(static_cast<unsigned char>(bytes[area.offset_bytes + 511]), 0xAA) << area.name;
  }
  EXPECT_EQ(t.areas[1].offset_bytes, 30000u * 512);  // the first EBR starts the extended one
  EXPECT_GT(t.areas[2].offset_bytes, 40063u * 512);
  EXPECT_LT(t.areas[2].offset_bytes, 50000u * 512);
}

TEST(FdiskTableTest, FreeRegionsAreTheGapsSfdiskReports) {
  test::TempDir dir;
  const std::string image = dir.File("gpt.img");
  test::CreateSparseFile(image, kImageBytes);
  Sfdisk(image, "label: gpt\nstart=2048, size=2048\nstart=8192, size=2048\n");
  Result<TableRead> read = ReadPartitionTable(image);
  ASSERT_TRUE(read) << read.error().message;
  CommandResult r = RunCommand({"sfdisk", "--list-free", "--bytes", image});
  ASSERT_EQ(r.exit_code, 0);
  const std::vector<FreeRegion>& f = read->table.free_regions;
  ASSERT_GE(f.size(), 2u);
  EXPECT_EQ(f[0].start_sector, 4096u);
  EXPECT_EQ(f[0].end_sector(), 8191u);
  EXPECT_EQ(f.back().end_sector(), read->table.last_usable_lba);
  for (const FreeRegion& region : f) {
    EXPECT_NE(r.out.find(std::to_string(region.start_sector)), std::string::npos) << r.out;
  }
}

TEST(FdiskTableTest, FingerprintFollowsTheTableNotTheData) {
  test::TempDir dir;
  const std::string image = dir.File("gpt.img");
  test::CreateSparseFile(image, kImageBytes);
  Sfdisk(image, "label: gpt\nstart=2048, size=20480, name=a\n");
  Result<TableRead> first = ReadPartitionTable(image);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->table.fingerprint.rfind("xxh64:", 0), 0u);
  EXPECT_EQ(first->table.fingerprint.size(), 6u + 16u);

  // Data inside the partition: same fingerprint.
  const std::string blob = dir.File("blob");
  test::WriteFile(blob, std::string(4096, 'x'));
  Implant(image, blob, 2048 * 512);
  Result<TableRead> second = ReadPartitionTable(image);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->table.fingerprint, first->table.fingerprint);

  // A renamed partition: a different fingerprint.
  CommandResult r = RunCommand(
      {"sfdisk", "--quiet", "--no-reread", "--no-tell-kernel", "--part-label", image, "1", "b"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Result<TableRead> third = ReadPartitionTable(image);
  ASSERT_TRUE(third);
  EXPECT_NE(third->table.fingerprint, first->table.fingerprint);
}

TEST(FdiskTableTest, ContentsNameTheFilesystemAndItsBlockSize) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kImageBytes);
  Sfdisk(image,
         "label: gpt\nstart=2048, size=65536\nstart=69632, size=65536\n"
         "start=137216, size=65536\nstart=204800, size=65536\n");
  const std::string ext4 = dir.File("ext4.img");
  test::CreateSparseFile(ext4, 65536ull * 512);
  ASSERT_EQ(RunCommand({"mkfs.ext4", "-q", "-b", "4096", "-L", "data", ext4}).exit_code, 0);
  Implant(image, ext4, 2048ull * 512);
  const std::string vfat = dir.File("vfat.img");
  ASSERT_EQ(RunCommand({"mkfs.vfat", "-C", vfat, "32768"}).exit_code, 0);
  Implant(image, vfat, 69632ull * 512);
  const std::string noise = dir.File("noise");
  test::WriteFile(noise, "not a filesystem");
  Implant(image, noise, 137216ull * 512);

  Result<TableRead> read = ReadPartitionTable(image);
  ASSERT_TRUE(read) << read.error().message;
  const std::vector<Partition>& p = read->table.partitions;
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0].contents.fs_type, "ext4");
  EXPECT_EQ(p[0].contents.fs_label, "data");
  EXPECT_EQ(p[0].contents.fs_block_size, 4096u);
  EXPECT_EQ(p[0].contents.proof, ContentProof::kSignature);
  EXPECT_EQ(p[1].contents.fs_type, "vfat");
  EXPECT_EQ(p[1].contents.proof, ContentProof::kSignature);
  EXPECT_EQ(p[2].contents.fs_type, "");
  EXPECT_EQ(p[2].contents.proof, ContentProof::kData);  // non-zero bytes without a signature
  EXPECT_EQ(p[3].contents.fs_type, "");
  EXPECT_EQ(p[3].contents.proof, ContentProof::kHoles);  // never written: the image's holes
}

TEST(FdiskTableTest, SectorSizeOptionReadsA4kTable) {
  test::TempDir dir;
  const std::string image = dir.File("4k.img");
  test::CreateSparseFile(image, kImageBytes);
  CommandResult r =
      RunCommand({"parted", "-s", image, "mklabel", "gpt", "mkpart", "p", "1MiB", "9MiB"}, "",
                 {{"PARTED_SECTOR_SIZE", "4096"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Result<TableRead> read = ReadPartitionTable(image, {.sector_size = 4096});
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->table.label, LabelType::kGpt);
  EXPECT_EQ(read->table.sector_size, 4096u);
  ASSERT_EQ(read->table.partitions.size(), 1u);
  EXPECT_EQ(read->table.partitions[0].start_sector, 256u);
  EXPECT_EQ(read->table.partitions[0].size_sectors, 2048u);
  // Read with 512-byte sectors, the same bytes hold no valid GPT: the validation gate names the
  // sector size it was written for instead of reading the protective MBR as something else.
  Result<TableRead> wrong = ReadPartitionTable(image);
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message.find("written for 4096-byte sectors"), std::string::npos)
      << wrong.error().message;
}

TEST(FdiskTableTest, NoLabelGivesNoPartitionsAndAFingerprintOfTheFirstMiB) {
  test::TempDir dir;
  const std::string image = dir.File("empty.img");
  test::CreateSparseFile(image, kImageBytes);
  Result<TableRead> read = ReadPartitionTable(image);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->table.label, LabelType::kNone);
  EXPECT_TRUE(read->table.partitions.empty());
  ASSERT_EQ(read->table.areas.size(), 1u);
  EXPECT_EQ(read->table.areas[0].size_bytes, 1u << 20);
}

TEST(FdiskTableTest, MissingImageIsAnErrorNamingIt) {
  Result<TableRead> read = ReadPartitionTable("/nonexistent/x.img");
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find("cannot open '/nonexistent/x.img'"), std::string::npos);
}

}  // namespace
}  // namespace partalign
