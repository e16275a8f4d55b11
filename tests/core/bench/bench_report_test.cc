// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/bench/bench_report.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "partalign/bench/bench_random.h"
#include "partalign/bench/bench_stats.h"

namespace partalign {
namespace {

CellSummary Cell(BenchCell cell, double median, double sigma, uint64_t seed, size_t n = 16,
                 uint32_t group = 0) {
  CellMeasurement m;
  m.cell = cell;
  m.group = group;
  Xoshiro256 rng(seed);
  for (size_t i = 0; i < n; ++i)
    m.trial_iops.push_back(median * std::exp(sigma * rng.NextNormal()));
  for (int i = 0; i < 1000; ++i) m.latency.Record(static_cast<uint64_t>(1e9 / median));
  m.ios = 1000;
  m.bytes = 1000 * cell.block_size;
  m.measured_ns = 1'000'000'000;
  return Summarize(m);
}

// A report with a full grid (every cell at `grid_iops`, 4 KiB blocks at 512-byte alignment at
// `slow_iops`, the aligned 4 KiB cell - random 4 KiB at QD1 - at `qd1_iops`), plus the two
// non-grid cells.
BenchReport Report(double grid_iops, double slow_iops, double qd1_iops, uint64_t seed) {
  BenchReport r;
  r.target = {"/dev/loop7", "disk", uint64_t{1} << 30, 512, 0, uint64_t{1} << 30};
  r.settings = {"grid", 10, 1, "io_uring", 12, 0.0105};
  uint64_t s = seed;
  const std::vector<BenchCell> cells = DefaultCells(BenchOp::kRead);
  const std::vector<BenchGroup> groups = GridGroups(cells);
  for (uint32_t i = 0; i < cells.size(); ++i) {
    const BenchCell& c = cells[i];
    double iops = !c.in_grid ? 5 * grid_iops : IsHeadline(c) ? qd1_iops : grid_iops;
    if (c.in_grid && c.block_size == 4096 && c.offset_align == 512) iops = slow_iops;
    uint32_t group = 0;
    while (std::find(groups[group].cells.begin(), groups[group].cells.end(), i) ==
           groups[group].cells.end()) {
      ++group;
    }
    r.cells.push_back(Cell(c, iops, 0.02, ++s, 16, group));
  }
  AddAlignmentAnalysis(r);
  return r;
}

TEST(SummarizeTest, MedianIntervalAndLatency) {
  CellMeasurement m;
  m.cell = {IoPattern::kRandRead, 4096, 4096, 1};
  m.trial_iops = {100, 300, 200, 250, 150, 120, 280};
  for (int i = 0; i < 99; ++i) m.latency.Record(10'000);
  m.latency.Record(1'000'000);
  m.ios = 100;
  m.measured_ns = 2'000'000'000;
  CellSummary s = Summarize(m);
  EXPECT_EQ(s.trials, 7u);
  EXPECT_EQ(s.iops, 200);
  EXPECT_DOUBLE_EQ(s.mib_per_s, 200.0 * 4096 / (1 << 20));
  EXPECT_EQ(s.iops_ci.low, 100);  // n = 7: [min, max] at 98.4%
  EXPECT_EQ(s.iops_ci.high, 300);
  EXPECT_NEAR(s.lat_p50_us, 10, 10 / 128.0);
  EXPECT_NEAR(s.lat_p99_us, 10, 10 / 128.0);  // the 99th of 100 values is still 10 us
  EXPECT_DOUBLE_EQ(s.measured_seconds, 2.0);
}

TEST(AlignmentAnalysisTest, ComparesEachGridCellWithTheAlignedCellOfItsRow) {
  BenchReport r = Report(20000, 14000, 20000, 1);
  ASSERT_EQ(r.alignment.size(), 56u);
  int significant = 0;
  for (const CellComparison& c : r.alignment) {
    EXPECT_EQ(c.reference.offset_align, 4096u);
    EXPECT_EQ(c.reference.block_size, c.subject.block_size);
    EXPECT_NEAR(c.change.confidence, 1 - 0.05 / 56, 1e-12);
    significant += c.change.significant;
  }
  EXPECT_EQ(significant, 1);
  const std::string expected_start =
      "misaligned random reads: significantly slower in 1 of 56 grid cells (largest: random "
      "4 KiB reads at 512-byte alignment, ";
  EXPECT_EQ(r.summary.substr(0, expected_start.size()), expected_start) << r.summary;
  EXPECT_NE(r.summary.find("% slower ("), std::string::npos) << r.summary;
  EXPECT_EQ(r.summary.substr(r.summary.size() - 3), "%))") << r.summary;
}

TEST(AlignmentAnalysisTest, UniformGridSaysNoSignificantDifference) {
  BenchReport r = Report(20000, 20000, 20000, 2);
  for (const CellComparison& c : r.alignment) EXPECT_FALSE(c.change.significant);
  EXPECT_EQ(r.summary,
            "misaligned random reads: no significant difference from aligned ones in any of the "
            "56 grid cells (simultaneous 95% intervals)");
}

TEST(AlignmentAnalysisTest, RewritesAreNamedAsSuch) {
  const BenchCell misaligned{IoPattern::kRandRewrite, 4096, 512, 1, true};
  const BenchCell aligned{IoPattern::kRandRewrite, 4096, 4096, 1, true};
  std::vector<CellSummary> cells{Cell(misaligned, 500, 0.01, 1, 16, 0),
                                 Cell(aligned, 1000, 0.01, 2, 16, 0)};
  std::vector<CellComparison> comparisons = CompareAlignment(cells);
  ASSERT_EQ(comparisons.size(), 1u);
  EXPECT_EQ(
      AlignmentSummary(comparisons)
          .rfind("misaligned random rewrites: significantly slower in 1 of 1 grid cells (largest: "
                 "random 4 KiB rewrites at 512-byte alignment, 50% slower (",
                 0),
      0u)
      << AlignmentSummary(comparisons);
}

TEST(AlignmentAnalysisTest, CellsOfOneGroupArePairedOthersNot) {
  BenchReport r = Report(20000, 20000, 20000, 11);
  for (const CellComparison& c : r.alignment) EXPECT_EQ(c.change.pairs, 16u);
  // A document of an older version has no groups: its comparisons are unpaired.
  nlohmann::json j = BenchJson(r);
  for (nlohmann::json& c : j["cells"]) c.erase("group");
  Result<BenchReport> old = ParseBenchJson(j, "old.json");
  ASSERT_TRUE(old);
  ASSERT_EQ(old->alignment.size(), 56u);
  for (const CellComparison& c : old->alignment) EXPECT_EQ(c.change.pairs, 0u);
  // Two runs are compared unpaired, also cell by cell of the same group.
  BenchComparison cmp = *CompareReports(r, r, "a", "b");
  for (const CellComparison& c : cmp.cells) EXPECT_EQ(c.change.pairs, 0u);
  BenchComparison same = *CompareReports(r, r, "a", "b", 0, /*same_run=*/true);
  for (const CellComparison& c : same.cells) EXPECT_EQ(c.change.pairs, 16u);
}

TEST(BenchJsonTest, HasTheDocumentedKeysAndRoundTrips) {
  BenchReport r = Report(20000, 14000, 18000, 3);
  r.cells[0].rate_kind = WindowRateKind::kMedianLatency;
  r.cells[1].rate_kind = WindowRateKind::kMeanLatency;
  nlohmann::json j = BenchJson(r);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["cells"][0]["window_rate"], "median_latency");
  EXPECT_EQ(j["cells"][1]["window_rate"], "mean_latency");
  EXPECT_EQ(j["cells"][2]["window_rate"], "count");
  ASSERT_EQ(j["cells"].size(), 66u);
  for (const nlohmann::json& c : j["cells"]) {
    for (const char* key :
         {"pattern", "block_size", "offset_align", "queue_depth", "group", "iops", "mib_per_s",
          "ci95_low", "ci95_high", "lat_p50_us", "lat_p99_us", "trials", "trial_iops",
          "window_rate", "io_count", "measured_seconds"}) {
      EXPECT_TRUE(c.contains(key)) << key;
    }
    EXPECT_TRUE(c["iops"].is_number());
    EXPECT_TRUE(c["trials"].is_number_unsigned());
    EXPECT_LE(c["ci95_low"].get<double>(), c["iops"].get<double>());
    EXPECT_GE(c["ci95_high"].get<double>(), c["iops"].get<double>());
  }
  EXPECT_EQ(j["alignment"]["family_size"], 56);
  EXPECT_EQ(j["alignment"]["comparisons"].size(), 56u);
  EXPECT_EQ(j["alignment"]["comparisons"][0]["paired"], true);
  EXPECT_EQ(j["alignment"]["comparisons"][0]["pairs"], 16);
  EXPECT_EQ(j["target"]["path"], "/dev/loop7");
  EXPECT_EQ(j["settings"]["engine"], "io_uring");

  Result<BenchReport> back = ParseBenchJson(j, "run.json");
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->cells.size(), r.cells.size());
  for (size_t i = 0; i < r.cells.size(); ++i) {
    EXPECT_EQ(back->cells[i].cell, r.cells[i].cell);
    EXPECT_EQ(back->cells[i].group, r.cells[i].group);
    EXPECT_EQ(back->cells[i].rate_kind, r.cells[i].rate_kind);
    EXPECT_NEAR(back->cells[i].iops, r.cells[i].iops, 0.01);
    ASSERT_EQ(back->cells[i].trial_iops.size(), r.cells[i].trial_iops.size());
  }
  EXPECT_EQ(back->alignment.size(), 56u);
  EXPECT_EQ(back->summary, r.summary);
}

TEST(BenchJsonTest, MalformedDocumentsAreErrorsNotExceptions) {
  EXPECT_FALSE(ParseBenchJson(nlohmann::json::array(), "a"));
  EXPECT_FALSE(ParseBenchJson({{"cells", 3}}, "a"));
  nlohmann::json j = BenchJson(Report(20000, 20000, 20000, 4));
  j["cells"][3]["block_size"] = "big";
  Result<BenchReport> r = ParseBenchJson(j, "x.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "'x.json': cells[3]: \"block_size\" is missing or not a non-negative integer");
  j = BenchJson(Report(20000, 20000, 20000, 4));
  j["cells"][0].erase("trial_iops");
  EXPECT_FALSE(ParseBenchJson(j, "x.json"));
  j = BenchJson(Report(20000, 20000, 20000, 4));
  j["cells"][0]["pattern"] = "sideways";
  EXPECT_FALSE(ParseBenchJson(j, "x.json"));
  j = BenchJson(Report(20000, 20000, 20000, 4));
  j["settings"]["rounds"] = "twelve";  // optional fields of the wrong type are ignored
  EXPECT_TRUE(ParseBenchJson(j, "x.json"));
}

TEST(BenchJsonTest, ADocumentWithoutRateKindsHasThoseOfItsVersion) {
  // Before "window_rate", a cell sharing its group's windows had the mean latency's rate and a
  // cell alone the count's; so did a cell without a group (older still: windows of its own).
  nlohmann::json j = BenchJson(Report(20000, 20000, 20000, 4));
  for (nlohmann::json& c : j["cells"]) c.erase("window_rate");
  j["cells"][0]["group"] = nullptr;
  Result<BenchReport> r = ParseBenchJson(j, "old.json");
  ASSERT_TRUE(r) << r.error().message;
  size_t shared = 0;
  for (size_t i = 0; i < r->cells.size(); ++i) {
    const CellSummary& c = r->cells[i];
    // Report() puts each grid row in a group of 8 and each other cell in a group of its own.
    const bool in_row = c.cell.in_grid && i != 0;
    EXPECT_EQ(c.rate_kind, in_row ? WindowRateKind::kMeanLatency : WindowRateKind::kCount)
        << Describe(c.cell);
    shared += in_row;
  }
  EXPECT_EQ(shared, 63u);
  // A cell that says its kind keeps it, whatever the others do not say.
  j["cells"][1]["window_rate"] = "median_latency";
  r = ParseBenchJson(j, "edited.json");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->cells[1].rate_kind, WindowRateKind::kMedianLatency);
  EXPECT_EQ(r->cells[2].rate_kind, WindowRateKind::kMeanLatency);
}

