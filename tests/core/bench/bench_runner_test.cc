// RunBench with a simulated device: the seeded uniform target reports no difference, a
// synthetic 4 KiB-crossing penalty is detected where (and only where) I/Os cross, drift does
// not fake an effect, and the budget and errors are honoured.
#include "partalign/bench/bench_runner.h"

#include <gtest/gtest.h>

#include "core/bench/fake_bench_engine.h"
#include "partalign/bench/bench_report.h"

namespace partalign {
namespace {

using test::FakeDevice;
using test::FakeEngine;

constexpr BenchRange kRange{0, uint64_t{1} << 30};

BenchReport RunFake(FakeDevice device, uint64_t budget_ns = 8'000'000'000, uint64_t seed = 1) {
  FakeEngine engine(device);
  BenchPlan plan = *PlanBench(DefaultCells(false), {.trial_budget_ns = budget_ns, .seed = seed});
  Result<BenchMeasurements> m = RunBench(plan, kRange, engine);
  EXPECT_TRUE(m) << m.error().message;
  BenchReport report;
  for (const CellMeasurement& cell : m->cells) report.cells.push_back(Summarize(cell));
  AddAlignmentAnalysis(report);
  return report;
}

const CellComparison& Find(const BenchReport& r, uint64_t block, uint64_t align) {
  for (const CellComparison& c : r.alignment) {
    if (c.subject.block_size == block && c.subject.offset_align == align) return c;
  }
  ADD_FAILURE() << "no comparison for " << block << "/" << align;
  return r.alignment.front();
}

bool AnySignificant(const BenchReport& r) {
  return std::any_of(r.alignment.begin(), r.alignment.end(),
                     [](const CellComparison& c) { return c.change.significant; });
}

TEST(RunBenchTest, UniformTargetShowsNoSignificantDifference) {
  // A device whose latency does not depend on alignment, one fixed seed: nothing differs. (By
  // design about 3% of seeds do report a difference; the next test checks that rate.)
  BenchReport r = RunFake({.seed = 2}, 8'000'000'000, 2);
  ASSERT_EQ(r.alignment.size(), 56u);
  for (const CellComparison& c : r.alignment) {
    EXPECT_FALSE(c.change.significant) << Describe(c.subject) << " " << FormatChange(c.change);
  }
  EXPECT_NE(r.summary.find("no significant difference"), std::string::npos) << r.summary;
}

TEST(RunBenchTest, UniformTargetRaisesFalseAlarmsInFewerThanFivePercentOfRuns) {
  // The intervals are simultaneous at 95%: over many seeded runs of a uniform device, at most
  // 5% of the runs may report any difference (the whole pipeline: schedule, runner, stats).
  constexpr int kRuns = 60;
  int runs_with_alarm = 0;
  for (int run = 1; run <= kRuns; ++run) {
    const uint64_t seed = static_cast<uint64_t>(run);
    runs_with_alarm += AnySignificant(RunFake({.seed = seed * 7919}, 8'000'000'000, seed));
  }
  EXPECT_LE(runs_with_alarm, kRuns * 5 / 100);
}

TEST(RunBenchTest, CrossingPenaltyIsDetectedWhereIosCross) {
  BenchReport r = RunFake({.crossing_penalty = 0.5});
  // 4 KiB blocks at 512-byte offsets: 7 of 8 I/Os cross a 4 KiB boundary.
  const CellComparison& crossing = Find(r, 4096, 512);
  EXPECT_TRUE(crossing.change.significant) << FormatChange(crossing.change);
  EXPECT_LT(crossing.change.change, -0.25);
  // 512-byte blocks at 512-byte offsets never cross: no penalty, no difference.
  const CellComparison& never = Find(r, 512, 512);
  EXPECT_FALSE(never.change.significant) << FormatChange(never.change);
  // 2048-byte blocks at 2048-byte offsets never cross either.
  EXPECT_FALSE(Find(r, 2048, 2048).change.significant);
  EXPECT_NE(r.summary.find("significantly slower"), std::string::npos) << r.summary;
}

TEST(RunBenchTest, InterleavingKeepsDriftFromFakingAnEffect) {
  // The machine slows by 0.3% per trial, 35% over the run: cells measured late would look
  // slower if they were not interleaved.
  BenchReport r = RunFake({.trial_sigma = 0.01, .drift_per_trial = 0.0004});
  for (const CellComparison& c : r.alignment) {
    EXPECT_FALSE(c.change.significant) << Describe(c.subject) << " " << FormatChange(c.change);
  }
  EXPECT_FALSE(AnySignificant(r));
}

TEST(RunBenchTest, SameSeedSameResults) {
  BenchReport a = RunFake({}, 2'000'000'000, 9);
  BenchReport b = RunFake({}, 2'000'000'000, 9);
  ASSERT_EQ(a.cells.size(), b.cells.size());
  for (size_t i = 0; i < a.cells.size(); ++i)
    EXPECT_EQ(a.cells[i].trial_iops, b.cells[i].trial_iops);
}

TEST(RunBenchTest, StopsBetweenRoundsWhenTheBudgetRunsOut) {
  FakeEngine engine({});
  // Every trial's wall time is far above its planned length (a slow drain): the runner stops
  // after the minimum number of rounds, never in the middle of one.
  engine.set_wall_overhead(1000);
  BenchPlan plan = *PlanBench(DefaultCells(false), {.trial_budget_ns = 8'000'000'000});
  ASSERT_GT(plan.rounds, kMinRounds);
  BenchMeasurements m = *RunBench(plan, kRange, engine);
  EXPECT_EQ(m.rounds, kMinRounds);
  for (const CellMeasurement& c : m.cells) EXPECT_EQ(c.trial_iops.size(), kMinRounds);
  EXPECT_EQ(engine.trials(), static_cast<int>(kMinRounds * plan.cells.size()));
}

TEST(RunBenchTest, ShortensTrialsSoThatEveryPlannedRoundFits) {
  FakeEngine engine({});
  // Each trial takes 40 latencies (2 ms) longer than asked: the runner measures that after the
  // first round and shortens the following trials instead of overrunning or dropping rounds.
  engine.set_wall_overhead(40);
  BenchPlan plan = *PlanBench(DefaultCells(false), {.trial_budget_ns = 8'000'000'000});
  BenchMeasurements m = *RunBench(plan, kRange, engine);
  EXPECT_EQ(m.rounds, plan.rounds);
  EXPECT_LE(m.wall_ns, plan.trial_budget_ns * 102 / 100);
  EXPECT_GT(m.wall_ns, plan.trial_budget_ns * 90 / 100);
  EXPECT_LT(m.planned_ns, plan.rounds * plan.cells.size() * plan.trial_ns);
}

TEST(RunBenchTest, EngineErrorsStopTheRun) {
  FakeEngine engine({});
  engine.set_fail_after(5);
  BenchPlan plan = *PlanBench(DefaultCells(false), {.trial_budget_ns = 1'000'000'000});
  Result<BenchMeasurements> m = RunBench(plan, kRange, engine);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message, "fake I/O error");
}

TEST(RunBenchTest, RangeTooSmallForACellIsAnError) {
  FakeEngine engine({});
  BenchPlan plan = *PlanBench(DefaultCells(false), {.trial_budget_ns = 1'000'000'000});
  Result<BenchMeasurements> m = RunBench(plan, {0, 512 * 1024}, engine);  // < 1 MiB sequential
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("seqread bs=1048576"), std::string::npos) << m.error().message;
}

}  // namespace
}  // namespace partalign
