// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/bench/bench_output.h"

#include <fstream>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/util/smartcols_table.h"
#include "io/util/text_file.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

TextTable MakeTable(const std::vector<std::string>& columns, size_t left_columns) {
  std::vector<TextTable::Column> spec;
  for (size_t i = 0; i < columns.size(); ++i) spec.push_back({columns[i], i >= left_columns});
  return TextTable(spec);
}

// "partalign bench: '/dev/loop0' (disk, 1 GiB, 512-byte sectors), io_uring, ..."
std::string Headline(const BenchReport& r) {
  std::set<uint32_t> groups;
  for (const CellSummary& c : r.cells) groups.insert(c.group.value_or(groups.size()));
  return fmt::format(
      "partalign bench: '{}' ({}, {}, {}-byte sectors), engine {}, {} rounds x {} windows of "
      "{:.1f} ms ({} cells), seed {}, {:.1f} s",
      r.target.path, r.target.kind, FormatSize(r.target.size_bytes), r.target.logical_sector_size,
      r.settings.engine, r.settings.rounds, groups.size(), r.settings.trial_seconds * 1e3,
      r.cells.size(), r.settings.seed, r.elapsed_seconds);
}

}  // namespace

Result<BenchReport> ReadBenchResult(const std::string& path) {
  Result<std::string> text = ReadWholeFile(path, "benchmark result");
  if (!text) return text.error();
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return MakeError(fmt::format("'{}' is not valid JSON", path));
  return ParseBenchJson(j, path);
}

Status WriteTextFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  if (!out) return MakeError(fmt::format("cannot write '{}'", path));
  return {};
}

Status WriteBenchReports(const std::string& stem, const std::optional<Heatmap>& heatmap,
                         const std::string& html, std::ostream& names) {
  if (heatmap) {
    const std::string svg = stem + ".svg";
    if (Status s = WriteTextFile(svg, HeatmapSvg(*heatmap)); !s) return s;
    names << "heatmap: " << svg << '\n';
  }
  const std::string page = stem + ".html";
  if (Status s = WriteTextFile(page, html); !s) return s;
  names << "report:  " << page << '\n';
  return {};
}

void PrintBenchReport(std::ostream& out, const BenchReport& report) {
  out << Headline(report) << '\n';
  TextTable table = MakeTable(CellColumns(), 1);
  for (const auto& row : CellRows(report)) table.AddRow(row);
  out << table.Render();
  if (!report.alignment.empty()) {
    const Change& first = report.alignment.front().change;
    out << fmt::format(
        "VS-ALIGNED: change of IOPS against offset alignment {} of the same block size{}, with "
        "simultaneous 95% intervals over {} comparisons (each at {:.3f}%); * = significant\n",
        report.alignment.front().reference.offset_align,
        first.pairs > 0 ? fmt::format(", paired over {} windows", first.pairs) : "",
        report.alignment.size(), first.confidence * 100);
  }
  out << "IOPS-95%CI: distribution-free 95% interval of the median over the windows\n";
  if (!report.summary.empty()) out << "summary: " << report.summary << '\n';
}

std::string ComparisonConfidence(const BenchComparison& comparison) {
  return fmt::format("simultaneous 95% intervals (Bonferroni, each at {:.2f}%)",
                     comparison.cells.front().change.confidence * 100);
}

void PrintBenchComparison(std::ostream& out, const BenchComparison& comparison,
                          const std::string& title) {
  out << title << '\n';
  TextTable table = MakeTable(ComparisonColumns(), 1);
  for (const auto& row : ComparisonRows(comparison)) table.AddRow(row);
  out << table.Render();
  for (const std::string& line : ComparisonLegend(comparison)) out << line << '\n';
  for (const std::string& u : comparison.unmatched) out << "not compared: " << u << '\n';
  out << "summary: " << comparison.summary << '\n';
}

}  // namespace partalign
