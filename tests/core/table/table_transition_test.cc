// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/table/table_transition.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <utility>

#include "partalign/util/base64.h"

namespace partalign {
namespace {

constexpr uint64_t kDisk = 64ull << 20;

// The areas libfdisk lists for a GPT on a 64 MiB disk with `ss`-byte sectors.
std::vector<TableArea> GptAreas(uint64_t ss) {
  const uint64_t entries = 128 * 128;
  return {{"PMBR", 0, 512},
          {"GPT Header", ss, 92},
          {"GPT Entries", 2 * ss, entries},
          {"GPT Backup Entries", kDisk - ss - entries, entries},
          {"GPT Backup Header", kDisk - ss, 92}};
}

std::vector<TableArea> DosAreas(std::vector<uint64_t> ebr_sectors) {
  std::vector<TableArea> areas{{"MBR", 0, 512}};
  for (uint64_t s : ebr_sectors) areas.push_back({"EBR", s * 512, 512});
  return areas;
}

std::vector<TableAreaRole> Roles(const TableTransition& t) {
  std::vector<TableAreaRole> roles;
  for (const TableRange& r : t.ranges) roles.push_back(r.role);
  return roles;
}

// Fills old and new bytes: `changed` ranges (by offset) get new bytes that differ.
void Fill(TableTransition* t, std::vector<uint64_t> changed_offsets) {
  for (TableRange& r : t->ranges) {
    r.old_bytes.assign(r.length_bytes, 0x11);
    r.new_bytes = r.old_bytes;
    for (uint64_t off : changed_offsets) {
      if (off == r.offset_bytes) r.new_bytes.assign(r.length_bytes, 0x22);
    }
  }
}

TEST(TableTransitionTest, GptIsWrittenBackupFirstPrimaryLast) {
  Result<TableTransition> t =
      LayoutTransition(LabelType::kGpt, 512, kDisk, GptAreas(512), GptAreas(512));
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(Roles(*t),
            (std::vector<TableAreaRole>{TableAreaRole::kGptBackupEntries,
                                        TableAreaRole::kGptBackupHeader, TableAreaRole::kGptEntries,
                                        TableAreaRole::kGptHeader, TableAreaRole::kMbr}));
  // Whole sectors: the 92-byte header is written as the sector that holds it.
  EXPECT_EQ(t->ranges[1].offset_bytes, kDisk - 512);
  EXPECT_EQ(t->ranges[1].length_bytes, 512u);
  EXPECT_EQ(t->ranges[0].length_bytes, 16384u);
  for (const TableRange& r : t->ranges) {
    EXPECT_EQ(r.old_index, 0u);
    EXPECT_EQ(r.new_index, 0u);
  }
}

TEST(TableTransitionTest, FourKSectorsRoundAreasOutToWholeSectors) {
  Result<TableTransition> t =
      LayoutTransition(LabelType::kGpt, 4096, kDisk, GptAreas(4096), GptAreas(4096));
  ASSERT_TRUE(t) << t.error().message;
  for (const TableRange& r : t->ranges) {
    EXPECT_EQ(r.offset_bytes % 4096, 0u) << ToString(r.role);
    EXPECT_EQ(r.length_bytes % 4096, 0u) << ToString(r.role);
  }
  EXPECT_EQ(t->ranges.back().role, TableAreaRole::kMbr);
  EXPECT_EQ(t->ranges.back().length_bytes, 4096u);  // the 512-byte PMBR in its 4 KiB sector
}

TEST(TableTransitionTest, DosWritesNewPlacesThenSwitchesThenOldPlaces) {
  // Old chain: head 30000, then 44999, 61439. New chain: head 30000, then 43008, 59392.
  Result<TableTransition> t =
      LayoutTransition(LabelType::kDos, 512, kDisk, DosAreas({30000, 44999, 61439}),
                       DosAreas({30000, 43008, 59392}));
  ASSERT_TRUE(t) << t.error().message;
  std::vector<uint64_t> order;
  for (const TableRange& r : t->ranges) order.push_back(r.offset_bytes / 512);
  EXPECT_EQ(order, (std::vector<uint64_t>{43008, 59392, 30000, 0, 44999, 61439}));
  EXPECT_EQ(AreaName(LabelType::kDos, t->ranges[0]), "EBR of partition 6 (new place)");
  EXPECT_EQ(AreaName(LabelType::kDos, t->ranges[2]), "EBR of partition 5");
  EXPECT_EQ(AreaName(LabelType::kDos, t->ranges[3]), "MBR");
  EXPECT_EQ(AreaName(LabelType::kDos, t->ranges[5]), "EBR of partition 7 (old place)");
  EXPECT_EQ(t->ranges[1].new_index, 2u);
  EXPECT_FALSE(t->ranges[1].old_index);
}

TEST(TableTransitionTest, DosChainRewrittenInPlaceGoesFromItsEndToItsHead) {
  Result<TableTransition> t = LayoutTransition(
      LabelType::kDos, 512, kDisk, DosAreas({100, 200, 300}), DosAreas({100, 200, 300}));
  ASSERT_TRUE(t) << t.error().message;
  std::vector<uint64_t> order;
  for (const TableRange& r : t->ranges) order.push_back(r.offset_bytes / 512);
  EXPECT_EQ(order, (std::vector<uint64_t>{300, 200, 100, 0}));
}

TEST(TableTransitionTest, BadAreasAreErrors) {
  std::vector<TableArea> shifted = GptAreas(512);
  shifted[2].size_bytes = 128 * 64;  // another entry array size at the same place
  Result<TableTransition> t = LayoutTransition(LabelType::kGpt, 512, kDisk, GptAreas(512), shifted);
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("table areas overlap"), std::string::npos) << t.error().message;
  std::vector<TableArea> outside = GptAreas(512);
  outside[4].offset_bytes = kDisk;
  t = LayoutTransition(LabelType::kGpt, 512, kDisk, outside, GptAreas(512));
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("is not inside the disk"), std::string::npos);
  std::vector<TableArea> short_list = GptAreas(512);
  short_list.pop_back();
  t = LayoutTransition(LabelType::kGpt, 512, kDisk, short_list, GptAreas(512));
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("has 4 table areas, not 5"), std::string::npos);
  t = LayoutTransition(LabelType::kOther, 512, kDisk, {}, {});
  EXPECT_FALSE(t);
}

