// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/table/table_translation.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace partalign {
namespace {

constexpr uint64_t kDisk = 64ull << 20;
constexpr uint64_t kMiBytes = 1 << 20;
constexpr uint64_t kEntries = 128 * 128;

// The areas libfdisk lists for a GPT with 128 entries on a `disk`-byte disk of `ss`-byte
// sectors.
std::vector<TableArea> GptAreas(uint64_t ss, uint64_t disk = kDisk) {
  const uint64_t entry_bytes = (kEntries + ss - 1) / ss * ss;
  return {{"PMBR", 0, 512},
          {"GPT Header", ss, 92},
          {"GPT Entries", 2 * ss, kEntries},
          {"GPT Backup Entries", disk - ss - entry_bytes, kEntries},
          {"GPT Backup Header", disk - ss, 92}};
}

Partition Part(uint32_t number, uint64_t start, uint64_t size,
               PartitionKind kind = PartitionKind::kPrimary) {
  Partition p;
  p.number = number;
  p.kind = kind;
  p.start_sector = start;
  p.size_sectors = size;
  p.type_code = "0FC63DAF-8483-4772-8E79-3D69D8477DE4";
  p.uuid = "11111111-2222-3333-4444-55555555555" + std::to_string(number);
  return p;
}

// A GPT as libfdisk reads it: usable area as far as the sector size allows.
PartitionTable Gpt(uint64_t ss, std::vector<Partition> partitions, uint64_t disk = kDisk) {
  PartitionTable t;
  t.label = LabelType::kGpt;
  t.sector_size = ss;
  t.disk_size_sectors = disk / ss;
  const uint64_t entry_sectors = (kEntries + ss - 1) / ss;
  t.first_usable_lba = kMiBytes / ss;
  t.last_usable_lba = t.disk_size_sectors - 2 - entry_sectors;
  t.disk_id = "AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE";
  t.partitions = std::move(partitions);
  t.areas = GptAreas(ss, disk);
  return t;
}

PartitionTable Dos(uint64_t ss, std::vector<Partition> partitions, std::vector<uint64_t> ebrs,
                   uint64_t disk = kDisk) {
  PartitionTable t;
  t.label = LabelType::kDos;
  t.sector_size = ss;
  t.disk_size_sectors = disk / ss;
  t.disk_id = "0x12345678";
  t.partitions = std::move(partitions);
  t.areas.push_back({"MBR", 0, 512});
  for (uint64_t e : ebrs) t.areas.push_back({"EBR", e * ss, 512});
  return t;
}

bool Mentions(const std::vector<std::string>& lines, const std::string& text) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(text) != std::string::npos; });
}

TEST(PlanTranslationTest, GptFrom4096To512KeepsEveryByteOffset) {
  PartitionTable t = Gpt(4096, {Part(1, 256, 2560), Part(2, 2816, 8192)});
  TableTranslation plan = PlanTranslation(t, kDisk, 512);
  ASSERT_TRUE(plan.ok()) << plan.refusals.front();
  ASSERT_EQ(plan.partitions.size(), 2u);
  EXPECT_EQ(plan.partitions[0].new_start_sector, 2048u);
  EXPECT_EQ(plan.partitions[0].new_size_sectors, 20480u);
  EXPECT_EQ(plan.partitions[1].new_start_sector, 2816u * 8);
  EXPECT_EQ(plan.partitions[1].start_bytes, 2816u * 4096);
  // The usable area: from 1 MiB, to as far as a 512-byte GPT allows (libfdisk's default).
  EXPECT_EQ(plan.first_usable_lba, 2048u);
  EXPECT_EQ(plan.last_usable_lba, kDisk / 512 - 34);
}

