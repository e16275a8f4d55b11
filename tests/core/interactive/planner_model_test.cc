// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/interactive/planner_model.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/interactive/planner_test_disks.h"
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
  EXPECT_EQ(plan->actions[2].kind, ActionKind::kNone);
  EXPECT_NE(m.ChangeSummary().find("moving 200 MiB of data"), std::string::npos);
}

TEST(PlannerModelTest, DeletingPartitionsWithDataCannotBeApplied) {
  PlannerModel m = Model(MisalignedDisk());
  ASSERT_TRUE(m.Delete(PartitionRow(m, 3)));
  Result<Plan> plan = m.MakePlan();
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message.find("partition 2 holds ext4"), std::string::npos)
      << plan.error().message;
  // Without data anywhere, the same edit replaces the table.
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

TEST(PlannerModelTest, PromptSizes) {
  EXPECT_EQ(*ParsePromptSize("", 100), std::nullopt);
  EXPECT_EQ(**ParsePromptSize("25%", 1000), 250u);
  EXPECT_EQ(**ParsePromptSize(" 2G ", 0), 2 * kGiB);
  EXPECT_FALSE(ParsePromptSize("0", 10));
  EXPECT_FALSE(ParsePromptSize("0%", 10));
  EXPECT_FALSE(ParsePromptSize("1.5G", 10));
}

}  // namespace
}  // namespace partalign
