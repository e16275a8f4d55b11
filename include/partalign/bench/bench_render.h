// SPDX-License-Identifier: GPL-3.0-or-later
// Pictures and documents of the benchmark as pure string builders: the SVG heatmap of the
// block size x offset alignment grid (like the seeds' Rebench figure) and the HTML reports
// that embed it next to the tables.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "partalign/bench/bench_report.h"
#include "partalign/util/html.h"

namespace partalign {

struct HeatCell {
  std::vector<std::string> lines;  ///< text drawn in the cell, one line each
  /// 0 (worst, red) .. 0.5 (yellow) .. 1 (best, green); nullopt draws a grey "n/a" cell.
  std::optional<double> shade;
  bool marked = false;  ///< drawn with a thick border: a significant difference
  /// Drawn pale: the colour shows a point estimate the interval does not support.
  bool faded = false;
};

struct Heatmap {
  std::string title;
  std::string row_title;
  std::string column_title;
  std::vector<std::string> rows;
  std::vector<std::string> columns;
  std::vector<std::vector<HeatCell>> cells;  ///< [row][column]
  std::string legend;
};

/// The grid of a run: rows are block sizes, columns offset alignments; each cell shows its
/// median IOPS and its change against the aligned cell of its row, coloured by the ratio
/// (green at or above the reference, red at half of it or less). Empty when the run has no
/// grid cells.
std::optional<Heatmap> AlignmentHeatmap(const BenchReport& report, std::string title);

/// The grid of a --compare: each cell's change from before to after (red slower, green faster,
/// saturating at 20%).
std::optional<Heatmap> ChangeHeatmap(const BenchComparison& comparison);

std::string HeatmapSvg(const Heatmap& heatmap);

/// A self-contained HTML page: summary, settings, the heatmap and the table of cells.
std::string BenchHtml(const BenchReport& report);

/// The same for --compare: before and after heatmaps side by side, the change heatmap and the
/// table of changes.
std::string ComparisonHtml(const BenchComparison& comparison);

}  // namespace partalign