TEST(PlanTranslationTest, GptFrom512To4096KeepsEveryByteOffset) {
  PartitionTable t = Gpt(512, {Part(1, 2048, 20480)});
  TableTranslation plan = PlanTranslation(t, kDisk, 4096);
  ASSERT_TRUE(plan.ok()) << plan.refusals.front();
  EXPECT_EQ(plan.partitions[0].new_start_sector, 256u);
  EXPECT_EQ(plan.partitions[0].new_size_sectors, 2560u);
  EXPECT_EQ(plan.first_usable_lba, 256u);
  EXPECT_EQ(plan.last_usable_lba, kDisk / 4096 - 6);
}

TEST(PlanTranslationTest, UsableAreaThatStoppedShortKeepsItsByteEnd) {
  PartitionTable t = Gpt(4096, {Part(1, 256, 2560)});
  t.last_usable_lba = 8191;  // half the disk
  TableTranslation plan = PlanTranslation(t, kDisk, 512);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan.last_usable_lba, 8192u * 8 - 1);
}

TEST(PlanTranslationTest, StartsAndSizesNotWholeNewSectorsAreRefused) {
  // The DOS-era start at sector 63 and a size of an odd number of 512-byte sectors.
  PartitionTable t = Dos(512, {Part(1, 63, 2000), Part(2, 4096, 2049)}, {});
  TableTranslation plan = PlanTranslation(t, kDisk, 4096);
  EXPECT_FALSE(plan.ok());
  EXPECT_TRUE(Mentions(plan.refusals,
                       "partition 1: its start (sector 63 of 512 bytes, byte "
                       "32256) is not a multiple of 4096 bytes"));
  EXPECT_TRUE(Mentions(plan.refusals, "partition 2: its size (2049 sectors of 512 bytes"));
  EXPECT_FALSE(Mentions(plan.refusals, "partition 2: its start"));
  // The way out: partalign plan where the disk has 512-byte sectors (its starts: 1 MiB).
  EXPECT_TRUE(Mentions(plan.refusals,
                       "move it first where the disk has 512-byte sectors ('partalign plan' "
                       "there puts every start on 1 MiB, a multiple of 4096 bytes)"));
}

TEST(PlanTranslationTest, DosBeyondTwoTiBIn512ByteSectorsIsRefusedWithGptAsTheWayOut) {
  const uint64_t disk = 3ull << 40;  // 3 TiB behind a 4K bridge: one DOS partition
  PartitionTable t = Dos(4096, {Part(1, 256, disk / 4096 - 512)}, {}, disk);
  TableTranslation plan = PlanTranslation(t, disk, 512);
  ASSERT_EQ(plan.refusals.size(), 1u);
  EXPECT_NE(plan.refusals[0].find("beyond 32 bits with 512-byte sectors"), std::string::npos);
  EXPECT_NE(plan.refusals[0].find("2 TiB"), std::string::npos);
  EXPECT_NE(plan.refusals[0].find("convert the table to GPT first where it is read right, with "
                                  "4096-byte sectors (sgdisk --mbrtogpt DEVICE), then translate"),
            std::string::npos)
      << plan.refusals[0];
  // The same disk stays translatable as GPT.
  PartitionTable gpt = Gpt(4096, {Part(1, 256, disk / 4096 - 512)}, disk);
  EXPECT_TRUE(PlanTranslation(gpt, disk, 512).ok());
}

TEST(PlanTranslationTest, GptPartitionsInsideTheNewHeaderOrBackupAreaAreRefused) {
  // 512-byte GPT with partition 1 at LBA 40 (byte 20480 = 4096-byte LBA 5, inside a 4K GPT's
  // entry array) and partition 2, on 4096-byte boundaries, ending at 512-byte LBA 131039
  // (4096-byte LBA 16379: a 4K GPT's last usable LBA on 64 MiB is 16378, before its backup).
  PartitionTable t = Gpt(512, {Part(1, 40, 2008), Part(2, 126944, 4096)});
  t.first_usable_lba = 34;
  TableTranslation plan = PlanTranslation(t, kDisk, 4096);
  EXPECT_TRUE(Mentions(plan.refusals,
                       "partition 1: it starts at byte 20480, inside the area a "
                       "GPT with 4096-byte sectors keeps for itself"));
  EXPECT_TRUE(Mentions(plan.refusals, "partition 2: it ends at byte"));
  EXPECT_TRUE(Mentions(plan.refusals, "keeps for its backup"));
}

