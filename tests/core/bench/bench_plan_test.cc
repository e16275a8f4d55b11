#include "partalign/bench/bench_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace partalign {
namespace {

TEST(DefaultCellsTest, GridPlusSequentialAndRandomQueueDepths) {
  std::vector<BenchCell> cells = DefaultCells(/*write=*/false);
  ASSERT_EQ(cells.size(), 64u + 2u);
  int grid = 0;
  for (const BenchCell& c : cells) {
    EXPECT_FALSE(IsWrite(c.pattern));
    if (!c.in_grid) continue;
    ++grid;
    EXPECT_EQ(c.pattern, IoPattern::kRandRead);
    EXPECT_EQ(c.queue_depth, 1u);
    EXPECT_EQ(c.block_size % 512, 0u);
    EXPECT_EQ(c.offset_align % 512, 0u);
    EXPECT_LE(c.block_size, 4096u);
    EXPECT_LE(c.offset_align, 4096u);
  }
  EXPECT_EQ(grid, 64);
  EXPECT_NE(
      std::find(cells.begin(), cells.end(), BenchCell{IoPattern::kSeqRead, kMiB, kMiB, 8, false}),
      cells.end());
  // Random 4 KiB at QD1 is the grid's reference cell, measured once.
  auto qd1 = std::find(cells.begin(), cells.end(),
                       BenchCell{IoPattern::kRandRead, 4096, 4096, 1, /*in_grid=*/true});
  ASSERT_NE(qd1, cells.end());
  EXPECT_TRUE(IsHeadline(*qd1));
  EXPECT_FALSE(IsHeadline({IoPattern::kRandRead, 4096, 512, 1, true}));
  EXPECT_NE(std::find(cells.begin(), cells.end(), BenchCell{IoPattern::kRandRead, 4096, 4096, 32}),
            cells.end());
  for (const BenchCell& c : DefaultCells(/*write=*/true)) EXPECT_TRUE(IsWrite(c.pattern));
}

TEST(CellsForSectorSizeTest, FourKSectorsKeepOnlyWholeSectorCells) {
  std::vector<BenchCell> skipped;
  std::vector<BenchCell> kept = CellsForSectorSize(DefaultCells(false), 4096, &skipped);
  EXPECT_EQ(kept.size(), 3u);  // the 4096 x 4096 grid cell, sequential, random QD32
  EXPECT_EQ(skipped.size(), 63u);
  EXPECT_EQ(CellsForSectorSize(DefaultCells(false), 512, nullptr).size(), 66u);
}

TEST(IoPatternTest, NamesRoundTrip) {
  for (IoPattern p :
       {IoPattern::kRandRead, IoPattern::kSeqRead, IoPattern::kRandWrite, IoPattern::kSeqWrite}) {
    EXPECT_EQ(ParseIoPattern(ToString(p)), p);
  }
  EXPECT_FALSE(ParseIoPattern("read"));
  EXPECT_EQ(OrderOf(IoPattern::kSeqWrite), AccessOrder::kSequential);
  EXPECT_EQ(OrderOf(IoPattern::kRandWrite), AccessOrder::kRandom);
}

TEST(PlanBenchTest, SplitsTheBudgetIntoRoundsOfPreferredTrials) {
  PlanOptions options{.trial_budget_ns = 8'000'000'000, .preferred_trial_ns = 10'000'000};
  BenchPlan plan = *PlanBench(DefaultCells(false), options);
  // 8 s / 66 cells = 121 ms per cell: 12 rounds of 10.1 ms.
  EXPECT_EQ(plan.rounds, 12u);
  EXPECT_EQ(plan.trial_ns, 8'000'000'000 / 66 / 12);
  EXPECT_LE(plan.rounds * plan.trial_ns * 66, options.trial_budget_ns);
}

TEST(PlanBenchTest, SmallBudgetsStillGetTheMinimumRounds) {
  BenchPlan plan = *PlanBench(DefaultCells(false), {.trial_budget_ns = 1'000'000'000});
  EXPECT_EQ(plan.rounds, kMinRounds);
  EXPECT_EQ(plan.trial_ns, 1'000'000'000 / 66 / kMinRounds);
  BenchPlan big = *PlanBench(DefaultCells(false), {.trial_budget_ns = 1'000'000'000'000});
  EXPECT_EQ(big.rounds, kMaxRounds);
}

TEST(PlanBenchTest, EveryRoundIsASeededPermutation) {
  std::vector<BenchCell> cells = DefaultCells(false);
  BenchPlan a = *PlanBench(cells, {.trial_budget_ns = 8'000'000'000, .seed = 7});
  BenchPlan b = *PlanBench(cells, {.trial_budget_ns = 8'000'000'000, .seed = 7});
  BenchPlan c = *PlanBench(cells, {.trial_budget_ns = 8'000'000'000, .seed = 8});
  ASSERT_EQ(a.order.size(), a.rounds);
  for (const std::vector<uint32_t>& round : a.order) {
    std::vector<uint32_t> sorted = round;
    std::sort(sorted.begin(), sorted.end());
    std::vector<uint32_t> all(cells.size());
    std::iota(all.begin(), all.end(), 0u);
    EXPECT_EQ(sorted, all);
  }
  EXPECT_EQ(a.order, b.order);
  EXPECT_NE(a.order, c.order);
  EXPECT_NE(a.order[0], a.order[1]);  // the order changes from round to round
}

TEST(PlanBenchTest, EmptyCellsOrBudgetAreErrors) {
  EXPECT_FALSE(PlanBench({}, {.trial_budget_ns = 1'000'000'000}));
  EXPECT_FALSE(PlanBench(DefaultCells(false), {.trial_budget_ns = 0}));
  EXPECT_FALSE(PlanBench(DefaultCells(false), {.trial_budget_ns = 100}));  // < 1 ns per trial
}

TEST(CellSeedTest, DependsOnTheCellNotOnItsPosition) {
  BenchCell a{IoPattern::kRandRead, 4096, 512, 1, true};
  BenchCell b{IoPattern::kRandRead, 4096, 1024, 1, true};
  EXPECT_EQ(CellSeed(1, a), CellSeed(1, a));
  EXPECT_NE(CellSeed(1, a), CellSeed(1, b));
  EXPECT_NE(CellSeed(1, a), CellSeed(2, a));
}

}  // namespace
}  // namespace partalign
