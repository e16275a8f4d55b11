// SPDX-License-Identifier: GPL-3.0-or-later
// "Empty is proven, never guessed": a partition without a signature is moved whole unless
// every byte was read as zero, an image's hole map shows only holes, or the user discarded it
// (docs/audit-plan.md, "Empty is proven"). The proofs come from the I/O edge; here, what the
// planner does with each.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "partalign/layout/plan.h"
#include "partalign/layout/planner.h"
#include "partalign/table/plan_check.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

constexpr uint64_t kDiskSectors = 262144;  // 128 MiB of 512-byte sectors

// A DOS disk with one partition at 63 (49 MiB, the case) and an aligned one after it.
PartitionTable LegacyDisk(ContentProof proof, std::string fs_type = "") {
  PartitionTable t;
  t.label = LabelType::kDos;
  t.sector_size = 512;
  t.disk_size_sectors = kDiskSectors;
  t.first_usable_lba = 2048;
  t.last_usable_lba = kDiskSectors - 1;
  t.fingerprint = "xxh64:0000000000000001";
  Partition p;
  p.number = 1;
  p.start_sector = 63;
  p.size_sectors = 100000;
  p.type_code = "0x83";
  p.contents.proof = proof;
  p.contents.fs_type = std::move(fs_type);
  if (proof == ContentProof::kData) p.contents.data_offset_bytes = kMiB;
  Partition q;
  q.number = 2;
  q.start_sector = 120832;
  q.size_sectors = 20480;
  q.type_code = "0x83";
  q.contents.proof = ContentProof::kSignature;
  q.contents.fs_type = "ext4";
  t.partitions = {p, q};
  return t;
}

const Alignment kMiBGrain{kMiB, 0};

PlanAction First(const PartitionTable& t, const PlanOptions& options = {}) {
  Result<std::vector<PlanAction>> actions = PlanPartitions(t, kMiBGrain, options);
  EXPECT_TRUE(actions) << actions.error().message;
  return actions && !actions->empty() ? actions->front() : PlanAction{};
}

TEST(PlannerEmptinessTest, NoSignatureAndAZeroHeadIsMovedWholeNotLeftBehind) {
  // The case: the first MiB zeros, raw data after it, never read: it may hold data.
  const PlanAction a = First(LegacyDisk(ContentProof::kUnscanned));
  EXPECT_EQ(a.kind, ActionKind::kMoveData);
  EXPECT_EQ(a.new_start_sector, 2048u);
  EXPECT_EQ(a.bytes_to_move, 100000u * 512);  // all of it: its size is kept
  EXPECT_EQ(a.empty, Emptiness::kNotClaimed);
  EXPECT_NE(a.reason.find("no signature, not proven empty: moved whole, 48.83 MiB"),
            std::string::npos)
      << a.reason;
  // Never shrunk: what it holds has no known size.
  EXPECT_GE(a.new_end_sector - a.new_start_sector + 1, 100000u);
}

TEST(PlannerEmptinessTest, DataFoundAnywhereIsMovedWholeAndSaysWhere) {
  const PlanAction a = First(LegacyDisk(ContentProof::kData));
  EXPECT_EQ(a.kind, ActionKind::kMoveData);
  EXPECT_NE(a.reason.find("no signature, data at byte 1048576: moved whole"), std::string::npos)
      << a.reason;
}

TEST(PlannerEmptinessTest, OnlyAProofMakesItTableOnly) {
  const PlanAction zeros = First(LegacyDisk(ContentProof::kZeros));
  EXPECT_EQ(zeros.kind, ActionKind::kTableOnly);
  EXPECT_EQ(zeros.empty, Emptiness::kZeros);
  EXPECT_NE(zeros.reason.find("read all 48.83 MiB: zeros"), std::string::npos) << zeros.reason;
  const PlanAction holes = First(LegacyDisk(ContentProof::kHoles));
  EXPECT_EQ(holes.kind, ActionKind::kTableOnly);
  EXPECT_EQ(holes.empty, Emptiness::kHoles);
  EXPECT_NE(holes.reason.find("only holes"), std::string::npos) << holes.reason;
}

TEST(PlannerEmptinessTest, DiscardGivesUpWhateverItHolds) {
  PlanOptions options;
  options.discard = {1};
  const PlanAction a = First(LegacyDisk(ContentProof::kSignature, "ext4"), options);
  EXPECT_EQ(a.kind, ActionKind::kTableOnly);
  EXPECT_EQ(a.empty, Emptiness::kDiscarded);
  EXPECT_NE(a.reason.find("contents discarded (--discard): its ext4 is given up"),
            std::string::npos)
      << a.reason;
}

