// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/bench/bench_render.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "partalign/util/units.h"

namespace partalign {
namespace {

// Geometry of the heatmap in SVG user units (pixels at 100%).
constexpr int kCellWidth = 96;
constexpr int kCellHeight = 52;
constexpr int kLeftMargin = 120;
constexpr int kTopMargin = 64;
constexpr int kBottomMargin = 44;
constexpr int kRightMargin = 16;

// ColorBrewer RdYlGn end and middle colours (colorbrewer2.org): readable for most forms of
// colour blindness when combined with the printed numbers.
struct Rgb {
  double r, g, b;
};
constexpr Rgb kRed{215, 48, 39};
constexpr Rgb kYellow{254, 224, 139};
constexpr Rgb kGreen{26, 152, 80};
constexpr const char* kNoData = "#d9d9d9";
// Opacity of the cells whose difference is not significant, on the white background.
constexpr const char* kFadedOpacity = "0.35";
constexpr const char* kBenchFooter = "Intervals: see docs/bench.md.";

// Below this share of the reference a cell is drawn fully red.
constexpr double kWorstRatio = 0.5;
// --compare colours saturate at +-20%.
constexpr double kChangeSaturation = 0.2;

std::string Shade(double s) {
  s = std::clamp(s, 0.0, 1.0);
  const Rgb& from = s < 0.5 ? kRed : kYellow;
  const Rgb& to = s < 0.5 ? kYellow : kGreen;
  const double t = s < 0.5 ? s * 2 : (s - 0.5) * 2;
  auto mix = [t](double a, double b) { return static_cast<int>(std::lround(a + (b - a) * t)); };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(from.r, to.r), mix(from.g, to.g),
                     mix(from.b, to.b));
}

// "-11.2..-5.1%": the interval of a change, for a line of its own in a heatmap cell.
std::string IntervalLine(const Change& c) {
  return fmt::format("{:+.1f}..{:+.1f}%", c.low * 100, c.high * 100);
}

std::vector<uint64_t> Distinct(std::vector<uint64_t> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

// A heatmap of the grid cells among `items`: rows are block sizes, columns offset
// alignments; `fill` draws each cell, cells without an item stay grey "n/a". nullopt when
// there are no grid cells.
template <typename Item, typename GetCell, typename Fill>
std::optional<Heatmap> GridHeatmap(const std::vector<Item>& items, GetCell get, std::string title,
                                   std::string legend, Fill fill) {
  std::vector<uint64_t> blocks;
  std::vector<uint64_t> aligns;
  for (const Item& item : items) {
    const BenchCell& cell = get(item);
    if (!cell.in_grid) continue;
    blocks.push_back(cell.block_size);
    aligns.push_back(cell.offset_align);
  }
  blocks = Distinct(blocks);
  aligns = Distinct(aligns);
  if (blocks.empty()) return std::nullopt;
  Heatmap h;
  h.title = std::move(title);
  h.legend = std::move(legend);
  h.row_title = "block size (bytes)";
  h.column_title = "offset alignment (bytes)";
  for (uint64_t b : blocks) h.rows.push_back(std::to_string(b));
  for (uint64_t a : aligns) h.columns.push_back(std::to_string(a));
  h.cells.assign(blocks.size(), std::vector<HeatCell>(aligns.size(), HeatCell{{"n/a"}, {}, false}));
  auto index = [](const std::vector<uint64_t>& values, uint64_t v) {
    return static_cast<size_t>(std::find(values.begin(), values.end(), v) - values.begin());
  };
  for (const Item& item : items) {
    const BenchCell& cell = get(item);
    if (cell.in_grid)
      fill(item, h.cells[index(blocks, cell.block_size)][index(aligns, cell.offset_align)]);
  }
  return h;
}

std::string SettingsParagraph(const BenchReport& r) {
  return fmt::format(
      "<p>Target <code>{}</code> ({}, {}, {}-byte logical sectors); engine {}; {} mode, {} "
      "rounds of {:.1f} ms trials; seed {}; {:.1f} s.</p>\n",
      XmlEscape(r.target.path), XmlEscape(r.target.kind), FormatSize(r.target.size_bytes),
      r.target.logical_sector_size, XmlEscape(r.settings.engine), XmlEscape(r.settings.mode),
      r.settings.rounds, r.settings.trial_seconds * 1e3, r.settings.seed, r.elapsed_seconds);
}

}  // namespace

std::optional<Heatmap> AlignmentHeatmap(const BenchReport& report, std::string title) {
  std::string legend = fmt::format(
      "median IOPS; change vs the largest offset alignment of the row and its interval (paired, "
      "simultaneous 95%); * and border: significant, pale: not; red <= {:.0f}% of it",
      kWorstRatio * 100);
  auto fill = [&](const CellSummary& c, HeatCell& cell) {
    cell.lines = {FormatIops(c.iops)};
    cell.shade = 1.0;
    if (RowReference(report.cells, c.cell) == &c) cell.lines.push_back("reference");
    for (const CellComparison& a : report.alignment) {
      if (a.subject != c.cell) continue;
      const double ratio = a.change.change + 1.0;
      cell.shade = std::clamp((ratio - kWorstRatio) / (1.0 - kWorstRatio), 0.0, 1.0);
      cell.marked = a.change.significant;
      cell.faded = !a.change.significant;
      cell.lines.push_back(
          fmt::format("{:+.1f}%{}", a.change.change * 100, a.change.significant ? " *" : ""));
      cell.lines.push_back(IntervalLine(a.change));
    }
  };
  return GridHeatmap(
      report.cells, [](const CellSummary& c) { return c.cell; }, std::move(title),
      std::move(legend), fill);
}

std::optional<Heatmap> ChangeHeatmap(const BenchComparison& comparison) {
  std::string legend = fmt::format(
      "change of IOPS and its interval (simultaneous 95%); border: significant, pale: not; "
      "colours saturate at +-{:.0f}%",
      kChangeSaturation * 100);
  auto fill = [](const CellComparison& c, HeatCell& cell) {
    cell.lines = {
        fmt::format("{:+.1f}%{}", c.change.change * 100, c.change.significant ? " *" : ""),
        IntervalLine(c.change)};
    cell.shade = std::clamp(0.5 + c.change.change / (2 * kChangeSaturation), 0.0, 1.0);
    cell.marked = c.change.significant;
    cell.faded = !c.change.significant;
  };
  return GridHeatmap(
      comparison.cells, [](const CellComparison& c) { return c.subject; },
      "change, after vs before", std::move(legend), fill);
}

std::string HeatmapSvg(const Heatmap& h) {
  const int width = kLeftMargin + static_cast<int>(h.columns.size()) * kCellWidth + kRightMargin;
  const int height = kTopMargin + static_cast<int>(h.rows.size()) * kCellHeight + kBottomMargin;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"20\" font-size=\"15\" font-weight=\"bold\">{3}</text>\n"
      "<text x=\"{4}\" y=\"42\" text-anchor=\"middle\">{5}</text>\n",
      width, height, 8, XmlEscape(h.title),
      kLeftMargin + static_cast<int>(h.columns.size()) * kCellWidth / 2, XmlEscape(h.column_title));
  for (size_t c = 0; c < h.columns.size(); ++c) {
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                       kLeftMargin + static_cast<int>(c) * kCellWidth + kCellWidth / 2,
                       kTopMargin - 6, XmlEscape(h.columns[c]));
  }
  const int rows_mid = kTopMargin + static_cast<int>(h.rows.size()) * kCellHeight / 2;
  svg += fmt::format(
      "<text x=\"16\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 16 "
      "{0})\">{1}</text>\n",
      rows_mid, XmlEscape(h.row_title));
  for (size_t r = 0; r < h.rows.size(); ++r) {
    const int y = kTopMargin + static_cast<int>(r) * kCellHeight;
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", kLeftMargin - 8,
                       y + kCellHeight / 2 + 4, XmlEscape(h.rows[r]));
    for (size_t c = 0; c < h.columns.size() && c < h.cells[r].size(); ++c) {
      const HeatCell& cell = h.cells[r][c];
      const int x = kLeftMargin + static_cast<int>(c) * kCellWidth;
      svg += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" fill-opacity=\"{}\" "
          "stroke=\"{}\" stroke-width=\"{}\"/>\n",
          x, y, kCellWidth, kCellHeight, cell.shade ? Shade(*cell.shade) : kNoData,
          cell.faded ? kFadedOpacity : "1", cell.marked ? "black" : "white", cell.marked ? 3 : 1);
      const int first_line =
          y + kCellHeight / 2 + 4 - 7 * (static_cast<int>(cell.lines.size()) - 1);
      for (size_t i = 0; i < cell.lines.size(); ++i) {
        svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                           x + kCellWidth / 2, first_line + 14 * static_cast<int>(i),
                           XmlEscape(cell.lines[i]));
      }
    }
  }
  svg += fmt::format("<text x=\"8\" y=\"{}\" font-size=\"11\">{}</text>\n</svg>\n", height - 14,
                     XmlEscape(h.legend));
  return svg;
}