TEST(BenchJsonTest, AnUnknownRateKindIsAnError) {
  nlohmann::json j = BenchJson(Report(20000, 20000, 20000, 4));
  j["cells"][5]["window_rate"] = "harmonic";
  Result<BenchReport> r = ParseBenchJson(j, "x.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "'x.json': cells[5]: \"window_rate\" is missing or not \"count\", "
            "\"median_latency\" or \"mean_latency\"");
  j["cells"][5]["window_rate"] = 2;
  EXPECT_FALSE(ParseBenchJson(j, "x.json"));
}

// Numbers a run never writes: a double far beyond 2^64 where an integer belongs was converted
// with undefined behaviour, a queue depth beyond 2^32 cut short (found by
// tests/fuzz/bench_fuzz.cc).
TEST(BenchJsonTest, IntegersOutOfRangeAreNotConverted) {
  nlohmann::json j = BenchJson(Report(20000, 20000, 20000, 4));
  j["settings"]["seed"] = 7.77778e+97;
  j["settings"]["rounds"] = uint64_t{1} << 40;
  j["target"]["size_bytes"] = -4096;
  j["cells"][0]["io_count"] = 1.5;
  j["cells"][1]["group"] = uint64_t{1} << 33;
  Result<BenchReport> r = ParseBenchJson(j, "x.json");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->settings.seed, 0u);
  EXPECT_EQ(r->settings.rounds, 0u);
  EXPECT_EQ(r->target.size_bytes, 0u);
  EXPECT_EQ(r->cells[0].io_count, 0u);
  EXPECT_FALSE(r->cells[1].group.has_value());
  j["cells"][2]["queue_depth"] = (uint64_t{1} << 32) + 1;
  r = ParseBenchJson(j, "x.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "'x.json': cells[2]: \"queue_depth\" is missing or not a queue depth");
}