TEST(TableTransitionTest, ValidateRejectsWhatCannotBeWritten) {
  Result<TableTransition> t =
      LayoutTransition(LabelType::kGpt, 512, kDisk, GptAreas(512), GptAreas(512));
  ASSERT_TRUE(t);
  Fill(&*t, {});
  EXPECT_TRUE(ValidateTransition(*t));
  TableTransition bad = *t;
  bad.ranges[0].new_bytes.pop_back();
  EXPECT_FALSE(ValidateTransition(bad));
  bad = *t;
  bad.ranges[0].offset_bytes += 1;
  EXPECT_FALSE(ValidateTransition(bad));
  bad = *t;
  bad.ranges[2].offset_bytes = bad.ranges[3].offset_bytes;  // entries over the header
  Status s = ValidateTransition(bad);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("overlap"), std::string::npos) << s.error().message;
  bad = *t;
  bad.ranges[1].role = TableAreaRole::kGptHeader;
  EXPECT_FALSE(ValidateTransition(bad));
  bad = *t;
  bad.ranges[0].old_index.reset();
  bad.ranges[0].new_index.reset();
  EXPECT_FALSE(ValidateTransition(bad));
}

TEST(TableTransitionTest, InverseSwapsAndReorders) {
  Result<TableTransition> t = LayoutTransition(LabelType::kDos, 512, kDisk,
                                               DosAreas({30000, 44999}), DosAreas({30000, 43008}));
  ASSERT_TRUE(t);
  Fill(&*t, {43008 * 512, 30000 * 512, 0});
  TableTransition back = Inverse(*t);
  // Backwards, 43008 is the place only the old (applied) table uses: written last.
  EXPECT_EQ(back.ranges.front().offset_bytes, 44999u * 512);
  EXPECT_EQ(back.ranges.back().offset_bytes, 43008u * 512);
  EXPECT_EQ(back.ranges.back().old_bytes, std::vector<uint8_t>(512, 0x22));
  EXPECT_EQ(Inverse(back), *t);
}

