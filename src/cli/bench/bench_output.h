// SPDX-License-Identifier: GPL-3.0-or-later
// The human output and the report files of a benchmark, shared by `bench` (one run, or
// --compare) and `apply --bench` (a before/after comparison per partition): the tables with
// their legends and summary sentences, and the SVG heatmap and HTML report.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "partalign/bench/bench_render.h"
#include "partalign/bench/bench_report.h"
#include "partalign/util/result.h"

namespace partalign {

/// Reads a `bench --json` document from `path` (untrusted: a regular file, size-limited,
/// parsed and validated by ParseBenchJson); errors are one line naming the file.
Result<BenchReport> ReadBenchResult(const std::string& path);

/// Writes `content` to `path`, replacing the file.
Status WriteTextFile(const std::string& path, const std::string& content);

/// Writes `stem`.svg (when there is a heatmap) and `stem`.html and names them on `names`
/// ("heatmap: PATH", "report:  PATH").
Status WriteBenchReports(const std::string& stem, const std::optional<Heatmap>& heatmap,
                         const std::string& html, std::ostream& names);

/// One run: the headline, one row per cell, the legends of the intervals, the summary.
void PrintBenchReport(std::ostream& out, const BenchReport& report);

/// A comparison: `title`, one row per matched cell, the cells not compared, the summary.
void PrintBenchComparison(std::ostream& out, const BenchComparison& comparison,
                          const std::string& title);

/// "(simultaneous 95% intervals (Bonferroni, each at 99.24%)": the comparison's confidence.
std::string ComparisonConfidence(const BenchComparison& comparison);

}  // namespace partalign