TEST(CompareReportsTest, FindsTheChangedCellAndSaysTheRestIsUnchanged) {
  BenchReport before = Report(20000, 20000, 20000, 5);
  BenchReport after = Report(20000, 20000, 23000, 6);  // random 4 KiB QD1 15% faster
  BenchComparison c = *CompareReports(before, after, "before.json", "after.json");
  ASSERT_EQ(c.cells.size(), 66u);
  EXPECT_TRUE(c.unmatched.empty());
  for (const CellComparison& cmp : c.cells) {
    const bool changed = IsHeadline(cmp.subject) && cmp.subject.queue_depth == 1;
    EXPECT_EQ(cmp.change.significant, changed) << Describe(cmp.subject);
    EXPECT_NEAR(cmp.change.confidence, 1 - 0.05 / 66, 1e-12);
  }
  EXPECT_EQ(c.summary.rfind("random 4 KiB reads at QD1 15% faster (", 0), 0u)
      << "[" << c.summary << "]";
  EXPECT_NE(c.summary.find("; sequential 1 MiB reads at QD8 unchanged"), std::string::npos)
      << c.summary;
  EXPECT_NE(c.summary.find("; random 4 KiB reads at QD32 unchanged"), std::string::npos);
  EXPECT_NE(c.summary.find("; the other grid cells: no significant difference in all 63"),
            std::string::npos);
}

