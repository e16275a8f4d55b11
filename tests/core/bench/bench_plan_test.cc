// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/bench/bench_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace partalign {
namespace {

TEST(DefaultCellsTest, GridPlusSequentialAndRandomQueueDepths) {
  std::vector<BenchCell> cells = DefaultCells(BenchOp::kRead);
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
  for (const BenchCell& c : DefaultCells(BenchOp::kWrite)) EXPECT_TRUE(IsWrite(c.pattern));
  for (const BenchCell& c : DefaultCells(BenchOp::kRewrite)) {
    EXPECT_TRUE(IsRewrite(c.pattern));
    EXPECT_FALSE(IsWrite(c.pattern));
  }
}

TEST(CellsForSectorSizeTest, FourKSectorsKeepOnlyWholeSectorCells) {
  std::vector<BenchCell> skipped;
  std::vector<BenchCell> kept = CellsForSectorSize(DefaultCells(BenchOp::kRead), 4096, &skipped);
  EXPECT_EQ(kept.size(), 3u);  // the 4096 x 4096 grid cell, sequential, random QD32
  EXPECT_EQ(skipped.size(), 63u);
  EXPECT_EQ(CellsForSectorSize(DefaultCells(BenchOp::kRead), 512, nullptr).size(), 66u);
}

TEST(IoPatternTest, NamesRoundTrip) {
  for (IoPattern p : {IoPattern::kRandRead, IoPattern::kSeqRead, IoPattern::kRandWrite,
                      IoPattern::kSeqWrite, IoPattern::kRandRewrite, IoPattern::kSeqRewrite}) {
    EXPECT_EQ(ParseIoPattern(ToString(p)), p);
  }
  EXPECT_EQ(ToString(IoPattern::kSeqRewrite), "seqrewrite");
  EXPECT_FALSE(ParseIoPattern("read"));
  EXPECT_EQ(OrderOf(IoPattern::kSeqWrite), AccessOrder::kSequential);
  EXPECT_EQ(OrderOf(IoPattern::kSeqRewrite), AccessOrder::kSequential);
  EXPECT_EQ(OrderOf(IoPattern::kRandWrite), AccessOrder::kRandom);
  EXPECT_EQ(OrderOf(IoPattern::kRandRewrite), AccessOrder::kRandom);
}

TEST(GridGroupsTest, EachRowIsAGroupTheOtherCellsAreAlone) {
  std::vector<BenchCell> cells = DefaultCells(BenchOp::kRead);
  std::vector<BenchGroup> groups = GridGroups(cells);
  ASSERT_EQ(groups.size(), 8u + 2u);
  size_t rows = 0;
  for (const BenchGroup& g : groups) {
    if (g.cells.size() == 1) {
      EXPECT_FALSE(cells[g.cells[0]].in_grid);
      continue;
    }
    ++rows;
    ASSERT_EQ(g.cells.size(), 8u);
    for (uint32_t i : g.cells) {
      EXPECT_TRUE(cells[i].in_grid);
      EXPECT_EQ(cells[i].block_size, cells[g.cells[0]].block_size);
    }
  }
  EXPECT_EQ(rows, 8u);
}

TEST(PlanBenchTest, EveryCellGetsTheSameTimeAndEveryWindowItsMinimum) {
  const uint64_t budget = 8'000'000'000;
  BenchPlan plan = *PlanBench(DefaultCells(BenchOp::kRead), {.trial_budget_ns = budget});
  EXPECT_EQ(plan.rounds, kPreferredRounds);
  uint64_t round = 0;
  for (const BenchGroup& g : plan.groups) {
    round += g.window_ns;
    EXPECT_GE(g.window_ns, 10'000'000u);
    if (g.cells.size() == 8) {
      // 125 ms a round: two windows of 10 ms for the cells alone, 8 rows of 8 x 1.64 ms.
      EXPECT_NEAR(static_cast<double>(g.window_ns), 8 * (budget / 64.0 - 20e6) / 64, 10);
    }
  }
  EXPECT_LE(round * plan.rounds, budget);
  EXPECT_GE(round * plan.rounds, budget - plan.rounds * plan.groups.size());
  for (uint32_t i = 0; i < plan.cells.size(); ++i) {
    const BenchGroup& g = plan.groups[plan.group_of[i]];
    EXPECT_NE(std::find(g.cells.begin(), g.cells.end(), i), g.cells.end());
  }
}

TEST(PlanBenchTest, SmallBudgetsGetFewerRoundsNotShorterWindows) {
  // 10 windows of at least 10 ms: 1 s holds 10 rounds, fewer than the minimum of 16, so the
  // windows shrink to fit 16 rounds.
  BenchPlan small = *PlanBench(DefaultCells(BenchOp::kRead), {.trial_budget_ns = 1'000'000'000});
  EXPECT_EQ(small.rounds, kMinRounds);
  for (const BenchGroup& g : small.groups) EXPECT_EQ(g.window_ns, 1'000'000'000 / 16 / 10);
  // 3 s: 30 rounds of minimum windows.
  BenchPlan medium = *PlanBench(DefaultCells(BenchOp::kRead), {.trial_budget_ns = 3'000'000'000});
  EXPECT_EQ(medium.rounds, 30u);
  BenchPlan big = *PlanBench(DefaultCells(BenchOp::kRead),
                             {.trial_budget_ns = 1'000'000'000'000, .preferred_rounds = 1000});
  EXPECT_EQ(big.rounds, kMaxRounds);
}

TEST(PlanBenchTest, ExplicitGroupsAndPlaces) {
  const BenchCell read{IoPattern::kRandRead, 4096, 4096, 32};
  const BenchCell rewrite{IoPattern::kRandRewrite, 4096, 4096, 1};
  BenchPlanOptions options{.trial_budget_ns = 1'000'000'000,
                           .groups = {{{0, 1}, 0}, {{2, 3}, 0}},
                           .places = {0, 1, 0, 1}};
  BenchPlan plan = *PlanBench({read, read, rewrite, rewrite}, options);
  EXPECT_EQ(plan.places, (std::vector<uint32_t>{0, 1, 0, 1}));
  EXPECT_EQ(plan.group_of, (std::vector<uint32_t>{0, 0, 1, 1}));
  // A group's cells must share the queue depth, hold every cell once, and places must match.
  options.groups = {{{0, 2}, 0}, {{1, 3}, 0}};
  EXPECT_FALSE(PlanBench({read, read, rewrite, rewrite}, options));
  options.groups = {{{0, 1}, 0}};
  EXPECT_FALSE(PlanBench({read, read, rewrite, rewrite}, options));
  options.groups = {{{0, 1, 1, 2, 3}, 0}};
  EXPECT_FALSE(PlanBench({read, read, read, read}, options));
  options.groups = {};
  options.places = {0, 1};
  EXPECT_FALSE(PlanBench({read, read, rewrite, rewrite}, options));
}

TEST(WindowOrderTest, BlocksHoldEveryCellOnceInARandomOrder) {
  const BenchGroup group{{10, 11, 12, 13}, 0};
  Xoshiro256 rng(5);
  std::vector<uint8_t> order;
  WindowOrder(group, 100, rng, order);
  ASSERT_EQ(order.size(), 400u);
  std::vector<uint8_t> first_block(order.begin(), order.begin() + 4);
  bool varies = false;
  for (size_t b = 0; b < 100; ++b) {
    std::vector<uint8_t> block(order.begin() + b * 4, order.begin() + b * 4 + 4);
    varies |= block != first_block;
    std::sort(block.begin(), block.end());
    EXPECT_EQ(block, (std::vector<uint8_t>{0, 1, 2, 3})) << b;
  }
  EXPECT_TRUE(varies);
  // Each slot comes first in about a quarter of the blocks: the order is not fixed.
  std::vector<int> first(4, 0);
  for (size_t b = 0; b < 100; ++b) ++first[order[b * 4]];
  for (int count : first) EXPECT_GT(count, 10);
}

TEST(PlanBenchTest, EveryRoundIsASeededPermutationOfTheGroups) {
  std::vector<BenchCell> cells = DefaultCells(BenchOp::kRead);
  BenchPlan a = *PlanBench(cells, {.trial_budget_ns = 8'000'000'000, .seed = 7});
  BenchPlan b = *PlanBench(cells, {.trial_budget_ns = 8'000'000'000, .seed = 7});
  BenchPlan c = *PlanBench(cells, {.trial_budget_ns = 8'000'000'000, .seed = 8});
  ASSERT_EQ(a.order.size(), a.rounds);
  for (const std::vector<uint32_t>& round : a.order) {
    std::vector<uint32_t> sorted = round;
    std::sort(sorted.begin(), sorted.end());
    std::vector<uint32_t> all(a.groups.size());
    std::iota(all.begin(), all.end(), 0u);
    EXPECT_EQ(sorted, all);
  }
  EXPECT_EQ(a.order, b.order);
  EXPECT_NE(a.order, c.order);
  EXPECT_NE(a.order[0], a.order[1]);  // the order changes from round to round
}

TEST(PlanBenchTest, EmptyCellsOrBudgetAreErrors) {
  EXPECT_FALSE(PlanBench({}, {.trial_budget_ns = 1'000'000'000}));
  EXPECT_FALSE(PlanBench(DefaultCells(BenchOp::kRead), {.trial_budget_ns = 0}));
  EXPECT_FALSE(
      PlanBench(DefaultCells(BenchOp::kRead), {.trial_budget_ns = 100}));  // < 1 ns a window
}

TEST(CellSeedTest, DependsOnTheCellNotOnItsPosition) {
  BenchCell a{IoPattern::kRandRead, 4096, 512, 1, true};
  BenchCell b{IoPattern::kRandRead, 4096, 1024, 1, true};
  EXPECT_EQ(CellSeed(1, a), CellSeed(1, a));
  EXPECT_NE(CellSeed(1, a), CellSeed(1, b));
  EXPECT_NE(CellSeed(1, a), CellSeed(2, a));
  // Another place, another stream; place 0 is the seed of a one-place run.
  EXPECT_EQ(CellSeed(1, a, 0), CellSeed(1, a));
  EXPECT_NE(CellSeed(1, a, 1), CellSeed(1, a));
}

}  // namespace
}  // namespace partalign
