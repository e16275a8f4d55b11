// SPDX-License-Identifier: GPL-3.0-or-later
// A partition the running system uses keeps its place and size in the plan (PlanOptions::in_use,
// docs/audit-plan.md "In use"): apply writes around it but never moves or resizes it, so a plan
// that changed it would be refused whole, the partitions that could be aligned included.
#include <gtest/gtest.h>

#include "partalign/layout/planner.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

constexpr uint64_t kDisk = 2097152;  // 1 GiB of 512-byte sectors

Partition Data(uint32_t number, uint64_t start, uint64_t size) {
  Partition p;
  p.number = number;
  p.start_sector = start;
  p.size_sectors = size;
  p.contents.proof = ContentProof::kSignature;
  p.contents.fs_type = "ext4";
  return p;
}

PartitionTable Gpt(std::vector<Partition> partitions) {
  PartitionTable t;
  t.label = LabelType::kGpt;
  t.sector_size = 512;
  t.disk_size_sectors = kDisk;
  t.first_usable_lba = 34;
  t.last_usable_lba = kDisk - 34;
  t.partitions = std::move(partitions);
  return t;
}

std::vector<PlanAction> Plan(const PartitionTable& t, std::vector<uint32_t> in_use) {
  PlanOptions options;
  options.in_use = std::move(in_use);
  Result<std::vector<PlanAction>> actions = PlanPartitions(t, Alignment{kMiB, 0}, options);
  EXPECT_TRUE(actions) << actions.error().message;
  return actions ? *actions : std::vector<PlanAction>{};
}

// The one-disk machine: partition 1 (the running root, at 2048) ends off a MiB
// boundary, partition 2 right after it is misaligned. Without the in-use fact the plan grows
// partition 1's end so that partition 2's aligned start follows; with it partition 1 stays as
// it is and partition 2 moves up past it.
TEST(PlannerInUseTest, APartitionInUseKeepsItsEndAndTheNextOneStillAligns) {
  const PartitionTable t = Gpt({Data(1, 2048, 20000), Data(2, 22048, 40000)});
  std::vector<PlanAction> free = Plan(t, {});
  ASSERT_EQ(free.size(), 2u);
  EXPECT_NE(free[0].new_end_sector, free[0].old_end_sector) << free[0].reason;

  std::vector<PlanAction> a = Plan(t, {1});
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].kind, ActionKind::kNone) << a[0].reason;
  EXPECT_EQ(a[0].new_start_sector, 2048u);
  EXPECT_EQ(a[0].new_end_sector, 2048u + 20000 - 1);
  EXPECT_NE(a[0].reason.find("in use by the running system"), std::string::npos) << a[0].reason;
  EXPECT_EQ(a[1].kind, ActionKind::kMoveData) << a[1].reason;
  EXPECT_EQ(a[1].new_start_sector % 2048, 0u);
  EXPECT_GT(a[1].new_start_sector, a[0].new_end_sector);
}

// Partition 1 (in use) at 63 cannot be aligned while the system runs from it; partition 2 is
// aligned anyway, and partition 1's action says why it stays and what would let it move.
TEST(PlannerInUseTest, AMisalignedPartitionInUseIsImpossibleAndTheOthersAlign) {
  const PartitionTable t = Gpt({Data(1, 63, 40000), Data(2, 40100, 40000)});
  std::vector<PlanAction> a = Plan(t, {1});
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].kind, ActionKind::kImpossible);
  EXPECT_EQ(a[0].new_start_sector, 63u);
  EXPECT_EQ(a[0].new_end_sector, 63u + 40000 - 1);
  EXPECT_NE(a[0].reason.find("in use by the running system"), std::string::npos) << a[0].reason;
  EXPECT_NE(a[0].reason.find("plan --at-next-boot"), std::string::npos) << a[0].reason;
  EXPECT_EQ(a[1].kind, ActionKind::kMoveData) << a[1].reason;
  EXPECT_EQ(a[1].new_start_sector % 2048, 0u);

  // The same disk with nothing in use: both move.
  std::vector<PlanAction> free = Plan(t, {});
  EXPECT_EQ(free[0].kind, ActionKind::kMoveData) << free[0].reason;
  EXPECT_EQ(free[1].kind, ActionKind::kMoveData) << free[1].reason;
}

// The partition after one in use never moves into it: partition 2 in use right after a
// misaligned partition 1 leaves partition 1 no room above, so partition 1 moves down only if
// it can, and never over partition 2.
TEST(PlannerInUseTest, NothingMovesOverAPartitionInUse) {
  const PartitionTable t = Gpt({Data(1, 63, 10000), Data(2, 10063, 40000)});
  std::vector<PlanAction> a = Plan(t, {2});
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[1].new_start_sector, 10063u);
  EXPECT_EQ(a[1].new_end_sector, 10063u + 40000 - 1);
  EXPECT_LT(a[0].new_end_sector, 10063u);
  EXPECT_EQ(a[0].kind, ActionKind::kImpossible) << a[0].reason;
}

}  // namespace
}  // namespace partalign