TEST(PlanTranslationTest, FilesystemsThatRecordASmallerSectorAreRefusedWithTheReason) {
  PartitionTable t = Gpt(512, {Part(1, 2048, 2048), Part(2, 4096, 2048), Part(3, 6144, 2048),
                               Part(4, 8192, 2048), Part(5, 10240, 2048)});
  t.partitions[0].contents = {
      .fs_type = "vfat", .fs_block_size = 512, .proof = ContentProof::kSignature};
  t.partitions[1].contents = {
      .fs_type = "xfs", .fs_block_size = 512, .proof = ContentProof::kSignature};
  t.partitions[2].contents = {
      .fs_type = "ext4", .fs_block_size = 1024, .proof = ContentProof::kSignature};
  t.partitions[3].contents = {
      .fs_type = "ext4", .fs_block_size = 4096, .proof = ContentProof::kSignature};
  t.partitions[4].contents = {.fs_type = "vfat",
                              .proof = ContentProof::kSignature};  // size unknown
  TableTranslation plan = PlanTranslation(t, kDisk, 4096);
  EXPECT_TRUE(Mentions(plan.refusals, "partition 1: its vfat filesystem has 512-byte sectors"));
  EXPECT_TRUE(Mentions(plan.refusals,
                       "Linux's vfat driver does not mount it on a disk with "
                       "4096-byte sectors. Keep using the disk where it has "
                       "512-byte sectors"));
  EXPECT_TRUE(plan.acceptable.empty());
  EXPECT_TRUE(Mentions(plan.refusals, "partition 2: its XFS filesystem has 512-byte sectors"));
  EXPECT_TRUE(Mentions(plan.refusals, "partition 3: its ext4 filesystem has 1024-byte blocks"));
  EXPECT_FALSE(Mentions(plan.refusals, "partition 4"));
  EXPECT_TRUE(Mentions(plan.refusals, "partition 5: libblkid does not report the sector size"));
  // Going down, every one of them fits.
  PartitionTable big = t;
  for (Partition& p : big.partitions) {
    p.start_sector /= 8;
    p.size_sectors /= 8;
  }
  big = Gpt(4096, big.partitions);
  EXPECT_TRUE(PlanTranslation(big, kDisk, 512).ok())
      << PlanTranslation(big, kDisk, 512).refusals[0];
}

