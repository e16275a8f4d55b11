// SPDX-License-Identifier: GPL-3.0-or-later
// The planner over the layouts the issue lists: 63-sector starts, 65535-sector starts from a
// JMicron-era parted, 2055-sector starts from an offset disk, DOS with logical partitions,
// back-to-back partitions with no slack, a full disk, 4Kn. Expected values are derived in the
// comments from the layout and the rules in docs/audit-plan.md.
#include "partalign/layout/planner.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "partalign/layout/ebr_placement.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

constexpr uint64_t kDisk8GiB = 16777216;  // sectors of 512 bytes

struct Spec {
  uint64_t start;
  uint64_t size;
  bool data = false;
  std::optional<uint64_t> fs_size_bytes = std::nullopt;
  PartitionKind kind = PartitionKind::kPrimary;
  std::string fs_type = "";
  /// Every byte from here to the partition's end was read as zero (past the filesystem).
  std::optional<uint64_t> zeros_from_bytes = std::nullopt;
};

PartitionContents Contents(const Spec& s) {
  PartitionContents c;
  c.proof = s.data ? ContentProof::kSignature : ContentProof::kZeros;
  c.fs_type = s.fs_type.empty() && s.data ? "ext4" : s.fs_type;
  c.fs_size_bytes = s.fs_size_bytes;
  c.zeros_from_bytes = s.zeros_from_bytes;
  return c;
}

// A GPT as sgdisk/parted write it (FirstUsableLBA 34) unless told otherwise.
PartitionTable Gpt(const std::vector<Spec>& specs, uint64_t disk = kDisk8GiB, uint64_t ss = 512,
                   uint64_t first = 0) {
  PartitionTable t;
  t.label = LabelType::kGpt;
  t.sector_size = ss;
  t.disk_size_sectors = disk;
  t.first_usable_lba = first ? first : 2 + 16384 / ss;
  t.last_usable_lba = disk - 2 - 16384 / ss;
  uint32_t n = 1;
  for (const Spec& s : specs) {
    Partition p;
    p.number = n++;
    p.start_sector = s.start;
    p.size_sectors = s.size;
    p.contents = Contents(s);
    t.partitions.push_back(p);
  }
  return t;
}

PartitionTable Dos(const std::vector<Spec>& specs, uint64_t disk = kDisk8GiB) {
  PartitionTable t;
  t.label = LabelType::kDos;
  t.sector_size = 512;
  t.disk_size_sectors = disk;
  t.first_usable_lba = 2048;  // libfdisk's first LBA on a 512-byte disk without topology
  t.last_usable_lba = disk - 1;
  uint32_t primary = 1, logical = 5;
  for (const Spec& s : specs) {
    Partition p;
    p.kind = s.kind;
    p.number = s.kind == PartitionKind::kLogical ? logical++ : primary++;
    p.start_sector = s.start;
    p.size_sectors = s.size;
    if (s.kind != PartitionKind::kExtended) p.contents = Contents(s);
    t.partitions.push_back(p);
  }
  return t;
}

const Alignment kMiBAlignment{kMiB, 0};

std::vector<PlanAction> Actions(const PartitionTable& t, const Alignment& a = kMiBAlignment) {
  Result<std::vector<PlanAction>> actions = PlanPartitions(t, a);
  EXPECT_TRUE(actions) << actions.error().message;
  return actions ? *actions : std::vector<PlanAction>{};
}

TEST(PlannerTest, SixtyThreeSectorStartWithDataMovesUpToOneMiB) {
  // The 2009 fdisk default: start 63. 2048 is the only aligned start at or after 34 that is
  // near; down to 0 is below the usable area.
  std::vector<PlanAction> a = Actions(Gpt({{63, 204800, true}}));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, ActionKind::kMoveData);
  EXPECT_EQ(a[0].new_start_sector, 2048u);
  // 204800 sectors are exactly 100 MiB: the end follows the start, end + 1 is aligned.
  EXPECT_EQ(a[0].new_end_sector, 2048u + 204800 - 1);
  EXPECT_EQ(a[0].bytes_to_move, 204800u * 512);
  EXPECT_NE(a[0].reason.find("up 1985 sectors"), std::string::npos) << a[0].reason;
}

TEST(PlannerTest, EmptyPartitionMovesByATableEditOnly) {
  std::vector<PlanAction> a = Actions(Gpt({{63, 204800, false}}));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, ActionKind::kTableOnly);
  EXPECT_EQ(a[0].new_start_sector, 2048u);
  EXPECT_EQ(a[0].bytes_to_move, 0u);
}

// A GPT whose areas libfdisk reports (protective MBR, header, entries, backup entries, backup
// header) with the backup header at sector `backup`.
PartitionTable GptWithBackupAt(uint64_t disk, uint64_t backup) {
  PartitionTable t = Gpt({{2048, 2048, false}}, disk);
  t.last_usable_lba = backup - 33;
  t.areas = {{"PMBR", 0, 512},
             {"GPT Header", 512, 512},
             {"GPT Entries", 1024, 16384},
             {"GPT Backup Entries", (backup - 32) * 512, 16384},
             {"GPT Backup Header", backup * 512, 512}};
  return t;
}

