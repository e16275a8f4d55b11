// SPDX-License-Identifier: GPL-3.0-or-later
// One benchmark run end to end, as `bench` and `apply --bench` make it: the target (or a window
// of it) opened with O_DIRECT, the cells its logical sector size allows, an engine, the
// interleaved rounds within the budget, the per-cell summaries and the aligned-vs-misaligned
// analysis. Printing and report files are the caller's. docs/bench.md.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "io/bench/bench_setup.h"
#include "partalign/bench/bench_plan.h"
#include "partalign/bench/bench_report.h"
#include "partalign/bench/bench_runner.h"
#include "partalign/util/result.h"

namespace partalign {

/// The default run's total wall time: "short" in product.md's benchmark method.
inline constexpr double kDefaultBenchBudgetSeconds = 10.0;

struct BenchSession {
  std::string path;
  /// As asked for; without `groups`, cells the sector size does not allow are skipped with a
  /// note (with groups, such a cell is an error).
  std::vector<BenchCell> cells;
  BenchAccess access = BenchAccess::kRead;
  /// The caller holds the disk (O_EXCL and flock): rewrites open it without either.
  bool held = false;
  /// Where the I/Os go (and where offset alignments count from), indexed by `places`; default:
  /// the whole target.
  std::vector<BenchRange> ranges;
  /// Per cell, its range; empty: all in ranges[0].
  std::vector<uint32_t> places;
  /// Cells measured in the same windows; empty: GridGroups (each grid row, the others alone).
  std::vector<BenchGroup> groups;
  EngineChoice engine = EngineChoice::kAuto;
  uint64_t seed = 1;
  /// false: `seconds` is the whole run's wall time (the grid); true: seconds of I/O for a single
  /// workload, in trials of about a quarter of a second (at least kMinRounds of them).
  bool single = false;
  double seconds = kDefaultBenchBudgetSeconds;
  /// Grid mode: the shortest window; 0 keeps the planner's default (10 ms). Longer windows
  /// give slow cells (sequential 1 MiB) enough I/Os per window at the price of rounds.
  uint64_t min_window_ns = 0;
  /// What a user changes to give the run more time, named in the "few I/Os" note.
  std::string time_options = "--budget or --duration";
  /// When the run's wall time started counting (option parsing and the write guard count too).
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  /// Carried into the report's notes (the write range, ...).
  std::vector<std::string> notes;
  /// Called after every round of the measurement (how far it is, how long is left).
  BenchProgressFn progress;
};

struct BenchOutcome {
  BenchReport report;  ///< elapsed_seconds: up to the end of the analysis
  /// Why the engine is not the one asked for (io_uring unavailable), or empty.
  std::string fallback_reason;
};

/// Runs `session`. Fails when the target cannot be opened, no cell fits its sector size, the
/// engine cannot be set up or an I/O fails.
Result<BenchOutcome> RunBenchSession(const BenchSession& session);

}  // namespace partalign
