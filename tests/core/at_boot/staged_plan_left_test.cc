// SPDX-License-Identifier: GPL-3.0-or-later
// A boot that ran part of a staged plan, then lost power between two steps: the next boot
// applies what is left, never moves a partition twice, and refuses a disk the plan does not
// explain.
#include "partalign/at_boot/staged_plan_left.h"

#include <gtest/gtest.h>

namespace partalign {
namespace {

Partition Part(uint32_t number, uint64_t start, uint64_t size) {
  Partition p;
  p.number = number;
  p.start_sector = start;
  p.size_sectors = size;
  return p;
}

PartitionTable Table(std::vector<Partition> partitions, std::string fingerprint) {
  PartitionTable t;
  t.label = LabelType::kDos;
  t.sector_size = 512;
  t.disk_size_sectors = 1 << 21;
  t.disk_id = "0x1234abcd";
  t.partitions = std::move(partitions);
  t.fingerprint = std::move(fingerprint);
  return t;
}

// Partition 1 (root) from 63 to 2048, partition 2 (/boot, the journal's) stays, partition 3
// from 300000 to 301056.
Plan Staged() {
  Plan plan;
  plan.label = LabelType::kDos;
  plan.table_fingerprint = "xxh64:staged";
  plan.actions = {
      {1, 63, 200062, 2048, 202047, ActionKind::kMoveData, 100000 * 512, "start 63"},
      {2, 206848, 247807, 206848, 247807, ActionKind::kNone, 0, "aligned"},
      {3, 300000, 339999, 301056, 341055, ActionKind::kMoveData, 1000 * 512, "start 300000"},
  };
  return plan;
}

TEST(StagedPlanLeftTest, TheTableItWasMadeFromLeavesThePlanAsItIs) {
  const Plan staged = Staged();
  Result<PlanLeft> left = StagedPlanLeft(
      staged,
      Table({Part(1, 63, 200000), Part(2, 206848, 40960), Part(3, 300000, 40000)}, "xxh64:staged"));
  ASSERT_TRUE(left) << left.error().message;
  EXPECT_EQ(left->plan, staged);
  EXPECT_EQ(left->done, 0u);
  EXPECT_EQ(left->left, 2u);
}

TEST(StagedPlanLeftTest, APartitionAlreadyAtItsNewPlaceIsDoneAndTheRestIsLeft) {
  const PartitionTable now =
      Table({Part(1, 2048, 200000), Part(2, 206848, 40960), Part(3, 300000, 40000)},
            "xxh64:after-step-1");
  Result<PlanLeft> left = StagedPlanLeft(Staged(), now);
  ASSERT_TRUE(left) << left.error().message;
  EXPECT_EQ(left->done, 1u);
  EXPECT_EQ(left->left, 1u);
  const PlanAction& one = left->plan.actions[0];
  EXPECT_EQ(one.kind, ActionKind::kNone);
  EXPECT_EQ(one.old_start_sector, 2048u);
  EXPECT_EQ(one.new_start_sector, 2048u);
  EXPECT_NE(one.reason.find("earlier boot"), std::string::npos);
  EXPECT_EQ(left->plan.actions[2], Staged().actions[2]);
  // The plan now describes the table the earlier boot wrote.
  EXPECT_EQ(left->plan.table_fingerprint, "xxh64:after-step-1");
  EXPECT_EQ(left->plan.disk.table_id, "0x1234abcd");
}

TEST(StagedPlanLeftTest, EverythingDoneLeavesNothingToDo) {
  Result<PlanLeft> left = StagedPlanLeft(
      Staged(), Table({Part(1, 2048, 200000), Part(2, 206848, 40960), Part(3, 301056, 40000)},
                      "xxh64:all-done"));
  ASSERT_TRUE(left) << left.error().message;
  EXPECT_EQ(left->done, 2u);
  EXPECT_EQ(left->left, 0u);
  for (const PlanAction& a : left->plan.actions) EXPECT_EQ(a.kind, ActionKind::kNone);
}

// A disk changed by something else since the staging: neither the plan's old place nor its new
// one. Moving from either would move the wrong bytes.
TEST(StagedPlanLeftTest, APartitionElsewhereOrMissingIsRefusedNamingIt) {
  Result<PlanLeft> moved = StagedPlanLeft(
      Staged(), Table({Part(1, 4096, 200000), Part(2, 206848, 40960), Part(3, 300000, 40000)},
                      "xxh64:other"));
  ASSERT_FALSE(moved);
  EXPECT_NE(moved.error().message.find("partition 1 is at sectors 4096-204095"), std::string::npos)
      << moved.error().message;
  Result<PlanLeft> resized = StagedPlanLeft(
      Staged(),
      Table({Part(1, 63, 200001), Part(2, 206848, 40960), Part(3, 300000, 40000)}, "xxh64:other"));
  EXPECT_FALSE(resized);
  Result<PlanLeft> missing =
      StagedPlanLeft(Staged(), Table({Part(1, 63, 200000), Part(2, 206848, 40960)}, "xxh64:x"));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("partition 3"), std::string::npos)
      << missing.error().message;
}

}  // namespace
}  // namespace partalign