TEST(PlannerTest, BackupGptOfACopyOntoABiggerDiskMovesToTheEnd) {
  const uint64_t small = kDisk8GiB / 2, big = kDisk8GiB;
  std::optional<BackupGptRelocation> move = BackupRelocationFor(GptWithBackupAt(big, small - 1));
  ASSERT_TRUE(move);
  EXPECT_EQ(move->from_lba, small - 1);
  EXPECT_EQ(move->to_lba, big - 1);
  EXPECT_EQ(move->old_last_usable_lba, small - 34);
  EXPECT_EQ(move->new_last_usable_lba, big - 34);  // as sgdisk and parted make it
  EXPECT_NE(DescribeRelocation(*move).find("relocate the backup GPT from sector"),
            std::string::npos);
  DeviceInfo d;
  d.topology = DefaultTopology(512, big * 512);
  Result<Plan> plan = MakePlan(GptWithBackupAt(big, small - 1), d, kMiBAlignment);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->relocate_backup_gpt, move);
  // At the end already, or not a GPT: nothing to move.
  EXPECT_FALSE(BackupRelocationFor(GptWithBackupAt(big, big - 1)));
  PartitionTable dos = GptWithBackupAt(big, small - 1);
  dos.label = LabelType::kDos;
  EXPECT_FALSE(BackupRelocationFor(dos));
}

TEST(PlannerTest, DosCopiedOntoABiggerDiskSaysItsFreeTail) {
  // Partitions up to sector 28671 of a disk of 131072 sectors (a 14 MiB copy on 64 MiB).
  PartitionTable t = Dos({{2048, 8192, true}, {20480, 8192, true}}, 131072);
  Result<std::vector<PlanAction>> actions = PlanPartitions(t, kMiBAlignment, {});
  ASSERT_TRUE(actions) << actions.error().message;
  Plan plan;
  plan.alignment = kMiBAlignment;
  plan.actions = *actions;
  std::optional<std::string> line = DescribeFreeTail(plan, t);
  ASSERT_TRUE(line);
  EXPECT_EQ(line->substr(0, 60), "free after the last partition: sectors 28672-131071 (50 MiB)");
  // Full to less than a grain from the end: nothing to say; a GPT says it with its usable area.
  Plan unchanged;
  unchanged.alignment = kMiBAlignment;
  EXPECT_FALSE(
      DescribeFreeTail(unchanged, Dos({{2048, 8192, true}, {20480, 110000, true}}, 131072)));
  EXPECT_FALSE(DescribeFreeTail(unchanged, Gpt({{2048, 8192, true}}, 131072)));
}

TEST(PlannerTest, AlignedTableNeedsNothing) {
  std::vector<PlanAction> a = Actions(Gpt({{2048, 204800, true}, {206848, 409600, true}}));
  for (const PlanAction& x : a) {
    EXPECT_EQ(x.kind, ActionKind::kNone) << x.reason;
    EXPECT_EQ(x.new_start_sector, x.old_start_sector);
    EXPECT_EQ(x.new_end_sector, x.old_end_sector);
  }
}

TEST(PlannerTest, JMicronEraLayoutMovesEveryStartByTheSmallestShift) {
  // parted with a 65535-sector grain: back to back at 65535 x k, ends at 65535 x (k+1) - 1,
  // with free space after the last one. 65535 x k = 65536 x k - k, so moving up by k sectors
  // reaches the boundary 65536 x k (and each partition grows by one sector to end on the
  // next one); moving down would shift by 2048 - k.
  std::vector<Spec> specs;
  for (uint64_t k = 1; k <= 4; ++k) specs.push_back({65535 * k, 65535, k % 2 == 0});
  std::vector<PlanAction> a = Actions(Gpt(specs));
  ASSERT_EQ(a.size(), 4u);
  for (uint64_t k = 1; k <= 4; ++k) {
    const PlanAction& x = a[k - 1];
    EXPECT_EQ(x.new_start_sector, 65536 * k) << x.reason;
    EXPECT_EQ(x.new_end_sector, 65536 * (k + 1) - 1) << x.reason;
    EXPECT_EQ(x.kind, k % 2 == 0 ? ActionKind::kMoveData : ActionKind::kTableOnly);
    EXPECT_EQ(x.bytes_to_move, k % 2 == 0 ? 65535u * 512 : 0u);
  }
}