// Issue #30 item 8: NTFS and exFAT keep their sector size in the boot sector; the refusal says
// what breaks (Windows mounts them only when it equals the disk's; ntfs-3g and exfat-fuse read
// them), and --accept N lets each through, with a note, while an ext4 beside them translates.
TEST(PlanTranslationTest, NtfsAndExfatAreRefusedUnlessAcceptedPartitionByPartition) {
  PartitionTable t = Gpt(
      512, {Part(1, 2048, 2048), Part(2, 4096, 2048), Part(3, 6144, 2048), Part(4, 8192, 2048)});
  t.partitions[0].contents = {
      .fs_type = "ntfs", .fs_block_size = 512, .proof = ContentProof::kSignature};
  t.partitions[1].contents = {
      .fs_type = "exfat", .fs_block_size = 512, .proof = ContentProof::kSignature};
  t.partitions[2].contents = {
      .fs_type = "ext4", .fs_block_size = 4096, .proof = ContentProof::kSignature};
  t.partitions[3].contents = {.fs_type = "ntfs", .proof = ContentProof::kSignature};
  TableTranslation plan = PlanTranslation(t, kDisk, 4096);
  EXPECT_EQ(plan.refusals.size(), 3u);
  EXPECT_TRUE(Mentions(plan.refusals,
                       "partition 1: its NTFS boot sector says 512 bytes per sector "
                       "(BytesPerSector), the new table is for 4096-byte sectors: Windows mounts "
                       "an NTFS volume only when the two are the same, and shows it as RAW "
                       "otherwise; Linux's ntfs-3g reads it all the same (--accept 1 translates "
                       "the table anyway; the filesystem is not changed)"));
  EXPECT_TRUE(Mentions(plan.refusals,
                       "partition 2: its exFAT boot sector says 512 bytes per "
                       "sector (BytesPerSectorShift)"));
  EXPECT_TRUE(Mentions(plan.refusals, "Linux's exfat-fuse reads it all the same (--accept 2"));
  EXPECT_TRUE(Mentions(plan.refusals,
                       "partition 4: libblkid does not report the sector size of "
                       "its ntfs filesystem"));
  EXPECT_FALSE(Mentions(plan.refusals, "kernel cannot mount"));
  EXPECT_EQ(plan.acceptable, (std::vector<uint32_t>{1, 2, 4}));
  TableTranslation some = PlanTranslation(t, kDisk, 4096, {1});
  EXPECT_EQ(some.refusals.size(), 2u);
  EXPECT_EQ(some.accepted, std::vector<uint32_t>{1});
  TableTranslation all = PlanTranslation(t, kDisk, 4096, {1, 2, 4});
  EXPECT_TRUE(all.ok()) << all.refusals[0];
  EXPECT_EQ(all.accepted, (std::vector<uint32_t>{1, 2, 4}));
  EXPECT_TRUE(Mentions(all.notes,
                       "partition 2: accepted (--accept 2): its exFAT keeps its own "
                       "sector size; Windows will not mount it on this disk, Linux's "
                       "exfat-fuse reads it"));
  // --accept does not let a vfat through: Linux itself does not mount it.
  t.partitions[2].contents = {
      .fs_type = "vfat", .fs_block_size = 512, .proof = ContentProof::kSignature};
  EXPECT_FALSE(PlanTranslation(t, kDisk, 4096, {1, 2, 3, 4}).ok());
}

TEST(PlanTranslationTest, DosEbrsMustBeWholeNewSectorsClearOfData) {
  // Extended 2048-40959 (512-byte sectors); logical 5 with its EBR at 4096, logical 6 packed
  // fdisk-style with its EBR one sector before it, at 20479.
  PartitionTable t = Dos(512,
                         {Part(1, 2048, 1024), Part(2, 4096, 36864, PartitionKind::kExtended),
                          Part(5, 6144, 14335, PartitionKind::kLogical),
                          Part(6, 20480, 8192, PartitionKind::kLogical)},
                         {4096, 20479});
  TableTranslation plan = PlanTranslation(t, kDisk, 4096);
  EXPECT_TRUE(Mentions(plan.refusals,
                       "the EBR of partition 6 is at byte 10485248, not on a "
                       "4096-byte boundary"));
  EXPECT_FALSE(Mentions(plan.refusals, "EBR of partition 5"));
}

TEST(PlanTranslationTest, NonTablesAndBadSizesAreRefused) {
  PartitionTable none;
  none.label = LabelType::kNone;
  EXPECT_TRUE(Mentions(PlanTranslation(none, kDisk, 512).refusals, "no GPT or DOS"));
  EXPECT_TRUE(Mentions(PlanTranslation(Gpt(512, {}), kDisk, 1000).refusals, "powers of two"));
}

TEST(PlanTranslationTest, PartitionPastTheLastWholeNewSectorIsRefused) {
  const uint64_t disk = kDisk + 3 * 512;  // not a whole number of 4096-byte sectors
  PartitionTable t = Dos(512, {Part(1, 2048, disk / 512 - 2048)}, {}, disk);
  TableTranslation plan = PlanTranslation(t, disk, 4096);
  EXPECT_TRUE(Mentions(plan.notes, "last 1536 bytes"));
  EXPECT_TRUE(Mentions(plan.refusals, "beyond the last whole 4096-byte sector"));
}

