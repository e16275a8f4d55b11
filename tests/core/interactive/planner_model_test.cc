// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/interactive/planner_model.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/interactive/planner_test_disks.h"
#include "partalign/layout/planner.h"
#include "partalign/tools/installers/installer_report.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

using test::EmptyDisk;
using test::MisalignedDisk;

PlannerModel Model(PlannerDisk disk, LabelType label = LabelType::kGpt) {
  Result<PlannerModel> m = PlannerModel::Make(std::move(disk), label);
  EXPECT_TRUE(m) << m.error().message;
  return *m;
}

PlannerRow FirstFree(const PlannerModel& m) {
  for (const PlannerRow& r : m.Rows()) {
    if (r.free) return r;
  }
  ADD_FAILURE() << "no free row";
  return {};
}

PlannerRow PartitionRow(const PlannerModel& m, uint32_t number) {
  for (const PlannerRow& r : m.Rows()) {
    if (!r.free && m.layout().partitions[r.index].number == number) return r;
  }
  ADD_FAILURE() << "no partition " << number;
  return {};
}

TEST(PlannerModelTest, EmptyDiskIsOneFreeAreaOnTheGrain) {
  PlannerModel m = Model(EmptyDisk());
  std::vector<PlannerRow> rows = m.Rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(rows[0].free);
  EXPECT_EQ(rows[0].start_bytes, kMiB);
  // GPT: the backup entries take the last 33 sectors; the area ends on the last MiB.
  EXPECT_EQ(rows[0].end_bytes, 2047 * kMiB);
}

TEST(PlannerModelTest, SizesSnapToTheGrainAndPercentIsOfTheFreeSpace) {
  PlannerModel m = Model(EmptyDisk());
  ASSERT_TRUE(m.Add(FirstFree(m), "1000K", "uefi"));
  EXPECT_EQ(m.layout().partitions[0].size_bytes, kMiB);  // rounded up to a whole grain
  EXPECT_EQ(m.layout().partitions[0].type, "C12A7328-F81F-11D2-BA4B-00A0C93EC93B");
  ASSERT_TRUE(m.Add(FirstFree(m), "50%", ""));
  const PlannedPartition& p2 = m.layout().partitions[1];
  EXPECT_EQ(p2.start_bytes, 2 * kMiB);
  EXPECT_EQ(p2.size_bytes, 1023 * kMiB);  // half of 2045 MiB, rounded up to the grain
  EXPECT_EQ(p2.type, "0FC63DAF-8483-4772-8E79-3D69D8477DE4");
  ASSERT_TRUE(m.Add(FirstFree(m), "", ""));  // Enter: all of it
  EXPECT_EQ(m.layout().partitions[2].end_bytes(), 2047 * kMiB);
  std::vector<PlannerRow> rows = m.Rows();
  EXPECT_TRUE(std::none_of(rows.begin(), rows.end(), [](const PlannerRow& r) { return r.free; }));
}

TEST(PlannerModelTest, EditsThatDoNotFitAreRefusedWithTheReason) {
  PlannerModel m = Model(EmptyDisk(64 * kMiB));
  Status s = m.Add(FirstFree(m), "100M", "");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("does not fit"), std::string::npos) << s.error().message;
  EXPECT_FALSE(m.Add(FirstFree(m), "12X", ""));
  EXPECT_FALSE(m.Add(FirstFree(m), "150%", ""));
  EXPECT_FALSE(m.Add(FirstFree(m), "10M", "bogus"));
  EXPECT_TRUE(m.layout().partitions.empty());
  EXPECT_FALSE(m.Delete(FirstFree(m)));
}

TEST(PlannerModelTest, APlanOfAGptCopiedOntoABiggerDiskRelocatesItsBackup) {
  // MisalignedDisk's table, as if copied from a disk of half the size: the backup GPT where
  // that disk ended. The planner's plan carries the step plan makes (apply requires it).
  PlannerDisk d = MisalignedDisk();
  const uint64_t old_last = test::kPlannerDiskBytes / 512 / 2 - 1;
  d.table.last_usable_lba = old_last - 33;
  d.table.areas = {{"PMBR", 0, 512},
                   {"GPT Header", 512, 512},
                   {"GPT Entries", 1024, 16384},
                   {"GPT Backup Entries", (old_last - 32) * 512, 16384},
                   {"GPT Backup Header", old_last * 512, 512}};
  PlannerModel m = Model(d);
  Result<Plan> plan = m.MakePlan();
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_TRUE(plan->relocate_backup_gpt);
  EXPECT_EQ(plan->relocate_backup_gpt->from_lba, old_last);
  EXPECT_EQ(plan->relocate_backup_gpt->to_lba, test::kPlannerDiskBytes / 512 - 1);
  EXPECT_EQ(plan->relocate_backup_gpt, BackupRelocationFor(d.table));
}