TEST(PlannerTest, OffsetDiskStartsAreAlignedForThatDiskOnly) {
  // parted on a disk with alignment offset 3584 (physical sectors start at LBA 7) puts the
  // first GPT partition at 2055. On that disk it is right; on a disk without the offset it is
  // 7 sectors past a boundary, and moving down by 7 is the smallest fix.
  PartitionTable t = Gpt({{2055, 204800, true}, {206855, 204800, true}});
  std::vector<PlanAction> on_offset_disk = Actions(t, {kMiB, 3584});
  for (const PlanAction& x : on_offset_disk) EXPECT_EQ(x.kind, ActionKind::kNone) << x.reason;

  std::vector<PlanAction> elsewhere = Actions(t);
  EXPECT_EQ(elsewhere[0].new_start_sector, 2048u);
  EXPECT_EQ(elsewhere[1].new_start_sector, 206848u);
  EXPECT_EQ(elsewhere[0].kind, ActionKind::kMoveData);
  EXPECT_NE(elsewhere[0].reason.find("down 7 sectors"), std::string::npos) << elsewhere[0].reason;
}

TEST(PlannerTest, BackToBackWithoutSlackCascadesUntilThereIsRoom) {
  // p1 at 63 holds data of unknown size and p2 follows it directly: p1 can only move up, and
  // then p2 must move up as well, into the free space after it.
  std::vector<PlanAction> a = Actions(Gpt({{63, 100000, true}, {100063, 100000, true}}));
  EXPECT_EQ(a[0].new_start_sector, 2048u);
  EXPECT_GE(a[0].new_end_sector, 2048u + 100000 - 1);
  EXPECT_GT(a[1].new_start_sector, a[0].new_end_sector);
  EXPECT_EQ(a[1].new_start_sector % 2048, 0u);
  EXPECT_EQ(a[1].kind, ActionKind::kMoveData);
}

TEST(PlannerTest, FullDiskWithUnknownDataIsImpossibleAndSaysHowShort) {
  // One partition from 63 to the last usable sector: moving up needs 1985 more sectors than
  // there are, and data of unknown size cannot lose them.
  const uint64_t last = kDisk8GiB - 34;
  std::vector<PlanAction> a = Actions(Gpt({{63, last - 63 + 1, true}}));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, ActionKind::kImpossible);
  EXPECT_EQ(a[0].new_start_sector, 63u);
  EXPECT_NE(a[0].reason.find("1985 sectors past the usable area"), std::string::npos)
      << a[0].reason;
  EXPECT_NE(a[0].reason.find("size is unknown"), std::string::npos) << a[0].reason;
}

TEST(PlannerTest, FullDiskWithASmallerFilesystemShrinksOnlyPastIt) {
  // Same disk, but the ext4 filesystem is 2 MiB smaller than the partition and the bytes past
  // it were read as zeros: the partition may lose them, so the start moves and the end stays
  // in the disk. Unread, they are data: impossible.
  const uint64_t last = kDisk8GiB - 34;
  const uint64_t size = last - 63 + 1;
  const uint64_t fs_bytes = (size - 4096) * 512;
  std::vector<PlanAction> unread = Actions(Gpt({{63, size, true, fs_bytes}}));
  EXPECT_EQ(unread[0].kind, ActionKind::kImpossible);
  EXPECT_NE(unread[0].reason.find("the 4096 sectors past it are not proven zero"),
            std::string::npos)
      << unread[0].reason;
  std::vector<PlanAction> a = Actions(Gpt(
      {{63, size, true, fs_bytes, PartitionKind::kPrimary, "", /*zeros_from_bytes=*/fs_bytes}}));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, ActionKind::kMoveData);
  EXPECT_EQ(a[0].new_start_sector, 2048u);
  EXPECT_LE(a[0].new_end_sector, last);
  EXPECT_GE((a[0].new_end_sector - 2048 + 1) * 512, fs_bytes);
  EXPECT_EQ(a[0].bytes_to_move, (a[0].new_end_sector - 2048 + 1) * 512);
}

TEST(PlannerTest, FullDiskAlignedPartitionIsLeftAlone) {
  const uint64_t last = kDisk8GiB - 34;
  std::vector<PlanAction> a = Actions(Gpt({{2048, last - 2048 + 1, true}}));
  EXPECT_EQ(a[0].kind, ActionKind::kNone);
  EXPECT_NE(a[0].reason.find("cannot move"), std::string::npos) << a[0].reason;
}

TEST(PlannerTest, AlignedStartWithUnalignedEndGrowsIntoFreeSpace) {
  std::vector<PlanAction> a = Actions(Gpt({{2048, 1000, true}, {8192, 2048, false}}));
  EXPECT_EQ(a[0].kind, ActionKind::kTableOnly);
  EXPECT_EQ(a[0].new_start_sector, 2048u);
  EXPECT_EQ(a[0].new_end_sector, 4095u);
  EXPECT_EQ(a[0].bytes_to_move, 0u);
  EXPECT_EQ(a[1].kind, ActionKind::kNone);
}

