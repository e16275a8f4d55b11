// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/bench/bench_session.h"

#include <algorithm>

#include <fmt/format.h>

#include "io/util/elapsed.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// Share of a grid run's budget for the trials, drains included (the runner adapts the trial
// length to what trials really take). The rest covers opening the target, the io_uring set-up,
// the statistics and the report files; see docs/bench.md.
constexpr double kTrialShare = 0.92;
// Single-workload mode: trials of about this length, at least kMinRounds of them.
constexpr uint64_t kSingleTrialNs = 250'000'000;
// Fewer I/Os than this per trial make a trial's IOPS a coarse number: warn. A cell that shares
// its windows needs fewer: its rate comes from the latency of each I/O, not from a count, and
// the paired statistic tolerates noisy windows.
constexpr uint64_t kFewIosPerTrial = 20;
constexpr uint64_t kFewIosPerSharedWindow = 5;

}  // namespace

Result<BenchOutcome> RunBenchSession(const BenchSession& session) {
  BenchOutcome out;
  BenchReport& report = out.report;
  report.notes = session.notes;
  Result<BenchTarget> target =
      OpenBenchTarget(session.path, session.access, session.ranges, session.held);
  if (!target) return target.error();
  report.target = target->info;
  std::vector<BenchCell> skipped;
  std::vector<BenchCell> cells =
      CellsForSectorSize(session.cells, target->info.logical_sector_size, &skipped);
  if (!skipped.empty() && !session.groups.empty()) {
    return MakeError(fmt::format("{}: O_DIRECT on '{}' needs multiples of its {}-byte sectors",
                                 Describe(skipped.front()), session.path,
                                 target->info.logical_sector_size));
  }
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

  BenchPlanOptions options;
  options.seed = session.seed;
  options.groups = session.groups;
  options.places = session.places;
  if (session.single) {
    options.trial_budget_ns = static_cast<uint64_t>(session.seconds * 1e9);
    options.preferred_rounds = static_cast<uint32_t>(
        std::clamp<uint64_t>(options.trial_budget_ns / kSingleTrialNs, kMinRounds, kMaxRounds));
    options.min_window_ns = 0;
    report.settings = {"single", session.seconds, session.seed, engine->engine->name(), 0, 0};
  } else {
    const double left = session.seconds * kTrialShare - SecondsSince(session.started);
    options.trial_budget_ns = static_cast<uint64_t>(std::max(left, 0.0) * 1e9);
    if (session.min_window_ns != 0) options.min_window_ns = session.min_window_ns;
    report.settings = {"grid", session.seconds, session.seed, engine->engine->name(), 0, 0};
  }
  Result<BenchPlan> plan = PlanBench(cells, options);
  if (!plan) return plan.error();
  Result<BenchMeasurements> measured =
      RunBench(*plan, target->ranges, *engine->engine, session.progress);
  if (!measured) return measured.error();

  report.settings.rounds = measured->rounds;
  if (measured->rounds > 0) {
    report.settings.trial_seconds = static_cast<double>(measured->planned_ns) / 1e9 /
                                    (measured->rounds * static_cast<double>(plan->groups.size()));
  }
  std::vector<std::string> few;
  uint64_t fewest = UINT64_MAX;
  for (const CellMeasurement& m : measured->cells) {
    report.cells.push_back(Summarize(m));
    const bool shared = plan->groups[m.group].cells.size() > 1;
    const uint64_t per_trial = measured->rounds > 0 ? m.ios / measured->rounds : 0;
    if (per_trial < (shared ? kFewIosPerSharedWindow : kFewIosPerTrial)) {
      few.push_back(Describe(m.cell));
      fewest = std::min(fewest, per_trial);
    }
  }
  if (!few.empty()) {
    report.notes.push_back(fmt::format(
        "{} of {} cells had few I/Os per trial (as few as {}: {}{}); a slow device needs a "
        "larger {}",
        few.size(), measured->cells.size(), fewest, few.front(), few.size() > 1 ? ", ..." : "",
        session.time_options));
  }
  AddAlignmentAnalysis(report);
  report.elapsed_seconds = SecondsSince(session.started);
  return out;
}

}  // namespace partalign