TEST(PlannerEmptinessTest, TheFirstPassFindsWhatIsWorthReading) {
  PartitionTable t = LegacyDisk(ContentProof::kUnscanned);
  PlanOptions optimistic;
  optimistic.unscanned_as_empty = true;
  Result<std::vector<PlanAction>> first = PlanPartitions(t, kMiBGrain, optimistic);
  ASSERT_TRUE(first);
  // Planned empty, but the claim stays unproven: such a plan is never shown or applied.
  EXPECT_EQ((*first)[0].kind, ActionKind::kTableOnly);
  EXPECT_EQ((*first)[0].empty, Emptiness::kNotClaimed);
  EXPECT_EQ(PartitionsWorthProving(t, *first, {}), std::vector<uint32_t>{1});
  // Discarded, proven or untouched partitions are not worth reading.
  PlanOptions discard;
  discard.discard = {1};
  EXPECT_TRUE(PartitionsWorthProving(t, *first, discard).empty());
  t.partitions[0].contents.proof = ContentProof::kZeros;
  EXPECT_TRUE(PartitionsWorthProving(t, *first, {}).empty());
  PartitionTable aligned = LegacyDisk(ContentProof::kUnscanned);
  aligned.partitions[0].start_sector = 2048;
  aligned.partitions[0].size_sectors = 100352;
  Result<std::vector<PlanAction>> none = PlanPartitions(aligned, kMiBGrain, optimistic);
  ASSERT_TRUE(none);
  EXPECT_TRUE(PartitionsWorthProving(aligned, *none, {}).empty());
}

TEST(PlannerEmptinessTest, DiscardNamesARealPartition) {
  PartitionTable t = LegacyDisk(ContentProof::kUnscanned);
  DeviceInfo device;
  device.topology = {512, 512, 512, 0, 0, kDiskSectors * 512, TopologyOrigin::kDefault};
  PlanOptions options;
  options.discard = {7};
  Result<Plan> plan = MakePlan(t, device, kMiBGrain, options);
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().message, "--discard 7: there is no partition 7");
}

TEST(PlannerEmptinessTest, PlanFilesCarryTheClaimAndRefuseNonsense) {
  PartitionTable t = LegacyDisk(ContentProof::kZeros);
  DeviceInfo device;
  device.identity.path = "disk.img";
  device.topology = {512, 512, 512, 0, 0, kDiskSectors * 512, TopologyOrigin::kDefault};
  Result<Plan> plan = MakePlan(t, device, kMiBGrain);
  ASSERT_TRUE(plan) << plan.error().message;
  const std::string text = PlanToJson(*plan).dump();
  EXPECT_NE(text.find("\"empty\":\"zeros\""), std::string::npos) << text;
  Result<Plan> back = PlanFromJson(text);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, *plan);
  std::string bogus = text;
  bogus.replace(bogus.find("\"empty\":\"zeros\""), 15, "\"empty\":\"maybe\"");
  Result<Plan> refused = PlanFromJson(bogus);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message, "actions[0].empty: unknown value 'maybe'");
}

TEST(PlannerEmptinessTest, ApplyRefusesATableOnlyMoveOfWhatIsNotProvenEmpty) {
  // A plan made when the partition read as zeros (or edited by hand), applied to a disk where
  // it is not proven empty: the data would stay behind.
  PartitionTable zeros = LegacyDisk(ContentProof::kZeros);
  DeviceInfo device;
  device.topology = {512, 512, 512, 0, 0, kDiskSectors * 512, TopologyOrigin::kDefault};
  Result<Plan> plan = MakePlan(zeros, device, kMiBGrain);
  ASSERT_TRUE(plan);
  EXPECT_TRUE(PlanInconsistencies(*plan, zeros).empty());
  PartitionTable now = LegacyDisk(ContentProof::kData);
  std::vector<std::string> bad = PlanInconsistencies(*plan, now);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0],
            "partition 1 holds data (no signature, byte 1048576 is not zero) but the plan moves "
            "its start as 'table-only': the data would stay behind");
  now.partitions[0].contents.proof = ContentProof::kUnscanned;
  bad = PlanInconsistencies(*plan, now);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_NE(bad[0].find("may hold data (no signature, not proven empty)"), std::string::npos);
  // What apply must prove, and what the user gave up.
  LeftBehind left = PartitionsLeftBehind(*plan, now);
  EXPECT_EQ(left.to_prove, std::vector<uint32_t>{1});
  EXPECT_TRUE(left.discarded.empty());
  plan->actions[0].empty = Emptiness::kDiscarded;
  EXPECT_TRUE(PlanInconsistencies(*plan, now).empty());
  left = PartitionsLeftBehind(*plan, now);
  EXPECT_TRUE(left.to_prove.empty());
  EXPECT_EQ(left.discarded, std::vector<uint32_t>{1});
}