TEST(PlannerTest, AnAlignedPartitionIsPushedOnlyWhenNothingElseWorks) {
  // p1 (data, size unknown) at 63 ends right before p2, which is aligned and also holds data;
  // there is free space after p2. Aligning p1 needs p2 to move up by a grain.
  std::vector<PlanAction> a = Actions(Gpt({{63, 2048 * 10 - 63, true}, {20480, 20480, true}}));
  EXPECT_EQ(a[0].new_start_sector, 2048u);
  EXPECT_EQ(a[1].kind, ActionKind::kMoveData);
  EXPECT_EQ(a[1].new_start_sector, 22528u);
  EXPECT_NE(a[1].reason.find("pushed"), std::string::npos) << a[1].reason;
  // With p1's filesystem 1 MiB smaller and zeros past it, p1 shrinks instead and p2 stays.
  const uint64_t fs = (2048 * 10 - 63 - 2048) * 512;
  std::vector<PlanAction> b = Actions(
      Gpt({{63, 2048 * 10 - 63, true, fs, PartitionKind::kPrimary, "", fs}, {20480, 20480, true}}));
  EXPECT_EQ(b[0].new_start_sector, 2048u);
  EXPECT_EQ(b[0].new_end_sector, 20479u);
  EXPECT_EQ(b[1].kind, ActionKind::kNone);
}

TEST(PlannerTest, DownIsChosenWhenItIsTheShorterShift) {
  // 4095 is one sector before 4096... and 2047 past 2048: up by 1 wins; 2049 is 1 past 2048:
  // down by 1 wins (free space before it).
  std::vector<PlanAction> a = Actions(Gpt({{2049, 20480, true}}));
  EXPECT_EQ(a[0].new_start_sector, 2048u);
  std::vector<PlanAction> b = Actions(Gpt({{4095, 20480, true}}));
  EXPECT_EQ(b[0].new_start_sector, 4096u);
}

TEST(PlannerTest, EndAnchoredMetadataKeepsItsExactSize) {
  std::vector<PlanAction> a =
      Actions(Gpt({{63, 20000, true, std::nullopt, PartitionKind::kPrimary, "linux_raid_member"}}));
  EXPECT_EQ(a[0].kind, ActionKind::kMoveData);
  EXPECT_EQ(a[0].new_start_sector, 2048u);
  EXPECT_EQ(a[0].new_end_sector - a[0].new_start_sector + 1, 20000u);
}

TEST(PlannerTest, FourKnUsesGrainsOf256Sectors) {
  // A 4Kn GPT (FirstUsableLBA 6) with a partition at 6: the first 1 MiB boundary is LBA 256.
  PartitionTable t = Gpt({{6, 25600, true}}, 2097152, 4096);
  std::vector<PlanAction> a = Actions(t);
  EXPECT_EQ(a[0].new_start_sector, 256u);
  EXPECT_EQ(a[0].new_end_sector, 256u + 25600 - 1);
  EXPECT_EQ(a[0].bytes_to_move, 25600u * 4096);
}

TEST(PlannerTest, DosLogicalPartitionsKeepTheirEbrsInsideTheExtendedPartition) {
  // The old fdisk layout: p1 at 63, an extended partition on a cylinder boundary, logical
  // partitions 63 sectors after their EBRs, back to back.
  PartitionTable t = Dos({{63, 1028097, true},
                          {1028160, 4096575, false, std::nullopt, PartitionKind::kExtended},
                          {1028223, 1028097, true, std::nullopt, PartitionKind::kLogical},
                          {2056383, 1028097, false, std::nullopt, PartitionKind::kLogical},
                          {3084543, 2040192, true, std::nullopt, PartitionKind::kLogical}});
  std::vector<PlanAction> a = Actions(t);
  ASSERT_EQ(a.size(), 5u);
  const PlanAction& ext = a[1];
  EXPECT_EQ(ext.partition, 2u);
  uint64_t prev_end = 0;
  for (size_t i = 2; i < 5; ++i) {
    EXPECT_NE(a[i].kind, ActionKind::kImpossible) << a[i].reason;
    EXPECT_EQ(a[i].new_start_sector % 2048, 0u);
    EXPECT_GT(a[i].new_start_sector, ext.new_start_sector);  // the EBR lies before it
    EXPECT_LE(a[i].new_end_sector, ext.new_end_sector);
    if (prev_end != 0) {
      EXPECT_GT(a[i].new_start_sector, prev_end + 1);  // room for its EBR
    }
    prev_end = a[i].new_end_sector;
  }
  EXPECT_GT(ext.new_start_sector, a[0].new_end_sector);
  EXPECT_EQ(a[0].new_start_sector, 2048u);
}

TEST(PlannerTest, DosLogicalPartitionsNeedLibfdisksGapWhenTheFirstOneKeepsIt) {
  // Extended at 2048, first logical at 4096 (2048 after its EBR: libfdisk keeps its first LBA
  // of 2048), the next one 2048 + 1 sectors after it: aligned moves must keep that gap.
  PartitionTable t =
      Dos({{2048, 100000, false, std::nullopt, PartitionKind::kExtended},
           {4096, 20000, true, std::nullopt, PartitionKind::kLogical},
           {4096 + 20000 + 2048 + 1, 20000, true, std::nullopt, PartitionKind::kLogical}});
  std::vector<PlanAction> a = Actions(t);
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[1].new_start_sector, 4096u);
  EXPECT_EQ(a[2].new_start_sector % 2048, 0u);
  EXPECT_GE(a[2].new_start_sector, a[1].new_end_sector + 1 + 2048);
}