TEST(CompareReportsTest, IdenticalRunsSayNoSignificantDifference) {
  BenchComparison c =
      *CompareReports(Report(20000, 20000, 20000, 7), Report(20000, 20000, 20000, 8), "a", "b");
  EXPECT_EQ(c.summary,
            "no significant difference in any of the 66 cells (simultaneous 95% intervals)");
  nlohmann::json j = ComparisonJson(c);
  EXPECT_EQ(j["family_size"], 66);
  EXPECT_EQ(j["cells"].size(), 66u);
  for (const char* key : {"before_iops", "after_iops", "change_pct", "change_low_pct",
                          "change_high_pct", "significant", "paired", "pairs"}) {
    EXPECT_TRUE(j["cells"][0].contains(key)) << key;
  }
}

TEST(CompareReportsTest, UnmatchedCellsAreListedAndNoOverlapIsAnError) {
  BenchReport before = Report(20000, 20000, 20000, 9);
  BenchReport after = before;
  after.cells.pop_back();
  BenchComparison c = *CompareReports(before, after, "a", "b");
  EXPECT_EQ(c.cells.size(), 65u);
  ASSERT_EQ(c.unmatched.size(), 1u);
  EXPECT_EQ(c.unmatched[0], "randread bs=4096 align=4096 qd=32 (only in 'a')");
  after.cells.clear();
  EXPECT_FALSE(CompareReports(before, after, "a", "b"));
}