TEST(TranslationMismatchesTest, NamesEveryDifference) {
  PartitionTable old_table = Gpt(4096, {Part(1, 256, 2560)});
  old_table.partitions[0].name = "root";
  TableTranslation plan = PlanTranslation(old_table, kDisk, 512);
  PartitionTable good = Gpt(512, {Part(1, 2048, 20480)});
  good.partitions[0].name = "root";
  EXPECT_TRUE(TranslationMismatches(plan, old_table, good).empty());
  PartitionTable bad = good;
  bad.partitions[0].start_sector = 2049;
  bad.partitions[0].name = "other";
  bad.disk_id = "X";
  std::vector<std::string> m = TranslationMismatches(plan, old_table, bad);
  EXPECT_TRUE(Mentions(m, "partition 1: start 2049, expected 2048"));
  EXPECT_TRUE(Mentions(m, "partition 1: name other, expected root"));
  EXPECT_TRUE(Mentions(m, "disk identifier X"));
}

std::vector<std::pair<TableAreaRole, std::pair<uint64_t, uint64_t>>> Layout(
    const TableTransition& t) {
  std::vector<std::pair<TableAreaRole, std::pair<uint64_t, uint64_t>>> out;
  for (const TableRange& r : t.ranges) out.push_back({r.role, {r.offset_bytes, r.length_bytes}});
  return out;
}

TEST(TranslationTransitionTest, GptFrom4096To512AbsorbsTheOldAreasBackupFirst) {
  Result<TableTransition> t =
      TranslationTransition(LabelType::kGpt, 4096, 512, kDisk, GptAreas(4096), GptAreas(512));
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->sector_size, 512u);
  // The old entry array (bytes 8192-24575) ends past the new one (1024-17407): its tail is
  // written with it; the old backup array starts before the new one: its head likewise.
  using R = TableAreaRole;
  const uint64_t back = kDisk - 4096 - kEntries;  // the old backup array
  EXPECT_EQ(Layout(*t), (std::vector<std::pair<R, std::pair<uint64_t, uint64_t>>>{
                            {R::kGptBackupEntries, {back, kDisk - 512 - back}},
                            {R::kGptBackupHeader, {kDisk - 512, 512}},
                            {R::kGptEntries, {1024, 24576 - 1024}},
                            {R::kGptHeader, {512, 512}},
                            {R::kMbr, {0, 512}}}));
  // Which ranges hold old table data: all but the new header's sectors.
  EXPECT_TRUE(t->ranges[0].old_index && t->ranges[2].old_index && t->ranges[4].old_index);
  EXPECT_FALSE(t->ranges[1].old_index);
  EXPECT_FALSE(t->ranges[3].old_index);
  for (TableRange& r : t->ranges) {
    r.old_bytes.assign(r.length_bytes, 1);
    r.new_bytes.assign(r.length_bytes, 2);
  }
  EXPECT_TRUE(ValidateTransition(*t)) << ValidateTransition(*t).error().message;
  EXPECT_EQ(AssessCrashSafety(*t).safety, CrashSafety::kOldOrNew);
}

TEST(TranslationTransitionTest, GptFrom512To4096CoversTheOldTableWithTheNewBlocks) {
  Result<TableTransition> t =
      TranslationTransition(LabelType::kGpt, 512, 4096, kDisk, GptAreas(512), GptAreas(4096));
  ASSERT_TRUE(t) << t.error().message;
  using R = TableAreaRole;
  EXPECT_EQ(Layout(*t), (std::vector<std::pair<R, std::pair<uint64_t, uint64_t>>>{
                            {R::kGptBackupEntries, {kDisk - 4096 - kEntries, kEntries}},
                            {R::kGptBackupHeader, {kDisk - 4096, 4096}},
                            {R::kGptEntries, {8192, kEntries}},
                            {R::kGptHeader, {4096, 4096}},
                            {R::kMbr, {0, 4096}}}));
  for (const TableRange& r : t->ranges) EXPECT_TRUE(r.old_index) << ToString(r.role);
}