TEST(PlannerTest, DosCannotUseSectorsPastTwoTebibytes) {
  // A 3 TiB disk with an MBR: the partition may not grow or move past sector 2^32 - 1.
  const uint64_t disk = 3 * kTiB / 512;
  PartitionTable t = Dos({{63, kMbrMaxSector - 63 + 1, true}}, disk);
  std::vector<PlanAction> a = Actions(t);
  EXPECT_EQ(a[0].kind, ActionKind::kImpossible);
  EXPECT_NE(a[0].reason.find("4294967295"), std::string::npos) << a[0].reason;
}

TEST(PlannerTest, ImpossibleNamesTheNeighbourAndHowManySectorsAreMissing) {
  // p1 at 63 (data) ends at 2100, p2 (aligned, data) starts at 4096 and the disk is full
  // after p2: moving p1 up to 2048 needs 2038 sectors, up to 4085: fits. So this one is
  // possible; make p1 larger so that it is not.
  const uint64_t last = kDisk8GiB - 34;
  PartitionTable t = Gpt({{63, 4096 - 63, true}, {4096, last - 4096 + 1, true}});
  std::vector<PlanAction> a = Actions(t);
  EXPECT_EQ(a[0].kind, ActionKind::kImpossible);
  EXPECT_NE(a[0].reason.find("partition 2, which starts at 4096"), std::string::npos)
      << a[0].reason;
  EXPECT_NE(a[0].reason.find("1985 sectors past"), std::string::npos) << a[0].reason;
  EXPECT_EQ(a[1].kind, ActionKind::kNone);
}

TEST(PlannerTest, FirstLogicalPartitionLeavesTheExtendedPartitionsNodeFree) {
  // The old fdisk layout again: the plan puts the extended partition's start (the head EBR)
  // 2 sectors before the first logical partition, not 1: the kernel and partx give the
  // extended partition a 1 KiB node, which a logical partition starting in it overlaps (partx
  // -a: "Device or resource busy").
  PartitionTable t = Dos({{63, 1028097, true},
                          {1028160, 4096575, false, std::nullopt, PartitionKind::kExtended},
                          {1028223, 1028097, true, std::nullopt, PartitionKind::kLogical},
                          {2056383, 1028097, true, std::nullopt, PartitionKind::kLogical}});
  std::vector<PlanAction> a = Actions(t);
  ASSERT_EQ(a.size(), 4u);
  EXPECT_NE(a[2].kind, ActionKind::kImpossible) << a[2].reason;
  EXPECT_GE(a[2].new_start_sector, a[1].new_start_sector + 2) << a[1].reason;
}

TEST(PlannerTest, AnExtendedNodeTooSmallIsWidenedWhenTheTableIsWrittenAnyway) {
  // The first logical partition right after its EBR (as partalign wrote it before): left alone
  // when nothing else changes; when the table is written anyway, the extended partition starts
  // 2 sectors before it.
  PartitionTable aligned = Dos({{2048, 20480, true},
                                {24575, 100000, false, std::nullopt, PartitionKind::kExtended},
                                {24576, 20480, true, std::nullopt, PartitionKind::kLogical}});
  for (const PlanAction& x : Actions(aligned)) EXPECT_EQ(x.kind, ActionKind::kNone) << x.reason;

  PartitionTable written = aligned;
  written.partitions[0].start_sector = 2049;  // moves down to 2048
  written.partitions[0].size_sectors = 20479;
  std::vector<PlanAction> a = Actions(written);
  EXPECT_EQ(a[0].new_start_sector, 2048u);
  EXPECT_EQ(a[1].new_start_sector, 24574u) << a[1].reason;
  EXPECT_EQ(a[2].kind, ActionKind::kNone) << a[2].reason;
}

TEST(PlannerTest, PartitionsMoveDownIntoFreeSpaceAnywhere) {
  // p1 small at 2048; 100 MiB free; p2 aligned, its end 100 sectors past a boundary; p3 right
  // after it, off the grain, to the end of the disk. p3 can only move down, into p2's last 100
  // sectors: p2 moves down into the free space first (a data move, nothing shrinks).
  const uint64_t last = kDisk8GiB - 34;
  const uint64_t p2_start = 2048 + 2048 + 204800;
  const uint64_t p2_size = 2048 * 100 + 100;
  const uint64_t p3_start = p2_start + p2_size;
  std::vector<PlanAction> a = Actions(
      Gpt({{2048, 2048, true}, {p2_start, p2_size, true}, {p3_start, last - p3_start + 1, true}}));
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0].kind, ActionKind::kNone);
  EXPECT_EQ(a[1].kind, ActionKind::kMoveData) << a[1].reason;
  EXPECT_LT(a[1].new_start_sector, p2_start);
  EXPECT_NE(a[1].reason.find("down"), std::string::npos) << a[1].reason;
  EXPECT_EQ(a[2].kind, ActionKind::kMoveData) << a[2].reason;
  EXPECT_LT(a[2].new_start_sector, p3_start) << a[2].reason;
  EXPECT_EQ(a[2].new_start_sector % 2048, 0u) << a[2].reason;
  EXPECT_GT(a[2].new_start_sector, a[1].new_end_sector);
}