TEST(PlannerEmptinessTest, ShrinkingDataOfUnknownSizeIsRefused) {
  PartitionTable t = LegacyDisk(ContentProof::kUnscanned);
  t.partitions[0].start_sector = 2048;
  Plan plan;
  plan.label = LabelType::kDos;
  plan.alignment = kMiBGrain;
  plan.actions = {{1, 2048, 102047, 2048, 51199, ActionKind::kTableOnly, 0, "shrink"}};
  std::vector<std::string> bad = PlanInconsistencies(plan, t);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_NE(bad[0].find("shrinks it as 'table-only': the bytes past its new end would be cut off"),
            std::string::npos)
      << bad[0];
}

}  // namespace
}  // namespace partalign

namespace partalign {
namespace {

// A table of 512-byte sectors without partitions.
PartitionTable EmptyTable(LabelType label, uint64_t disk_sectors, uint64_t first_usable,
                          uint64_t last_usable) {
  PartitionTable t;
  t.label = label;
  t.sector_size = 512;
  t.disk_size_sectors = disk_sectors;
  t.first_usable_lba = first_usable;
  t.last_usable_lba = last_usable;
  return t;
}

TEST(PlannerBootTest, ABiosBootPartitionStaysWhereItIs) {
  // GRUB's core.img in a BIOS boot partition at 34 (as gdisk made them), /boot after it off the
  // grain: only /boot moves; the BIOS boot partition is left with the reason.
  PartitionTable t = EmptyTable(LabelType::kGpt, kDiskSectors, 34, kDiskSectors - 34);
  Partition bios;
  bios.number = 1;
  bios.start_sector = 34;
  bios.size_sectors = 2014;
  bios.type_code = std::string(kBiosBootPartitionType);
  bios.contents.proof = ContentProof::kData;
  Partition boot;
  boot.number = 2;
  boot.start_sector = 2081;
  boot.size_sectors = 40000;
  boot.type_code = "0FC63DAF-8483-4772-8E79-3D69D8477DE4";
  boot.contents.proof = ContentProof::kSignature;
  boot.contents.fs_type = "ext2";
  t.partitions = {bios, boot};
  Result<std::vector<PlanAction>> actions = PlanPartitions(t, kMiBGrain);
  ASSERT_TRUE(actions) << actions.error().message;
  EXPECT_EQ((*actions)[0].kind, ActionKind::kNone);
  EXPECT_EQ((*actions)[0].reason, std::string(kBiosBootPartitionReason) + "; left where it is");
  EXPECT_EQ((*actions)[1].kind, ActionKind::kMoveData);
  EXPECT_EQ((*actions)[1].new_start_sector, 2048u);
}

// A GPT of `count` partitions of 63 MiB every 64 MiB (scripts/bench-plan's loop device), each
// with `contents`.
PartitionTable AlignedGpt(size_t count, const PartitionContents& contents) {
  const uint64_t disk = (count + 2) * 131072;
  PartitionTable t = EmptyTable(LabelType::kGpt, disk, 34, disk - 34);
  for (size_t i = 1; i <= count; ++i) {
    Partition p;
    p.number = static_cast<uint32_t>(i);
    p.start_sector = i * 131072;
    p.size_sectors = 63 * 2048;
    p.contents = contents;
    t.partitions.push_back(p);
  }
  return t;
}

// What a partition may be known to hold: nothing read, proven empty, a filesystem smaller than
// the partition with its tail read as zeros, metadata at its end, data found.
std::vector<PartitionContents> EveryKindOfContents() {
  std::vector<PartitionContents> all(5);
  all[1].proof = ContentProof::kZeros;
  all[2].proof = ContentProof::kSignature;
  all[2].fs_type = "ext4";
  all[2].fs_size_bytes = kMiB;
  all[2].zeros_from_bytes = kMiB;
  all[3].proof = ContentProof::kSignature;
  all[3].fs_type = "linux_raid_member";
  all[4].proof = ContentProof::kData;
  all[4].data_offset_bytes = 512;
  return all;
}

TEST(PlannerEmptinessTest, AnAlignedTableIsPlannedTheSameWhateverItsPartitionsHold) {
  // Planned with nothing read (plan's first look at a disk), the aligned table changes nothing:
  // then no contents, no discard and no first pass of a proof give another plan, so plan does
  // not read them.
  const PartitionTable unread = AlignedGpt(8, {});
  Result<std::vector<PlanAction>> first = PlanPartitions(unread, kMiBGrain);
  ASSERT_TRUE(first) << first.error().message;
  ASSERT_TRUE(PlanIgnoresContents(unread, kMiBGrain, *first));
  for (const PartitionContents& c : EveryKindOfContents()) {
    PartitionTable t = AlignedGpt(8, c);
    // One partition in three proven empty and the next one holding data, mixed.
    t.partitions[2].contents.proof = ContentProof::kZeros;
    t.partitions[5].contents.proof = ContentProof::kHoles;
    for (bool optimistic : {false, true}) {
      PlanOptions options;
      options.unscanned_as_empty = optimistic;
      options.discard = {4};
      Result<std::vector<PlanAction>> again = PlanPartitions(t, kMiBGrain, options);
      ASSERT_TRUE(again) << again.error().message;
      EXPECT_EQ(*again, *first) << ToString(c.proof) << " " << c.fs_type;
      EXPECT_TRUE(PartitionsWorthProving(t, *again, options).empty());
      EXPECT_TRUE(TailsToProve(t, *again, options).empty());
    }
  }
}

TEST(PlannerEmptinessTest, ContentsMatterOnceAStartOrAnEndIsOffTheAlignment) {
  const PartitionTable aligned = AlignedGpt(3, {});
  // An end off the alignment: the partition grows into the free space after it (a change).
  PartitionTable end = aligned;
  end.partitions[1].size_sectors -= 7;
  // A start off the alignment: the partition moves.
  PartitionTable start = aligned;
  start.partitions[1].start_sector += 63;
  start.partitions[1].size_sectors -= 63;
  for (const PartitionTable* t : {&end, &start}) {
    Result<std::vector<PlanAction>> actions = PlanPartitions(*t, kMiBGrain);
    ASSERT_TRUE(actions) << actions.error().message;
    EXPECT_FALSE(PlanIgnoresContents(*t, kMiBGrain, *actions));
  }
  // Actions that are not the plan of the table (another table's) prove nothing either.
  Result<std::vector<PlanAction>> moved = PlanPartitions(start, kMiBGrain);
  ASSERT_TRUE(moved);
  EXPECT_FALSE(PlanIgnoresContents(aligned, kMiBGrain, *moved));
  // The unread partition that moves would be moved whole, and proven empty it would not: here
  // the contents decide, so they must be read.
  PartitionTable proven = start;
  proven.partitions[1].contents.proof = ContentProof::kZeros;
  Result<std::vector<PlanAction>> table_only = PlanPartitions(proven, kMiBGrain);
  ASSERT_TRUE(table_only);
  EXPECT_EQ((*moved)[1].kind, ActionKind::kMoveData);
  EXPECT_EQ((*table_only)[1].kind, ActionKind::kTableOnly);
}

TEST(PlannerEmptinessTest, AnAlignedDosTableWithLogicalPartitionsIgnoresContentsToo) {
  PartitionTable t = EmptyTable(LabelType::kDos, kDiskSectors, 2048, kDiskSectors - 1);
  t.partitions = {
      {.number = 1, .kind = PartitionKind::kPrimary, .start_sector = 2048, .size_sectors = 20480},
      {.number = 2, .kind = PartitionKind::kExtended, .start_sector = 22528, .size_sectors = 81920},
      {.number = 5, .kind = PartitionKind::kLogical, .start_sector = 24576, .size_sectors = 20480},
      {.number = 6, .kind = PartitionKind::kLogical, .start_sector = 47104, .size_sectors = 20480}};
  Result<std::vector<PlanAction>> first = PlanPartitions(t, kMiBGrain);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_TRUE(PlanIgnoresContents(t, kMiBGrain, *first));
  for (const PartitionContents& c : EveryKindOfContents()) {
    PartitionTable known = t;
    for (Partition& p : known.partitions) {
      if (p.kind != PartitionKind::kExtended) p.contents = c;
    }
    Result<std::vector<PlanAction>> again = PlanPartitions(known, kMiBGrain);
    ASSERT_TRUE(again) << again.error().message;
    EXPECT_EQ(*again, *first) << ToString(c.proof) << " " << c.fs_type;
  }
}
}  // namespace
}  // namespace partalign