TEST(PlannerModelTest, FreshLayoutBecomesAPlanApplyAccepts) {
  PlannerModel m = Model(EmptyDisk());
  ASSERT_TRUE(m.Add(FirstFree(m), "256M", ""));
  ASSERT_TRUE(m.Add(FirstFree(m), "", ""));
  Result<Plan> plan = m.MakePlan();
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_TRUE(plan->layout);
  EXPECT_EQ(plan->layout->first_usable_lba, 2048u);
  ASSERT_EQ(plan->layout->partitions.size(), 2u);
  EXPECT_EQ(plan->layout->partitions[0].start_sector, 2048u);
  EXPECT_EQ(plan->layout->partitions[0].end_sector, 2048u + 524288 - 1);
  EXPECT_EQ(plan->layout->partitions[1].start_sector, 526336u);
  // The plan file round-trips through the parser apply uses.
  Result<Plan> back = PlanFromJson(PlanToJson(*plan).dump());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, *plan);
}

TEST(PlannerModelTest, NumbersFollowDiskOrderOnAFreshTable) {
  PlannerModel m = Model(EmptyDisk());
  ASSERT_TRUE(m.Add(FirstFree(m), "100M", ""));
  ASSERT_TRUE(m.Add(FirstFree(m), "100M", ""));
  ASSERT_TRUE(m.Delete(PartitionRow(m, 1)));
  EXPECT_EQ(m.layout().partitions[0].number, 1u);
  ASSERT_TRUE(m.Add(FirstFree(m), "50M", ""));  // back at 1 MiB, before the other
  EXPECT_EQ(m.layout().partitions[0].start_bytes, kMiB);
  EXPECT_EQ(m.layout().partitions[0].number, 1u);
  EXPECT_EQ(m.layout().partitions[1].number, 2u);
}

TEST(PlannerModelTest, DosHoldsFourPrimaries) {
  PlannerModel m = Model(EmptyDisk(), LabelType::kDos);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(m.Add(FirstFree(m), "10M", ""));
  Status s = m.Add(FirstFree(m), "10M", "");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("4 primary"), std::string::npos);
  EXPECT_EQ(m.layout().partitions[0].type, "0x83");
}

TEST(PlannerModelTest, ExistingTableShowsTheDataMoves) {
  PlannerModel m = Model(MisalignedDisk());
  EXPECT_TRUE(m.editing_existing());
  EXPECT_EQ(m.ChangeSummary(), "no changes");
  // Partition 1 (no data) at 63 has no aligned start below it: it goes up to 1 MiB and, with
  // partition 2 right behind it, keeps what fits of its 100 MiB on the grain.
  ASSERT_TRUE(m.Resize(PartitionRow(m, 1), ""));
  const PlannedPartition& p1 = m.layout().partitions[0];
  EXPECT_EQ(p1.start_bytes, kMiB);
  EXPECT_EQ(p1.size_bytes, 99 * kMiB);
  EXPECT_EQ(m.ChangeOf(p1).kind, PartitionChange::Kind::kTableOnly);
  // Partition 2 holds 100 MiB of ext4: realigned down into the room partition 1 left, its data
  // moves; it keeps its size.
  ASSERT_TRUE(m.Resize(PartitionRow(m, 2), ""));
  const PlannedPartition& p2 = m.layout().partitions[1];
  EXPECT_TRUE(m.alignment().IsAligned(p2.start_bytes));
  PartitionChange c = m.ChangeOf(p2);
  EXPECT_EQ(c.kind, PartitionChange::Kind::kMoveData);
  EXPECT_EQ(c.bytes_to_move, 200 * kMiB);
  EXPECT_EQ(c.text, "move 200 MiB");
  // Shrinking below the filesystem is refused.
  Status s = m.Resize(PartitionRow(m, 2), "50M");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("would cut it"), std::string::npos) << s.error().message;
  Result<Plan> plan = m.MakePlan();
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_FALSE(plan->layout);
  ASSERT_EQ(plan->actions.size(), 3u);
  EXPECT_EQ(plan->actions[1].kind, ActionKind::kMoveData);
  EXPECT_EQ(plan->actions[1].new_start_sector, p2.start_bytes / 512);
  // Partition 3, misaligned and left where it is: in the plan file, plan's word for it (apply
  // recomputes every action so: PlanFileActions).
  EXPECT_EQ(plan->actions[2].kind, ActionKind::kImpossible);
  EXPECT_EQ(plan->actions[2].new_start_sector, plan->actions[2].old_start_sector);
  EXPECT_NE(m.ChangeSummary().find("moving 200 MiB of data"), std::string::npos);
}