TEST(CompareReportsTest, CellsWhoseRatesDifferInKindAreNotCompared) {
  // A document of an older version (mean latencies) against one of this version (median
  // latencies in the grid rows): the rows would differ by the two statistics alone.
  BenchReport before = Report(20000, 20000, 20000, 9);
  BenchReport after = Report(20000, 20000, 20000, 10);
  size_t rows = 0;
  for (size_t i = 0; i < before.cells.size(); ++i) {
    if (!before.cells[i].cell.in_grid) continue;
    before.cells[i].rate_kind = WindowRateKind::kMeanLatency;
    after.cells[i].rate_kind = WindowRateKind::kMedianLatency;
    ++rows;
  }
  BenchComparison c = *CompareReports(before, after, "old.json", "new.json");
  EXPECT_EQ(rows, 64u);
  EXPECT_EQ(c.cells.size(), before.cells.size() - rows);
  for (const CellComparison& cmp : c.cells) EXPECT_FALSE(cmp.subject.in_grid);
  ASSERT_EQ(c.unmatched.size(), 1u);
  EXPECT_EQ(c.unmatched[0],
            "64 cells, randread bs=512 align=512 qd=1 to randread bs=4096 align=4096 qd=1 (rates "
            "of another kind in each run: from the mean latency in 'old.json', from the median "
            "latency in 'new.json'; measure both with the same partalign)");
  // A single cell is named alone, and each pair of kinds has its line.
  after.cells[0].rate_kind = WindowRateKind::kCount;
  c = *CompareReports(before, after, "old.json", "new.json");
  ASSERT_EQ(c.unmatched.size(), 2u);
  EXPECT_EQ(c.unmatched[0],
            "randread bs=512 align=512 qd=1 (rates of another kind in each run: from the mean "
            "latency in 'old.json', I/Os counted in 'new.json'; measure both with the same "
            "partalign)");
  EXPECT_EQ(c.unmatched[1].rfind("63 cells, randread bs=512 align=1024 qd=1 to ", 0), 0u)
      << c.unmatched[1];
}