TEST(TranslationTransitionTest, DosEbrsInPlaceAreRewrittenEndFirstMbrLast) {
  // 4096 -> 512: the EBRs of partitions 5 and 6 stay at their byte places (libfdisk lists an
  // EBR as the 512 bytes that hold it, whatever the sector size).
  std::vector<TableArea> old_areas{{"MBR", 0, 512}, {"EBR", 1 << 20, 512}, {"EBR", 9 << 20, 512}};
  std::vector<TableArea> new_areas = old_areas;
  Result<TableTransition> t =
      TranslationTransition(LabelType::kDos, 4096, 512, kDisk, old_areas, new_areas);
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->ranges.size(), 3u);
  EXPECT_EQ(t->ranges[0].offset_bytes, 9u << 20);  // the chain's end first
  EXPECT_EQ(t->ranges[0].length_bytes, 512u);
  EXPECT_EQ(t->ranges[1].offset_bytes, 1u << 20);  // its head
  EXPECT_EQ(t->ranges[2].role, TableAreaRole::kMbr);
  EXPECT_EQ(t->ranges[2].length_bytes, 512u);
  for (TableRange& r : t->ranges) {
    r.old_bytes.assign(r.length_bytes, 1);
    r.new_bytes.assign(r.length_bytes, 2);
  }
  EXPECT_EQ(AssessCrashSafety(*t).safety, CrashSafety::kRestoreNeeded);
}

TEST(TranslationTransitionTest, AnEbrTheNewChainDoesNotUseIsARangeOfItsOwn) {
  std::vector<TableArea> old_areas{{"MBR", 0, 512}, {"EBR", 1 << 20, 512}, {"EBR", 5 << 20, 512}};
  std::vector<TableArea> new_areas{{"MBR", 0, 512}, {"EBR", 1 << 20, 512}, {"EBR", 6 << 20, 512}};
  Result<TableTransition> t =
      TranslationTransition(LabelType::kDos, 512, 4096, kDisk, old_areas, new_areas);
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->ranges.size(), 4u);
  EXPECT_EQ(t->ranges.front().offset_bytes, 6u << 20);  // new place first
  EXPECT_FALSE(t->ranges.front().old_index);
  EXPECT_EQ(t->ranges.back().offset_bytes, 5u << 20);  // old place last
  EXPECT_FALSE(t->ranges.back().new_index);
  EXPECT_EQ(t->ranges.back().length_bytes, 4096u);
}

TEST(TranslationTransitionTest, AreasOutsideTheDiskAreErrors) {
  std::vector<TableArea> areas = GptAreas(512);
  areas[4].offset_bytes = kDisk;
  EXPECT_FALSE(TranslationTransition(LabelType::kGpt, 512, 4096, kDisk, areas, GptAreas(4096)));
  EXPECT_FALSE(TranslationTransition(LabelType::kOther, 512, 4096, kDisk, {}, {}));
}

TEST(TranslationConflictsTest, ComparesInBytes) {
  TableTransition t;
  t.label = LabelType::kDos;
  t.sector_size = 512;
  TableRange r;
  r.role = TableAreaRole::kEbr;
  r.offset_bytes = 10 << 20;
  r.length_bytes = 512;
  r.old_index = 1;
  r.new_index = 1;
  r.old_bytes.assign(512, 0);
  r.new_bytes.assign(512, 1);
  t.ranges.push_back(r);
  // Partition 5 of the old table (4096-byte sectors) covers byte 10 MiB; the new one does not.
  PartitionTable old_table = Dos(4096, {Part(5, 2304, 512, PartitionKind::kLogical)}, {});
  PartitionTable new_table = Dos(512, {Part(5, 20480 + 1, 100, PartitionKind::kLogical)}, {});
  std::vector<std::string> c = TranslationConflicts(t, old_table, new_table);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NE(c[0].find("would overwrite partition 5"), std::string::npos);
  EXPECT_NE(c[0].find("4096-byte sectors"), std::string::npos);
}

}  // namespace
}  // namespace partalign
