// SPDX-License-Identifier: GPL-3.0-or-later
// The benchmark report model: per-cell summaries (median IOPS with its interval, latency
// percentiles), the aligned-vs-misaligned comparisons inside one run, the comparison of two
// runs (--compare), the one-sentence summaries, the JSON documents and the table rows. Pure:
// the renderers (text table in the CLI, SVG/HTML in bench_render.h) only format these values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "partalign/bench/bench_plan.h"
#include "partalign/bench/bench_runner.h"
#include "partalign/bench/bench_stats.h"
#include "partalign/util/result.h"

namespace partalign {

struct BenchTargetInfo {
  std::string path;
  std::string kind;  ///< "disk", "partition", "image file"
  uint64_t size_bytes = 0;
  uint64_t logical_sector_size = 512;
  uint64_t range_start_bytes = 0;
  uint64_t range_bytes = 0;
  /// The byte offset alignments are counted from (0, or a partition's start).
  uint64_t offset_origin_bytes = 0;
};

struct BenchSettings {
  std::string mode;           ///< "grid" (the default run) or "single" (--pattern ...)
  double budget_seconds = 0;  ///< grid: the whole run; single: the I/O time (--duration)
  uint64_t seed = 0;
  std::string engine;
  uint32_t rounds = 0;
  double trial_seconds = 0;
};

struct CellSummary {
  BenchCell cell;
  /// The interleaving group of the run: cells of one group were measured in the same windows,
  /// their i-th trials form pairs. Absent in documents of older versions.
  std::optional<uint32_t> group;
  uint32_t trials = 0;
  double iops = 0;       ///< median of the trials' IOPS
  double mib_per_s = 0;  ///< iops * block size
  Interval iops_ci;      ///< distribution-free interval for the median IOPS
  double lat_p50_us = 0;
  double lat_p99_us = 0;
  double lat_mean_us = 0;
  uint64_t io_count = 0;
  double measured_seconds = 0;
  std::vector<double> trial_iops;  ///< one per window, in round order
  /// How trial_iops were computed. A document of an older version has none: its cells sharing
  /// a group had the mean latency's rate, the others the count's (ParseBenchJson).
  WindowRateKind rate_kind = WindowRateKind::kCount;
};

/// Cell `subject` against cell `reference` (the aligned cell of its grid row, or the same cell
/// in the "before" run): change = subject / reference - 1.
struct CellComparison {
  BenchCell reference;
  BenchCell subject;
  double reference_iops = 0;
  double subject_iops = 0;
  Change change;
};

struct BenchReport {
  BenchTargetInfo target;
  BenchSettings settings;
  std::vector<CellSummary> cells;
  /// Grid cells against the aligned cell of their row (RowReference), as a family of
  /// simultaneous 95% intervals (Bonferroni over all of them).
  std::vector<CellComparison> alignment;
  std::string summary;
  std::vector<std::string> notes;  ///< cells skipped, trials too short, ...
  double elapsed_seconds = 0;
};

CellSummary Summarize(const CellMeasurement& measurement);

/// The aligned reference of a grid cell's row (same pattern, block size and queue depth): the
/// cell with the largest offset alignment, 4096 in the default grid. nullptr outside the grid.
const CellSummary* RowReference(const std::vector<CellSummary>& cells, const BenchCell& cell);

/// Every grid cell against the reference of its row.
std::vector<CellComparison> CompareAlignment(const std::vector<CellSummary>& cells);

/// "misaligned random reads: no significant difference (56 comparisons, ...)" or the number of
/// significant cells and the largest effect.
std::string AlignmentSummary(const std::vector<CellComparison>& comparisons);

/// Fills `alignment` and `summary` of a report whose cells are set.
void AddAlignmentAnalysis(BenchReport& report);

/// `subject` against `reference` at `confidence`: paired (ComparePaired on their trials, window
/// by window) when both belong to one interleaving group of the same run - `same_run` says the
/// caller knows they do - else unpaired (CompareSamples).
Result<Change> CompareCells(const CellSummary& reference, const CellSummary& subject,
                            double confidence, bool same_run);

/// The `partalign bench --json` document (docs/bench.md has the schema).
nlohmann::json BenchJson(const BenchReport& report);

/// Reads a document written by BenchJson (for --compare). `source` names it in errors.
Result<BenchReport> ParseBenchJson(const nlohmann::json& json, const std::string& source);

/// Two runs of the same cells, before and after a change.
struct BenchComparison {
  std::string before_source;
  std::string after_source;
  BenchReport before;
  BenchReport after;
  std::vector<CellComparison> cells;   ///< matched cells, in the "before" order
  std::vector<std::string> unmatched;  ///< cells only one of the runs has
  std::string summary;
};

/// Matches cells by (pattern, block size, offset alignment, queue depth) and compares each
/// pair; the intervals are simultaneous over all pairs (Bonferroni). Fails when nothing matches.
/// `family`: how many comparisons the intervals are simultaneous over, when the caller makes
/// more than this one (apply --bench: every cell of every partition); 0 = the matched pairs.
/// `same_run`: both reports are parts of one run (apply --bench's old and new place), so cells
/// of one group are compared paired; two runs never are.
Result<BenchComparison> CompareReports(const BenchReport& before, const BenchReport& after,
                                       const std::string& before_source,
                                       const std::string& after_source, size_t family = 0,
                                       bool same_run = false);

/// "random 4 KiB reads at QD1 12% faster (8-16%); sequential 1 MiB reads unchanged; ..."
std::string ComparisonSummary(const std::vector<CellComparison>& comparisons);

nlohmann::json ComparisonJson(const BenchComparison& comparison);

/// A change whose interval includes 0 and stays within this either way is "unchanged"; one
/// that reaches beyond it is "too noisy to tell" - not a finding of no change.
inline constexpr double kNoChangeBound = 0.05;

/// Not significant, and the interval reaches beyond kNoChangeBound on a side.
bool TooNoisyToTell(const Change& change);

/// The SIGNIFICANT column: "yes", "no" (unchanged within kNoChangeBound) or "no, too noisy".
std::string SignificanceWord(const Change& change);

/// The lines under a comparison table: what BEFORE, AFTER and CHANGE are (CHANGE is an
/// estimate of its own, paired window by window when the cells shared windows, not the ratio of
/// the medians shown), and what the interval and SIGNIFICANT say.
std::vector<std::string> ComparisonLegend(const BenchComparison& comparison);

/// "+12.3% (+8.1..+16.0%)", or "+0.4% (-2.0..+2.9%)"; a trailing " *" marks significance.
std::string FormatChange(const Change& change);

/// "12.3k", "950", "1.20M": IOPS for tables and pictures.
std::string FormatIops(double iops);

/// Table rows for the human output; the column names are in the *Columns() functions.
std::vector<std::string> CellColumns();
std::vector<std::vector<std::string>> CellRows(const BenchReport& report);
std::vector<std::string> ComparisonColumns();
std::vector<std::vector<std::string>> ComparisonRows(const BenchComparison& comparison);

}  // namespace partalign