TEST(TableTransitionTest, CrashSafetyOfEachShape) {
  Result<TableTransition> gpt =
      LayoutTransition(LabelType::kGpt, 512, kDisk, GptAreas(512), GptAreas(512));
  ASSERT_TRUE(gpt);
  Fill(&*gpt, {});
  EXPECT_EQ(AssessCrashSafety(*gpt).reason, "nothing changes");
  Fill(&*gpt, {512, 1024, kDisk - 512, kDisk - 512 - 16384});
  EXPECT_EQ(AssessCrashSafety(*gpt).safety, CrashSafety::kOldOrNew);

  Result<TableTransition> dos = LayoutTransition(
      LabelType::kDos, 512, kDisk, DosAreas({30000, 44999}), DosAreas({30000, 43008}));
  ASSERT_TRUE(dos);
  Fill(&*dos, {43008 * 512, 30000 * 512});  // a new EBR, then the head switches
  CrashAssessment one = AssessCrashSafety(*dos);
  EXPECT_EQ(one.safety, CrashSafety::kOldOrNew) << one.reason;
  EXPECT_NE(one.reason.find("one sector (EBR of partition 5)"), std::string::npos) << one.reason;
  Fill(&*dos, {43008 * 512, 30000 * 512, 0});  // the MBR changes too
  CrashAssessment two = AssessCrashSafety(*dos);
  EXPECT_EQ(two.safety, CrashSafety::kRestoreNeeded);
  EXPECT_NE(two.reason.find("EBR of partition 5, MBR"), std::string::npos) << two.reason;
}

TEST(TableTransitionTest, ConflictsWithPartitionContents) {
  Result<TableTransition> t =
      LayoutTransition(LabelType::kDos, 512, kDisk, DosAreas({30000}), DosAreas({30000, 43008}));
  ASSERT_TRUE(t);
  Fill(&*t, {43008 * 512});
  PartitionTable old_table, new_table;
  Partition empty{};
  empty.number = 5;
  empty.start_sector = 43000;
  empty.size_sectors = 1000;
  empty.contents.proof = ContentProof::kZeros;
  old_table.partitions = {empty};
  EXPECT_TRUE(TransitionConflicts(*t, old_table, new_table).empty());  // proven empty
  // Not proven empty: it may hold data, whether a signature says so or not.
  old_table.partitions[0].contents.proof = ContentProof::kUnscanned;
  EXPECT_EQ(TransitionConflicts(*t, old_table, new_table).size(), 1u);
  // Its data moved away (or was discarded): its old place may be written.
  EXPECT_TRUE(TransitionConflicts(*t, old_table, new_table, {5}).empty());
  old_table.partitions[0].contents.proof = ContentProof::kData;
  std::vector<std::string> c = TransitionConflicts(*t, old_table, new_table);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NE(c[0].find("would overwrite data of partition 5 (sectors 43000-43999)"),
            std::string::npos)
      << c[0];
  old_table.partitions.clear();
  new_table.partitions = {empty};
  c = TransitionConflicts(*t, old_table, new_table);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NE(c[0].find("lies inside partition 5 of the new table"), std::string::npos) << c[0];
  Fill(&*t, {});  // unchanged sectors are never a conflict
  EXPECT_TRUE(TransitionConflicts(*t, old_table, new_table).empty());
}

TEST(TableTransitionTest, JsonListsEveryRangeAndTheBytesOfChangedOnes) {
  Result<TableTransition> t =
      LayoutTransition(LabelType::kGpt, 4096, kDisk, GptAreas(4096), GptAreas(4096));
  ASSERT_TRUE(t);
  Fill(&*t, {4096});  // only the primary header
  EXPECT_EQ(ChangedRanges(*t).size(), 1u);
  nlohmann::json j = TransitionJson(*t);
  ASSERT_EQ(j["ranges"].size(), 5u);
  EXPECT_EQ(j["crash_safety"], "old-or-new");
  for (const nlohmann::json& r : j["ranges"]) {
    if (r["role"] == "gpt-header") {
      EXPECT_EQ(r["step"], 1);
      EXPECT_EQ(r["first_sector"], 1);
      EXPECT_EQ(r["sectors"], 1);
      EXPECT_EQ(Base64Decode(r["new_data_base64"].get<std::string>()),
                std::vector<uint8_t>(4096, 0x22));
    } else {
      EXPECT_TRUE(r["step"].is_null());
      EXPECT_TRUE(r["new_data_base64"].is_null());
    }
  }
}

TEST(TableTransitionTest, RoleNamesRoundTrip) {
  for (TableAreaRole role :
       {TableAreaRole::kMbr, TableAreaRole::kGptHeader, TableAreaRole::kGptEntries,
        TableAreaRole::kGptBackupEntries, TableAreaRole::kGptBackupHeader, TableAreaRole::kEbr}) {
    EXPECT_EQ(TableAreaRoleFromString(ToString(role)), role);
  }
  EXPECT_FALSE(TableAreaRoleFromString("gpt"));
}

}  // namespace
}  // namespace partalign