// The disk of issue 38 as Windows XP laid it out: 2 GiB, cylinders of 255 x 63 sectors, NTFS
// at 63, an extended partition from a cylinder to the last whole one with ext4, FAT32 and swap
// logical partitions 63 sectors after their EBRs, each filling its partition; 1339 sectors
// free at the end.
PartitionTable XpDisk() {
  constexpr uint64_t kCyl = 255 * 63;
  auto fs = [](uint64_t sectors) { return std::optional<uint64_t>(sectors * 512); };
  return Dos(
      {{63, 16 * kCyl - 63, true, std::nullopt, PartitionKind::kPrimary, "ntfs"},
       {16 * kCyl, 245 * kCyl, false, std::nullopt, PartitionKind::kExtended},
       {16 * kCyl + 63, 124 * kCyl - 63, true, fs(124 * kCyl - 63), PartitionKind::kLogical,
        "ext4"},
       {140 * kCyl + 63, 80 * kCyl - 63, true, fs(80 * kCyl - 63), PartitionKind::kLogical, "vfat"},
       {220 * kCyl + 63, 41 * kCyl - 63, true, fs(41 * kCyl - 63), PartitionKind::kLogical,
        "swap"}},
      4194304);
}

TEST(PlannerTest, TheFullXpDiskAlignsWhenTheSwapIsDiscarded) {
  PartitionTable t = XpDisk();
  ASSERT_EQ(t.partitions.back().end_sector(), 4192964u);
  size_t impossible = 0;
  for (const PlanAction& x : Actions(t)) impossible += x.kind == ActionKind::kImpossible;
  EXPECT_GT(impossible, 0u);

  PlanOptions discard;
  discard.discard = {7};
  Result<std::vector<PlanAction>> a = PlanPartitions(t, kMiBAlignment, discard);
  ASSERT_TRUE(a) << a.error().message;
  for (const PlanAction& x : *a) {
    EXPECT_NE(x.kind, ActionKind::kImpossible) << x.partition << ": " << x.reason;
    if (x.partition != 2) {
      EXPECT_EQ(x.new_start_sector % 2048, 0u) << x.reason;
    }
  }
  EXPECT_EQ((*a)[4].kind, ActionKind::kTableOnly);
  EXPECT_EQ((*a)[4].empty, Emptiness::kDiscarded);
}

TEST(PlannerTest, OverlappingPartitionsAreAnError) {
  Result<std::vector<PlanAction>> r =
      PlanPartitions(Gpt({{2048, 4096, true}, {4000, 4096, true}}), kMiBAlignment);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("overlap"), std::string::npos) << r.error().message;
}

TEST(PlannerTest, AlignmentThatIsNotWholeSectorsIsAnError) {
  Result<std::vector<PlanAction>> r = PlanPartitions(Gpt({{2048, 4096}}), {kMiB, 1000});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("not a whole number"), std::string::npos);
}

TEST(PlannerTest, ProtectedSectorsFollowTheFilesystem) {
  Partition p;
  p.size_sectors = 10000;
  EXPECT_EQ(ProtectedSectors(p, 512, 2048), 10000u);  // not proven empty: all of it
  p.contents.proof = ContentProof::kZeros;
  EXPECT_EQ(ProtectedSectors(p, 512, 2048), 2048u);  // proven empty: a grain
  p.size_sectors = 1000;
  EXPECT_EQ(ProtectedSectors(p, 512, 2048), 1000u);  // below a grain: keeps its size
  p.contents.proof = ContentProof::kData;
  EXPECT_EQ(ProtectedSectors(p, 512, 2048), 1000u);  // data of unknown size: all of it
  p.contents.fs_type = "ext4";
  p.contents.fs_size_bytes = 600 * 512 + 1;
  // Past the filesystem: data until read (a partition never shrinks in silence).
  EXPECT_EQ(ProtectedSectors(p, 512, 2048), 1000u);
  EXPECT_EQ(ProtectedSectors(p, 512, 2048, /*unread_tail_as_zeros=*/true), 601u);
  p.contents.zeros_from_bytes = 800 * 512;  // read from sector 800: zeros
  EXPECT_EQ(ProtectedSectors(p, 512, 2048), 800u);
  p.contents.zeros_from_bytes = 0;
  EXPECT_EQ(ProtectedSectors(p, 512, 2048), 601u);  // rounded up to whole sectors
  p.contents.tail_data_bytes = 900 * 512;           // data found past it: all of it
  EXPECT_EQ(ProtectedSectors(p, 512, 2048, /*unread_tail_as_zeros=*/true), 1000u);
  p.contents.tail_data_bytes.reset();
  p.contents.fs_size_bytes = 2000 * 512;
  EXPECT_EQ(ProtectedSectors(p, 512, 2048), 1000u);  // larger than the partition: all of it
  p.contents.fs_type = "linux_raid_member";
  p.contents.fs_size_bytes = 100 * 512;
  EXPECT_EQ(ProtectedSectors(p, 512, 2048), 1000u);
}