std::string BenchHtml(const BenchReport& report) {
  std::string body = "<p class=\"summary\">" +
                     XmlEscape(report.summary.empty() ? "single workload" : report.summary) +
                     "</p>\n" + SettingsParagraph(report);
  if (std::optional<Heatmap> h = AlignmentHeatmap(report, "median IOPS by block size and offset")) {
    body += HeatmapSvg(*h);
  }
  body += "<h2>Cells</h2>\n" + HtmlTable(CellColumns(), CellRows(report));
  for (const std::string& note : report.notes) body += "<p>Note: " + XmlEscape(note) + "</p>\n";
  return HtmlPage("partalign bench: " + report.target.path, body, "", kBenchFooter);
}

std::string ComparisonHtml(const BenchComparison& comparison) {
  std::string body = "<p class=\"summary\">" + XmlEscape(comparison.summary) + "</p>\n";
  body += "<h2>Before: " + XmlEscape(comparison.before_source) + "</h2>\n" +
          SettingsParagraph(comparison.before);
  body += "<h2>After: " + XmlEscape(comparison.after_source) + "</h2>\n" +
          SettingsParagraph(comparison.after);
  body += "<div class=\"pictures\">\n";
  for (const auto& [label, report] :
       {std::pair{"before", &comparison.before}, std::pair{"after", &comparison.after}}) {
    if (std::optional<Heatmap> h = AlignmentHeatmap(*report, std::string(label))) {
      body += HeatmapSvg(*h);
    }
  }
  if (std::optional<Heatmap> h = ChangeHeatmap(comparison)) body += HeatmapSvg(*h);
  body += "</div>\n<h2>Changes</h2>\n" + HtmlTable(ComparisonColumns(), ComparisonRows(comparison));
  for (const std::string& u : comparison.unmatched) {
    body += "<p>Not compared: " + XmlEscape(u) + "</p>\n";
  }
  return HtmlPage("partalign bench --compare", body, "", kBenchFooter);
}

}  // namespace partalign