TEST(PlannerModelTest, DeleteOnADiskWithDataGivesUpContentsAsDiscardDoes) {
  // Issue 38: d on a partition of a table whose partitions hold data cannot delete it (a fresh
  // table would orphan the others): it gives up its contents, as plan --discard does, and
  // the layout stays a plan apply accepts; A after it keeps it given up.
  PlannerModel m = Model(MisalignedDisk());
  const PlannerLayout before = m.layout();
  ASSERT_TRUE(m.Delete(PartitionRow(m, 2)));
  EXPECT_EQ(m.layout().discarded, std::vector<uint32_t>{2});
  EXPECT_EQ(m.layout().partitions.size(), 3u);  // still in the table
  EXPECT_EQ(m.ChangeOf(m.layout().partitions[1]).text, "discarded");
  EXPECT_FALSE(m.Delete(PartitionRow(m, 2)));  // given up already
  ASSERT_TRUE(m.AlignAll());
  EXPECT_EQ(m.layout().discarded, std::vector<uint32_t>{2});
  Result<Plan> plan = m.MakePlan();
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_FALSE(plan->layout);
  PlanOptions discard;
  discard.discard = {2};
  Result<std::vector<PlanAction>> planned =
      PlanPartitions(MisalignedDisk().table, m.alignment(), discard);
  ASSERT_TRUE(planned) << planned.error().message;
  EXPECT_EQ(plan->actions, *planned);
  EXPECT_EQ(plan->actions[1].kind, ActionKind::kTableOnly);  // no data to move any more
  EXPECT_EQ(plan->actions[1].empty, Emptiness::kDiscarded);
  // Undo (the screen puts the layout back) brings its contents back into the plan.
  m.set_layout(before);
  EXPECT_TRUE(m.layout().discarded.empty());
  ASSERT_TRUE(m.AlignAll());
  Result<Plan> kept = m.MakePlan();
  ASSERT_TRUE(kept) << kept.error().message;
  EXPECT_EQ(kept->actions[1].kind, ActionKind::kMoveData);
  // The command line's --discard does the same from the start.
  Result<PlannerModel> given = PlannerModel::Make(MisalignedDisk(), LabelType::kGpt, {2});
  ASSERT_TRUE(given) << given.error().message;
  EXPECT_EQ(given->layout().discarded, std::vector<uint32_t>{2});
  EXPECT_FALSE(PlannerModel::Make(MisalignedDisk(), LabelType::kGpt, {9}));
}

TEST(PlannerModelTest, DeletingAPartitionOfATableWithoutDataReplacesTheTable) {
  // Without data anywhere, d deletes, and the layout replaces the table.
  PlannerDisk empty = MisalignedDisk();
  for (Partition& p : empty.table.partitions) p.contents = {.proof = ContentProof::kZeros};
  PlannerModel e = Model(empty);
  ASSERT_TRUE(e.Delete(PartitionRow(e, 3)));
  Result<Plan> fresh = e.MakePlan();
  ASSERT_TRUE(fresh) << fresh.error().message;
  ASSERT_TRUE(fresh->layout);
  EXPECT_EQ(fresh->layout->partitions.size(), 2u);
  EXPECT_EQ(fresh->table_fingerprint, empty.table.fingerprint);
}