TEST(PlannerTest, MakePlanBindsTheDiskAndTheTable) {
  PartitionTable t = Gpt({{63, 204800, true}});
  t.fingerprint = "xxh64:00112233aabbccdd";
  DeviceInfo d;
  d.identity.path = "/dev/sdx";
  d.identity.serial = "S123";
  d.topology = DefaultTopology(512, kDisk8GiB * 512);
  Result<Plan> p = MakePlan(t, d, kMiBAlignment);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->disk.path, "/dev/sdx");
  EXPECT_EQ(p->disk.serial, "S123");
  EXPECT_EQ(p->disk.size_bytes, kDisk8GiB * 512);
  EXPECT_EQ(p->table_fingerprint, t.fingerprint);
  EXPECT_EQ(p->label, LabelType::kGpt);
  EXPECT_EQ(p->actions.size(), 1u);
  EXPECT_EQ(PlanSummary(*p),
            "1 partition: 0 unchanged, 0 table-only, 1 move data (100 MiB), 0 impossible");
  // A table read with another sector size than the topology's is refused.
  d.topology = DefaultTopology(4096, kDisk8GiB * 512);
  EXPECT_FALSE(MakePlan(t, d, kMiBAlignment));
}

}  // namespace
}  // namespace partalign

namespace partalign {
namespace {

// `t` with the plan's actions carried out: each partition at its new place.
PartitionTable Applied(PartitionTable t, const std::vector<PlanAction>& actions) {
  for (Partition& p : t.partitions) {
    for (const PlanAction& a : actions) {
      if (a.partition != p.number) continue;
      p.start_sector = a.new_start_sector;
      p.size_sectors = a.new_end_sector - a.new_start_sector + 1;
    }
  }
  return t;
}

bool ChangesTheTable(const std::vector<PlanAction>& actions) {
  return std::any_of(actions.begin(), actions.end(), [](const PlanAction& a) {
    return a.kind == ActionKind::kTableOnly || a.kind == ActionKind::kMoveData;
  });
}

TEST(PlannerTest, TheFirstLogicalPartitionMovesDownOverItsEbrInOnePlan) {
  // Seed 43 case 225 of the sweep, cut down: the first logical partition (data whose size is
  // unknown) one sector after the extended start 36864, the disk full after it. Aligning it
  // means moving it down onto the head EBR: the extended start goes 2 sectors below the new
  // start (apply writes that table alone first). The plan did it in two rounds (36863 and
  // "impossible", then 36862 and the move); one plan must reach the layout, and a second plan
  // on it find nothing to do.
  const uint64_t disk = 120670;
  PartitionTable t =
      Dos({{3130, 32234, false},
           {36864, disk - 36864, false, std::nullopt, PartitionKind::kExtended},
           {36865, 21320, true, std::nullopt, PartitionKind::kLogical, "crypto_LUKS"},
           {58186, disk - 58186, true, std::nullopt, PartitionKind::kLogical}},
          disk);
  std::vector<PlanAction> a = Actions(t);
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a[2].kind, ActionKind::kMoveData) << a[2].reason;
  EXPECT_EQ(a[2].new_start_sector, 36864u);
  EXPECT_EQ(a[1].new_start_sector, 36862u) << a[1].reason;
  for (const PlanAction& again : Actions(Applied(t, a))) {
    EXPECT_TRUE(again.kind == ActionKind::kNone || again.kind == ActionKind::kImpossible)
        << again.partition << ": " << again.reason;
    EXPECT_EQ(again.new_start_sector, again.old_start_sector) << again.partition;
  }
}

TEST(PlannerTest, AfterAShrinkLogicalPartitionsMoveOnlyAboveTheEbrsLibfdiskWrites) {
  // Seed 47 case 818 of the sweep, cut down: an old fdisk's layout (each EBR 63 sectors before
  // its logical partition), partition 1 shrunk to make room. The shrink's table is written by
  // libfdisk, which puts every EBR but the head right before its partition (partition 1 starts
  // below its first LBA, so that is 1). Logical partition 6 starts 12 sectors past a MiB: the
  // plan moved it down those 12 sectors, above its old EBR but over the one the shrink writes,
  // and apply refused the rest after the shrink was written.
  const uint64_t disk = 128076 + 100;
  PartitionTable t = Dos({{63, 48132, true, 3 * kMiB},
                          {48195, disk - 48195, false, std::nullopt, PartitionKind::kExtended},
                          {48258, 39755, true, std::nullopt, PartitionKind::kLogical, "ntfs"},
                          {88076, 40000, true, std::nullopt, PartitionKind::kLogical, "xfs"}},
                         disk);
  t.areas = {{"EBR", 48195 * 512, 512}, {"EBR", 88013 * 512, 512}};
  PlanOptions options;
  options.shrinks.push_back({1, ShrinkTool::kResize2fs, 44036});
  Result<PartitionTable> shrunk = ShrunkTable(t, options);
  ASSERT_TRUE(shrunk) << shrunk.error().message;
  const std::map<uint32_t, uint64_t> written = PredictEbrSectors(*shrunk, t.first_usable_lba);
  EXPECT_EQ(written.at(6), 88075u);
  EXPECT_EQ(TableEbrSectors(*shrunk), written);
  Result<std::vector<PlanAction>> a = PlanPartitions(t, kMiBAlignment, options);
  ASSERT_TRUE(a) << a.error().message;
  ASSERT_EQ(a->size(), 4u);
  const PlanAction& six = (*a)[3];
  EXPECT_FALSE(six.new_start_sector < six.old_start_sector && six.new_start_sector <= written.at(6))
      << six.new_start_sector << ": " << six.reason;
  // Nothing else can align it (partition 5 is an NTFS, which keeps its end): the reason says
  // what stops the move down.
  EXPECT_EQ(six.kind, ActionKind::kImpossible) << six.reason;
  EXPECT_NE(six.reason.find("over its own EBR at sector 88075"), std::string::npos) << six.reason;
}

TEST(PlannerTest, ALogicalPartitionMovedDownStaysClearOfTheNextPartitionsEbr) {
  // Seed 48 case 338 of the sweep: an old fdisk's layout (each EBR 63 sectors before its
  // logical partition). Partition 7 (data) starts 12 sectors past a MiB; apply can move it down
  // only before any other step rewrites the table (which puts its EBR right before it), so its
  // step comes first - and then its new place may not reach partition 8's EBR as it is on the
  // disk: the plan grew it to the next MiB over that EBR, so its step needed partition 8's move
  // first, and apply refused the plan.
  const uint64_t disk = 277690;
  PartitionTable t =
      Dos({{63, 64197},
           {64260, 32130, true},
           {96390, 273104 - 96390 + 1, false, std::nullopt, PartitionKind::kExtended},
           {96453, 48132, true, std::nullopt, PartitionKind::kLogical},
           {144648, 64197, false, std::nullopt, PartitionKind::kLogical},
           {208908, 32067, true, std::nullopt, PartitionKind::kLogical},
           {241038, 32067, true, std::nullopt, PartitionKind::kLogical}},
          disk);
  t.areas = {{"EBR", 96390 * 512, 512},
             {"EBR", 144585 * 512, 512},
             {"EBR", 208845 * 512, 512},
             {"EBR", 240975 * 512, 512}};
  std::vector<PlanAction> a = Actions(t);
  ASSERT_EQ(a.size(), 7u);
  const PlanAction& seven = a[5];
  ASSERT_EQ(seven.partition, 7u);
  EXPECT_EQ(seven.kind, ActionKind::kMoveData) << seven.reason;
  ASSERT_LT(seven.new_start_sector, seven.old_start_sector) << seven.reason;
  EXPECT_LT(seven.new_end_sector, 240975u) << seven.reason;
}

TEST(PlannerTest, NoTableIsWrittenWithTheFirstLogicalPartitionInsideTheExtendedNode) {
  // Seed 43 case 408 of the sweep, cut down: two primaries with data fill the disk up to the
  // extended partition, whose first logical partition (data) starts 1 sector after it; nothing
  // can move down or make room before it. Partition 6 could move up into the 1600 sectors free
  // after it (partition 5 could not follow: aligned, it needs more), but a table that does so
  // keeps partition 5 inside the extended partition's 2-sector node, which partx and BLKPG
  // refuse: no table is written, and the reason says why.
  const uint64_t disk = 145393 + 1600;
  PartitionTable t = Dos({{63, 34216, true},
                          {34279, 31517, true},
                          {65796, disk - 65796, false, std::nullopt, PartitionKind::kExtended},
                          {65797, 35039, true, std::nullopt, PartitionKind::kLogical},
                          {100837, 44556, true, std::nullopt, PartitionKind::kLogical}},
                         disk);
  std::vector<PlanAction> a = Actions(t);
  ASSERT_EQ(a.size(), 5u);
  PartitionTable after = Applied(t, a);
  if (ChangesTheTable(a)) {
    EXPECT_GE(after.partitions[3].start_sector, after.partitions[2].start_sector + 2)
        << a[2].reason;
  }
  EXPECT_EQ(a[4].kind, ActionKind::kImpossible) << a[4].reason;
  EXPECT_NE(a[4].reason.find("Device or resource busy"), std::string::npos) << a[4].reason;
}

}  // namespace
}  // namespace partalign
