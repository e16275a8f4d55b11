#include "io/bench/bench_session.h"

#include <algorithm>

#include <fmt/format.h>

#include "partalign/util/units.h"

namespace partalign {
namespace {

// Share of a grid run's budget for the trials, drains included (the runner adapts the trial
// length to what trials really take). The rest covers opening the target, the io_uring set-up,
// the statistics and the report files; see docs/bench.md.
constexpr double kTrialShare = 0.92;
// Single-workload mode: trials of about this length, at least kMinRounds of them.
constexpr uint64_t kSingleTrialNs = 250'000'000;
// Fewer I/Os than this per trial make a trial's IOPS a coarse number: warn.
constexpr uint64_t kFewIosPerTrial = 20;

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Result<BenchOutcome> RunBenchSession(const BenchSession& session) {
  BenchOutcome out;
  BenchReport& report = out.report;
  report.notes = session.notes;
  Result<BenchTarget> target = OpenBenchTarget(session.path, session.write, session.range);
  if (!target) return target.error();
  report.target = target->info;
  std::vector<BenchCell> skipped;
  std::vector<BenchCell> cells =
      CellsForSectorSize(session.cells, target->info.logical_sector_size, &skipped);
  if (!skipped.empty()) {
    report.notes.push_back(fmt::format(
        "{} cells skipped: O_DIRECT on {}-byte sectors needs block sizes and offsets in whole "
        "sectors",
        skipped.size(), target->info.logical_sector_size));
  }
  if (cells.empty()) {
    return MakeError(fmt::format("{}: O_DIRECT on '{}' needs multiples of its {}-byte sectors",
                                 Describe(skipped.front()), session.path,
                                 target->info.logical_sector_size));
  }

  uint32_t max_depth = 1;
  uint64_t pool_bytes = 0;
  for (const BenchCell& cell : cells) {
    max_depth = std::max(max_depth, cell.queue_depth);
    pool_bytes = std::max(pool_bytes, cell.block_size * cell.queue_depth);
  }
  Result<BenchEngineSetup> engine =
      MakeBenchEngine(session.engine, target->target, max_depth, pool_bytes);
  if (!engine) return engine.error();
  out.fallback_reason = engine->fallback_reason;

  PlanOptions options;
  options.seed = session.seed;
  if (session.single) {
    options.trial_budget_ns = static_cast<uint64_t>(session.seconds * 1e9);
    options.preferred_trial_ns = kSingleTrialNs;
    report.settings = {"single", session.seconds, session.seed, engine->engine->name(), 0, 0};
  } else {
    const double left = session.seconds * kTrialShare - SecondsSince(session.started);
    options.trial_budget_ns = static_cast<uint64_t>(std::max(left, 0.0) * 1e9);
    if (session.preferred_trial_ns != 0) options.preferred_trial_ns = session.preferred_trial_ns;
    report.settings = {"grid", session.seconds, session.seed, engine->engine->name(), 0, 0};
  }
  Result<BenchPlan> plan = PlanBench(cells, options);
  if (!plan) return plan.error();
  Result<BenchMeasurements> measured = RunBench(*plan, target->range, *engine->engine);
  if (!measured) return measured.error();

  report.settings.rounds = measured->rounds;
  if (measured->rounds > 0) {
    report.settings.trial_seconds = static_cast<double>(measured->planned_ns) / 1e9 /
                                    (measured->rounds * static_cast<double>(cells.size()));
  }
  for (const CellMeasurement& m : measured->cells) {
    report.cells.push_back(Summarize(m));
    if (measured->rounds > 0 && m.ios / measured->rounds < kFewIosPerTrial) {
      report.notes.push_back(
          fmt::format("{}: only {} I/Os per trial; a slow device needs a larger {}",
                      Describe(m.cell), m.ios / measured->rounds, session.time_options));
    }
  }
  AddAlignmentAnalysis(report);
  report.elapsed_seconds = SecondsSince(session.started);
  return out;
}

}  // namespace partalign
