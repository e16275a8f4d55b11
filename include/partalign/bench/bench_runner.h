// Runs a BenchPlan on an engine: round after round, each cell once per round in the round's
// order. Trials take longer than planned (a deadline is noticed at the next completion, queues
// drain, the machine is busy): after each round the runner shortens the next trials so that
// the remaining rounds fit the budget, and stops after a complete round when even that fails.
#pragma once

#include <cstdint>
#include <vector>

#include "partalign/bench/bench_engine.h"
#include "partalign/bench/bench_plan.h"
#include "partalign/bench/latency_histogram.h"
#include "partalign/util/result.h"

namespace partalign {

/// Where the I/Os may go, in bytes from the start of the target.
struct BenchRange {
  uint64_t start = 0;
  uint64_t bytes = 0;
  /// Offset alignments are counted from this byte: 0, or `start` for a window that stands for
  /// a device of its own (a partition benchmarked through its disk or image file, which has no
  /// device node: its "aligned" offsets are aligned relative to the partition's start, as
  /// they would be on /dev/sdb1).
  uint64_t origin = 0;
};

struct CellMeasurement {
  BenchCell cell;
  std::vector<double> trial_iops;  ///< one value per completed trial, in round order
  uint64_t ios = 0;
  uint64_t bytes = 0;
  uint64_t measured_ns = 0;
  LatencyHistogram latency;  ///< every counted I/O of every trial
};

/// The runner never shortens a trial below this: a fast SSD still does hundreds of I/Os in it.
inline constexpr uint64_t kMinTrialNs = 1'000'000;

struct BenchMeasurements {
  std::vector<CellMeasurement> cells;  ///< in plan order
  uint32_t rounds = 0;                 ///< complete rounds measured
  uint64_t wall_ns = 0;                ///< as reported by the engine, drains included
  uint64_t planned_ns = 0;             ///< the trial lengths asked for, summed
};

Result<BenchMeasurements> RunBench(const BenchPlan& plan, const BenchRange& range,
                                   BenchEngine& engine);

}  // namespace partalign