TEST(PlannerModelTest, VerdictsFollowTheTopologyAsked) {
  PlannerModel m = Model(MisalignedDisk());
  Topology jmicron =
      test::MakeTopology(512, 4096, 4096, 33553920, 0, TopologyOrigin::kAssumed, 2ull << 30);
  std::vector<ToolVerdict> v = m.Verdicts(0, jmicron);  // partition 1 at sector 63
  ASSERT_EQ(v.size(), 4u);                              // parted, fdisk, gdisk, calamares (KPMcore)
  EXPECT_FALSE(v[0].ok);
  EXPECT_EQ(v[0].message, "1 not aligned: 63s % 65535s != 0s");
  EXPECT_FALSE(v[1].ok);
  EXPECT_EQ(v[3], KpmcoreVerdict(jmicron, 1, 63, m.layout().partitions[0].end_bytes() / 512 - 1));
  EXPECT_FALSE(v[3].ok);
  Topology fourkn =
      test::MakeTopology(4096, 4096, 4096, 0, 0, TopologyOrigin::kAssumed, 2ull << 30);
  v = m.Verdicts(0, fourkn);
  EXPECT_EQ(v[0].message, "not on a whole 4096-byte sector");
}

TEST(PlannerModelTest, RequestEndsWithTheRest) {
  PlannerModel m = Model(EmptyDisk());
  ASSERT_TRUE(m.Add(FirstFree(m), "256M", ""));
  ASSERT_TRUE(m.Add(FirstFree(m), "", ""));
  LayoutRequest r = m.Request();
  EXPECT_EQ(r.sizes_bytes, (std::vector<std::optional<uint64_t>>{256 * kMiB, std::nullopt}));
}

// Sizes as sfdisk reads them (issue #30 item 5): a bare number counts sectors, decimals are
// accepted where sfdisk reads them as written.
TEST(PlannerModelTest, PromptSizes) {
  EXPECT_EQ(*ParsePromptSize("", 100, 512), std::nullopt);
  EXPECT_EQ(**ParsePromptSize("25%", 1000, 512), 250u);
  EXPECT_EQ(**ParsePromptSize(" 2G ", 0, 512), 2 * kGiB);
  EXPECT_EQ(**ParsePromptSize("1.5G", 10, 512), 3 * kGiB / 2);
  EXPECT_EQ(**ParsePromptSize("100000", 10, 512), 100000u * 512);
  EXPECT_EQ(**ParsePromptSize("100000", 10, 4096), 100000u * 4096);
  EXPECT_FALSE(ParsePromptSize("0", 10, 512));
  EXPECT_FALSE(ParsePromptSize("0%", 10, 512));
  Result<std::optional<uint64_t>> odd = ParsePromptSize("1.3G", 10, 512);
  ASSERT_FALSE(odd);
  EXPECT_NE(odd.error().message.find("sfdisk reads it as 1431655765 bytes"), std::string::npos)
      << odd.error().message;
}

