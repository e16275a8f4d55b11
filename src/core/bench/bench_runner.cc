#include "partalign/bench/bench_runner.h"

#include <algorithm>

#include <fmt/format.h>

namespace partalign {

Result<BenchMeasurements> RunBench(const BenchPlan& plan, const BenchRange& range,
                                   BenchEngine& engine) {
  BenchMeasurements result;
  std::vector<OffsetGenerator> offsets;
  offsets.reserve(plan.cells.size());
  result.cells.resize(plan.cells.size());
  for (size_t i = 0; i < plan.cells.size(); ++i) {
    const BenchCell& cell = plan.cells[i];
    OffsetSpec spec{OrderOf(cell.pattern), range.start,       range.bytes,
                    cell.block_size,       cell.offset_align, range.origin};
    Result<OffsetGenerator> generator = OffsetGenerator::Make(spec, CellSeed(plan.seed, cell));
    if (!generator)
      return MakeError(fmt::format("{}: {}", Describe(cell), generator.error().message));
    offsets.push_back(*generator);
    result.cells[i].cell = cell;
    result.cells[i].trial_iops.reserve(plan.rounds);
  }

  const uint64_t cells = plan.cells.size();
  uint64_t trial_ns = plan.trial_ns;
  for (uint32_t round = 0; round < plan.rounds; ++round) {
    if (round > 0) {
      // What each trial took beyond its planned length so far, and the trial length that lets
      // the remaining rounds fit what is left of the budget.
      const uint64_t trials_done = uint64_t{round} * cells;
      const uint64_t overhead = result.wall_ns > result.planned_ns
                                    ? (result.wall_ns - result.planned_ns) / trials_done
                                    : 0;
      const uint64_t left =
          plan.trial_budget_ns > result.wall_ns ? plan.trial_budget_ns - result.wall_ns : 0;
      const uint64_t fit = left / ((plan.rounds - round) * cells);
      trial_ns = std::clamp(fit > overhead ? fit - overhead : 0, kMinTrialNs, plan.trial_ns);
      // Stop between rounds, never inside one, so every cell has the same number of trials.
      if (round >= kMinRounds &&
          result.wall_ns + cells * (trial_ns + overhead) > plan.trial_budget_ns) {
        break;
      }
    }
    for (uint32_t index : plan.order[round]) {
      CellMeasurement& m = result.cells[index];
      TrialSpec spec{m.cell.pattern, m.cell.block_size, m.cell.queue_depth, trial_ns};
      Result<TrialResult> trial = engine.RunTrial(spec, offsets[index], m.latency);
      if (!trial) return trial.error();
      if (trial->ios == 0 || trial->measured_ns == 0) {
        return MakeError(
            fmt::format("{}: the engine completed no I/O in a trial", Describe(m.cell)));
      }
      m.trial_iops.push_back(static_cast<double>(trial->ios) * 1e9 /
                             static_cast<double>(trial->measured_ns));
      m.ios += trial->ios;
      m.bytes += trial->bytes;
      m.measured_ns += trial->measured_ns;
      result.wall_ns += trial->wall_ns;
      result.planned_ns += trial_ns;
    }
    result.rounds = round + 1;
  }
  return result;
}

}  // namespace partalign