// Issue 40, item 4: an interval that includes 0 and is wide is "too noisy to tell", not
// "unchanged", and the table says what CHANGE is.
TEST(CompareReportsTest, AWideIntervalIsTooNoisyToTellAndTheLegendSaysWhatChangeIs) {
  const Change tight{-0.004, -0.02, 0.012, 0.95, false};
  const Change wide{0.02, -0.28, 28.904, 0.95, false};
  const Change found{0.123, 0.081, 0.16, 0.95, true};
  EXPECT_FALSE(TooNoisyToTell(tight));
  EXPECT_TRUE(TooNoisyToTell(wide));
  EXPECT_FALSE(TooNoisyToTell(found));
  EXPECT_EQ(SignificanceWord(tight), "no");
  EXPECT_EQ(SignificanceWord(wide), "no, too noisy");
  EXPECT_EQ(SignificanceWord(found), "yes");

  BenchReport before = Report(20000, 20000, 20000, 7);
  BenchComparison c = *CompareReports(before, Report(20000, 20000, 20000, 8), "a", "b");
  c.cells[0].change = wide;
  c.cells[1].change = tight;
  const std::string summary = ComparisonSummary(c.cells);
  EXPECT_EQ(summary,
            "no significant difference in any of the 66 cells (simultaneous 95% intervals); 1 "
            "of them too noisy to tell (intervals beyond 5% either way: the rates varied from "
            "window to window; a longer run narrows them)");
  std::vector<std::vector<std::string>> rows = ComparisonRows(c);
  EXPECT_EQ(rows[0].back(), "no, too noisy");
  EXPECT_EQ(rows[1].back(), "no");
  // A headline cell with a wide interval, beside a finding: named too noisy, not unchanged.
  auto headline = std::find_if(c.cells.begin(), c.cells.end(),
                               [](const CellComparison& x) { return IsHeadline(x.subject); });
  ASSERT_NE(headline, c.cells.end());
  headline->change = wide;
  auto grid = std::find_if(c.cells.begin(), c.cells.end(),
                           [](const CellComparison& x) { return !IsHeadline(x.subject); });
  ASSERT_NE(grid, c.cells.end());
  grid->change = found;
  const std::string with_finding = ComparisonSummary(c.cells);
  EXPECT_NE(with_finding.find(" too noisy to tell (-28.0..+2890.4%)"), std::string::npos)
      << with_finding;
  EXPECT_EQ(with_finding.find("unchanged (-28.0"), std::string::npos) << with_finding;

  // Two runs: the estimate over every pair of windows; one run's cells: window by window.
  std::vector<std::string> legend = ComparisonLegend(c);
  ASSERT_EQ(legend.size(), 2u);
  EXPECT_NE(legend[0].find("CHANGE: the change of IOPS estimated over every pair of windows of "
                           "the two runs (Hodges-Lehmann), not the ratio of the two medians"),
            std::string::npos)
      << legend[0];
  EXPECT_NE(legend[1].find("\"no, too noisy\" when it includes 0 and reaches beyond: too "
                           "noisy to tell"),
            std::string::npos)
      << legend[1];
  c.cells[0].change.pairs = 32;
  EXPECT_NE(ComparisonLegend(c)[0].find("window by window (the median of AFTER/BEFORE in the "
                                        "same window)"),
            std::string::npos);
}

TEST(FormatTest, ChangeAndIops) {
  EXPECT_EQ(FormatChange({0.123, 0.081, 0.16, 0.95, true}), "+12.3% (+8.1..+16.0%) *");
  EXPECT_EQ(FormatChange({-0.004, -0.02, 0.012, 0.95, false}), "-0.4% (-2.0..+1.2%)");
  EXPECT_EQ(FormatIops(950), "950");
  EXPECT_EQ(FormatIops(1234), "1.23k");
  EXPECT_EQ(FormatIops(12345), "12.3k");
  EXPECT_EQ(FormatIops(1.2e6), "1.20M");
}

TEST(TableRowsTest, OneRowPerCellWithTheVersusColumnOnGridCells) {
  BenchReport r = Report(20000, 14000, 20000, 10);
  std::vector<std::vector<std::string>> rows = CellRows(r);
  ASSERT_EQ(rows.size(), 66u);
  for (size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), CellColumns().size());
    const bool compared = r.cells[i].cell.in_grid && r.cells[i].cell.offset_align != 4096;
    EXPECT_EQ(rows[i].back().empty(), !compared) << i;
  }
}

}  // namespace
}  // namespace partalign