// Issue #30 item 1: the legacy layout the planner could not realign. r on partition 1 cannot
// keep its data before partition 2; m moves partitions (partition 2 first, to a typed start,
// then partition 1 to the nearest aligned start with room) and A puts every partition where
// `partalign plan` does: both give plan's very actions (kinds, places, bytes, reasons).
TEST(PlannerModelTest, LegacyDosLayoutIsRealignedAsPlanDoes) {
  PlannerDisk disk = test::LegacyDosDisk();
  Result<std::vector<PlanAction>> planned =
      PlanPartitions(disk.table, RecommendAlignment(disk.device.topology).alignment);
  ASSERT_TRUE(planned) << planned.error().message;
  ASSERT_EQ(planned->size(), 2u);
  EXPECT_EQ((*planned)[0].new_start_sector, 2048u);
  EXPECT_EQ((*planned)[1].new_start_sector, 102400u);

  PlannerModel m = Model(disk);
  Status cut = m.Resize(PartitionRow(m, 1), "");
  ASSERT_FALSE(cut);
  EXPECT_NE(cut.error().message.find("would cut it"), std::string::npos) << cut.error().message;
  EXPECT_NE(cut.error().message.find("m moves it elsewhere, A aligns everything"),
            std::string::npos)
      << cut.error().message;
  // Partition 1 has no aligned start with room for it while partition 2 is where it is.
  Status stuck = m.Move(PartitionRow(m, 1), "");
  ASSERT_FALSE(stuck);
  EXPECT_NE(stuck.error().message.find("no aligned start leaves room for partition 1"),
            std::string::npos)
      << stuck.error().message;
  // A start that does not fit is refused with the room there is.
  Status no_room = m.Move(PartitionRow(m, 2), "127M");
  ASSERT_FALSE(no_room);
  EXPECT_NE(no_room.error().message.find("does not fit at 127 MiB"), std::string::npos)
      << no_room.error().message;

  ASSERT_TRUE(m.Move(PartitionRow(m, 2), "50M"));
  ASSERT_TRUE(m.Move(PartitionRow(m, 1), ""));
  Result<Plan> moved = m.MakePlan();
  ASSERT_TRUE(moved) << moved.error().message;
  EXPECT_EQ(moved->actions, *planned);
  EXPECT_EQ(m.ChangeOf(m.layout().partitions[0]).kind, PartitionChange::Kind::kMoveData);
  EXPECT_EQ(m.ChangeOf(m.layout().partitions[0]).reason, (*planned)[0].reason);

  PlannerModel a = Model(disk);
  ASSERT_TRUE(a.AlignAll());
  Result<Plan> aligned = a.MakePlan();
  ASSERT_TRUE(aligned) << aligned.error().message;
  EXPECT_EQ(aligned->actions, *planned);
  EXPECT_EQ(aligned->actions[0].kind, ActionKind::kMoveData);
  EXPECT_EQ(aligned->actions[1].kind, ActionKind::kMoveData);
  EXPECT_NE(a.ChangeSummary().find("2 moving"), std::string::npos) << a.ChangeSummary();
  // The plan file apply reads says the same.
  Result<Plan> back = PlanFromJson(PlanToJson(*aligned).dump());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->actions, *planned);
}

// A partition not proven empty (no signature, its head zeros, the rest not read: --no-scan)
// is moved whole, never by the table alone; one read in full and found zeros moves by the
// table, with its proof. Both as plan says.
TEST(PlannerModelTest, OnlyAProofLetsAPartitionMoveByTheTableAlone) {
  for (ContentProof proof : {ContentProof::kUnscanned, ContentProof::kZeros}) {
    PlannerDisk disk = test::LegacyDosDisk(proof);
    Result<std::vector<PlanAction>> planned =
        PlanPartitions(disk.table, RecommendAlignment(disk.device.topology).alignment);
    ASSERT_TRUE(planned) << planned.error().message;
    PlannerModel m = Model(disk);
    ASSERT_TRUE(m.AlignAll());
    Result<Plan> plan = m.MakePlan();
    ASSERT_TRUE(plan) << plan.error().message;
    EXPECT_EQ(plan->actions, *planned);
    for (const PlanAction& a : plan->actions) {
      if (a.new_start_sector == a.old_start_sector) continue;
      if (proof == ContentProof::kUnscanned) {
        EXPECT_EQ(a.kind, ActionKind::kMoveData) << a.reason;
        EXPECT_NE(a.reason.find("not proven empty: moved whole"), std::string::npos) << a.reason;
      } else {
        EXPECT_EQ(a.kind, ActionKind::kTableOnly) << a.reason;
        EXPECT_EQ(a.empty, Emptiness::kZeros);
      }
    }
    // m alone gives the same class.
    PlannerModel one = Model(disk);
    ASSERT_TRUE(one.Move(PartitionRow(one, 2), "50M"));
    EXPECT_EQ(one.ChangeOf(one.layout().partitions[1]).kind,
              proof == ContentProof::kUnscanned ? PartitionChange::Kind::kMoveData
                                                : PartitionChange::Kind::kTableOnly);
  }
}

// Issue #30 item 6: t refuses at once what it cannot do, instead of a prompt that promises a
// type.
TEST(PlannerModelTest, TypeOfAPartitionWithDataCannotChange) {
  PlannerModel m = Model(test::LegacyDosDisk());
  Status can = m.CanSetType(PartitionRow(m, 1));
  ASSERT_FALSE(can);
  EXPECT_NE(can.error().message.find("partition 1 holds ext4"), std::string::npos)
      << can.error().message;
  EXPECT_NE(can.error().message.find("t keeps it (linux)"), std::string::npos)
      << can.error().message;
}

}  // namespace
}  // namespace partalign