namespace partalign {
namespace {

// A partition for the chain tests: sectors [start, start + size).
Partition Logical(uint32_t number, uint64_t start, uint64_t size) {
  Partition p;
  p.number = number;
  p.kind = PartitionKind::kLogical;
  p.start_sector = start;
  p.size_sectors = size;
  return p;
}

// The first and last tables of a chain test: DOS, partition 5 at 20001 (its EBR the head, at
// 20000), partition 6 (8000 sectors) at `p6_first` with its EBR at `ebr_first`, then at
// `p6_last` with its EBR at `ebr_last`.
std::pair<PartitionTable, PartitionTable> ChainEnds(uint64_t p6_first, uint64_t ebr_first,
                                                    uint64_t p6_last, uint64_t ebr_last) {
  PartitionTable first, last;
  first.label = last.label = LabelType::kDos;
  first.areas = DosAreas({20000, ebr_first});
  last.areas = DosAreas({20000, ebr_last});
  first.partitions = {Logical(5, 20001, 7000), Logical(6, p6_first, 8000)};
  last.partitions = {Logical(5, 20001, 7000), Logical(6, p6_last, 8000)};
  return {first, last};
}

TEST(TableTransitionTest, AnEbrParkedInAGapForAWhileIsFound) {
  // The chain a sweep case made (tests/tools/apply_invariant_sweep.cc, seed 1 case 2): step 1
  // rewrites the EBR chain and puts partition 6's EBR into the gap before it (30000 -> 28000,
  // libfdisk's grain before the partition); step 2 moves partition 6 up and its EBR with it
  // (to 30719). Sector 28000 held no table before or after, and no partition: a gap whose
  // bytes step 2 must give back. The EBRs at their first and last places are not listed.
  auto [first, last] = ChainEnds(30001, 30000, 30720, 30719);
  Result<TableTransition> step1 = LayoutTransition(
      LabelType::kDos, 512, kDisk, DosAreas({20000, 30000}), DosAreas({20000, 28000}));
  Result<TableTransition> step2 = LayoutTransition(
      LabelType::kDos, 512, kDisk, DosAreas({20000, 28000}), DosAreas({20000, 30719}));
  ASSERT_TRUE(step1 && step2);
  std::vector<ChainRange> found = TransientGapRanges({&*step1, &*step2}, first, last);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].step, 1u);
  EXPECT_EQ(step2->ranges[found[0].range].offset_bytes, 28000u * 512);
  // Inside a partition (before or after), the sector is not a gap: the move's data owns it.
  last.partitions[0].size_sectors = 9000;
  EXPECT_TRUE(TransientGapRanges({&*step1, &*step2}, first, last).empty());
}

TEST(TableTransitionTest, AnEbrAnEarlierApplyLeftInAGapIsFound) {
  // Seed 43 case 200 of the sweep: an apply parked partition 6's EBR in the gap before it
  // (30000 -> 29999) and was killed and rolled back before the step that takes it back ran.
  // The next apply starts from a table that uses 29999 and moves partition 6 (its EBR to
  // 30719): 29999 is in the first table's areas, not a transient sector of this chain, and
  // ends in a gap - what it held before an apply parked the EBR there is for the backups to
  // say (BytesBeforeOwnTables). The EBR at its first place that the last table keeps is not.
  auto [first, last] = ChainEnds(30000, 29999, 30720, 30719);
  Result<TableTransition> step = LayoutTransition(
      LabelType::kDos, 512, kDisk, DosAreas({20000, 29999}), DosAreas({20000, 30719}));
  ASSERT_TRUE(step);
  std::vector<ChainRange> found = AbandonedTableRanges({&*step}, first, last);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].step, 0u);
  EXPECT_EQ(step->ranges[found[0].range].offset_bytes, 29999u * 512);
  EXPECT_TRUE(TransientGapRanges({&*step}, first, last).empty());
  // Inside the new place of a partition, the sector is not a gap: the move's data owns it.
  last.partitions[1].start_sector = 29990;
  EXPECT_TRUE(AbandonedTableRanges({&*step}, first, last).empty());
}

}  // namespace
}  // namespace partalign
