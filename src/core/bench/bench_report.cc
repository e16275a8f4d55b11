// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/bench/bench_report.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <type_traits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "partalign/topology/probe_report.h"
#include "partalign/util/units.h"
#include "partalign/util/version.h"

namespace partalign {
namespace {

constexpr double kNsPerUs = 1000.0;

// JSON numbers are rounded for people reading the file; the precision kept (0.01 IOPS, 1 ns,
// 0.001%) is far below what a benchmark can resolve.
double Round(double value, double unit) { return std::round(value / unit) * unit; }

std::string Percent(double fraction) {
  const double pct = std::fabs(fraction * 100.0);
  return pct < 9.95 ? fmt::format("{:.1f}", pct) : fmt::format("{:.0f}", pct);
}

std::string SignedPercent(double fraction) { return fmt::format("{:+.1f}%", fraction * 100.0); }

// "4 KiB", "512-byte", used in sentences.
std::string SizeWords(uint64_t bytes) { return FormatSize(bytes); }

// "writes", "rewrites" or "reads".
const char* OpWord(IoPattern pattern) {
  return IsWrite(pattern) ? "writes" : IsRewrite(pattern) ? "rewrites" : "reads";
}

std::string OperationWords(IoPattern pattern) {
  const char* order = OrderOf(pattern) == AccessOrder::kRandom ? "random" : "sequential";
  return fmt::format("{} {}", order, OpWord(pattern));
}

// "random 4 KiB reads at QD32"; grid cells add their alignment.
std::string CellPhrase(const BenchCell& cell) {
  const char* order = OrderOf(cell.pattern) == AccessOrder::kRandom ? "random" : "sequential";
  const char* op = OpWord(cell.pattern);
  if (!IsHeadline(cell)) {
    return fmt::format("{} {} {} at {}-byte alignment", order, SizeWords(cell.block_size), op,
                       cell.offset_align);
  }
  return fmt::format("{} {} {} at QD{}", order, SizeWords(cell.block_size), op, cell.queue_depth);
}

// "12% faster (8-16%)", "12% slower (8-16%)", "unchanged (-1.2..+0.8%)" or "too noisy to
// tell (-28.0..+2890.4%)".
std::string ChangePhrase(const Change& c) {
  if (!c.significant) {
    return fmt::format("{} ({:+.1f}..{:+.1f}%)",
                       TooNoisyToTell(c) ? "too noisy to tell" : "unchanged", c.low * 100.0,
                       c.high * 100.0);
  }
  const bool faster = c.change > 0;
  const double near = faster ? c.low : -c.high;
  const double far = faster ? c.high : -c.low;
  return fmt::format("{}% {} ({}-{}%)", Percent(c.change), faster ? "faster" : "slower",
                     Percent(near), Percent(far));
}

const CellComparison* Largest(const std::vector<const CellComparison*>& list) {
  const CellComparison* best = nullptr;
  for (const CellComparison* c : list) {
    if (!best || std::fabs(c->change.change) > std::fabs(best->change.change)) best = c;
  }
  return best;
}

nlohmann::json ChangeJson(const Change& c) {
  return {{"change_pct", Round(c.change * 100.0, 0.001)},
          {"change_low_pct", Round(c.low * 100.0, 0.001)},
          {"change_high_pct", Round(c.high * 100.0, 0.001)},
          {"significant", c.significant},
          {"paired", c.pairs > 0},
          {"pairs", c.pairs}};
}

nlohmann::json CellKeyJson(const BenchCell& cell) {
  return {{"pattern", ToString(cell.pattern)},
          {"block_size", cell.block_size},
          {"offset_align", cell.offset_align},
          {"queue_depth", cell.queue_depth},
          {"grid", cell.in_grid}};
}

// --- reading JSON without exceptions ---------------------------------------------------------

class JsonReader {
 public:
  explicit JsonReader(std::string source) : source_(std::move(source)) {}

  Result<double> Number(const nlohmann::json& object, const char* key, const std::string& where) {
    auto it = object.find(key);
    if (it == object.end() || !it->is_number()) return Missing(key, "a number", where);
    return it->get<double>();
  }
  Result<uint64_t> Unsigned(const nlohmann::json& object, const char* key,
                            const std::string& where) {
    auto it = object.find(key);
    if (it == object.end() || !it->is_number_unsigned()) {
      return Missing(key, "a non-negative integer", where);
    }
    return it->get<uint64_t>();
  }
  /// An optional number: `fallback` when absent or of another type (never throws); for an
  /// integer, also when the value is not a non-negative integer that fits `T` (a conversion
  /// from a double out of its range is undefined).
  template <typename T>
  T Optional(const nlohmann::json& object, const char* key, T fallback) {
    auto it = object.find(key);
    if (it == object.end() || !it->is_number()) return fallback;
    if constexpr (std::is_floating_point_v<T>) {
      return it->get<T>();
    } else {
      if (!it->is_number_unsigned()) return fallback;
      const uint64_t value = it->get<uint64_t>();
      return value <= std::numeric_limits<T>::max() ? static_cast<T>(value) : fallback;
    }
  }
  std::string String(const nlohmann::json& object, const char* key) {
    auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
  }
  Error Missing(const char* key, const char* what, const std::string& where) {
    return MakeError(fmt::format("'{}': {}\"{}\" is missing or not {}", source_, where, key, what));
  }
  const std::string& source() const { return source_; }

 private:
  std::string source_;
};

Result<CellSummary> ParseCell(JsonReader& r, const nlohmann::json& j, size_t index) {
  const std::string where = fmt::format("cells[{}]: ", index);
  if (!j.is_object()) return MakeError(fmt::format("'{}': {}not an object", r.source(), where));
  CellSummary s;
  std::optional<IoPattern> pattern = ParseIoPattern(r.String(j, "pattern"));
  if (!pattern) return r.Missing("pattern", "an I/O pattern", where);
  s.cell.pattern = *pattern;
  Result<uint64_t> block = r.Unsigned(j, "block_size", where);
  if (!block) return block.error();
  Result<uint64_t> align = r.Unsigned(j, "offset_align", where);
  if (!align) return align.error();
  Result<uint64_t> depth = r.Unsigned(j, "queue_depth", where);
  if (!depth) return depth.error();
  if (*depth > UINT32_MAX) return r.Missing("queue_depth", "a queue depth", where);
  s.cell.block_size = *block;
  s.cell.offset_align = *align;
  s.cell.queue_depth = static_cast<uint32_t>(*depth);
  auto grid = j.find("grid");
  s.cell.in_grid = grid != j.end() && grid->is_boolean() && grid->get<bool>();
  if (auto group = j.find("group");
      group != j.end() && group->is_number_unsigned() && group->get<uint64_t>() <= UINT32_MAX) {
    s.group = group->get<uint32_t>();
  }
  for (auto [key, field] :
       {std::pair{"iops", &s.iops}, std::pair{"mib_per_s", &s.mib_per_s},
        std::pair{"ci95_low", &s.iops_ci.low}, std::pair{"ci95_high", &s.iops_ci.high},
        std::pair{"lat_p50_us", &s.lat_p50_us}, std::pair{"lat_p99_us", &s.lat_p99_us}}) {
    Result<double> v = r.Number(j, key, where);
    if (!v) return v.error();
    *field = *v;
  }
  auto trials = j.find("trial_iops");
  if (trials == j.end() || !trials->is_array()) {
    return r.Missing("trial_iops", "an array (written by partalign bench --json)", where);
  }
  for (const nlohmann::json& t : *trials) {
    if (!t.is_number()) return r.Missing("trial_iops", "an array of numbers", where);
    s.trial_iops.push_back(t.get<double>());
  }
  s.trials = static_cast<uint32_t>(s.trial_iops.size());
  if (auto kind = j.find("window_rate"); kind != j.end()) {
    std::optional<WindowRateKind> parsed =
        kind->is_string() ? ParseWindowRateKind(kind->get<std::string>()) : std::nullopt;
    if (!parsed) {
      return r.Missing("window_rate", "\"count\", \"median_latency\" or \"mean_latency\"", where);
    }
    s.rate_kind = *parsed;
  }
  s.iops_ci.level = r.Optional(j, "ci_level", 0.0);
  s.lat_mean_us = r.Optional(j, "lat_mean_us", 0.0);
  s.io_count = r.Optional(j, "io_count", uint64_t{0});
  s.measured_seconds = r.Optional(j, "measured_seconds", 0.0);
  return s;
}

std::string_view RateKindPhrase(WindowRateKind kind) {
  switch (kind) {
    case WindowRateKind::kCount:
      return "I/Os counted";
    case WindowRateKind::kMedianLatency:
      return "from the median latency";
    case WindowRateKind::kMeanLatency:
      return "from the mean latency";
  }
  return "I/Os counted";
}

}  // namespace

const CellSummary* RowReference(const std::vector<CellSummary>& cells, const BenchCell& cell) {
  if (!cell.in_grid) return nullptr;
  const CellSummary* best = nullptr;
  for (const CellSummary& c : cells) {
    const bool same_row = c.cell.in_grid && c.cell.pattern == cell.pattern &&
                          c.cell.block_size == cell.block_size &&
                          c.cell.queue_depth == cell.queue_depth;
    if (same_row && (!best || c.cell.offset_align > best->cell.offset_align)) best = &c;
  }
  return best;
}

namespace {

// The figures of `s` that follow from its cell and its trials: their count, the median IOPS
// with its interval, the throughput.
void SummarizeTrials(CellSummary& s) {
  s.trials = static_cast<uint32_t>(s.trial_iops.size());
  if (!s.trial_iops.empty()) {
    s.iops = Median(s.trial_iops);
    s.iops_ci = *MedianInterval(s.trial_iops);  // fails only without samples
  }
  s.mib_per_s = s.iops * static_cast<double>(s.cell.block_size) / static_cast<double>(kMiB);
}

}  // namespace

CellSummary Summarize(const CellMeasurement& m) {
  CellSummary s;
  s.cell = m.cell;
  s.group = m.group;
  s.trial_iops = m.trial_iops;
  s.rate_kind = m.rate_kind;
  SummarizeTrials(s);
  s.lat_p50_us = m.latency.Quantile(0.50) / kNsPerUs;
  s.lat_p99_us = m.latency.Quantile(0.99) / kNsPerUs;
  s.lat_mean_us = m.latency.mean() / kNsPerUs;
  s.io_count = m.ios;
  s.measured_seconds = static_cast<double>(m.measured_ns) / 1e9;
  return s;
}

Result<Change> CompareCells(const CellSummary& reference, const CellSummary& subject,
                            double confidence, bool same_run) {
  if (same_run && reference.group && reference.group == subject.group &&
      reference.trial_iops.size() == subject.trial_iops.size()) {
    return ComparePaired(reference.trial_iops, subject.trial_iops, confidence);
  }
  return CompareSamples(reference.trial_iops, subject.trial_iops, confidence);
}

std::vector<CellComparison> CompareAlignment(const std::vector<CellSummary>& cells) {
  std::vector<std::pair<const CellSummary*, const CellSummary*>> pairs;
  for (const CellSummary& subject : cells) {
    const CellSummary* ref = RowReference(cells, subject.cell);
    if (ref && ref != &subject) pairs.emplace_back(ref, &subject);
  }
  const double confidence = BonferroniConfidence(kConfidence, pairs.size());
  std::vector<CellComparison> out;
  for (const auto& [ref, subject] : pairs) {
    // The cells of one report come from one run: those of a group were measured together.
    Result<Change> change = CompareCells(*ref, *subject, confidence, /*same_run=*/true);
    if (!change) continue;  // too few trials: nothing to say about this pair
    out.push_back({ref->cell, subject->cell, ref->iops, subject->iops, *change});
  }
  return out;
}

std::string AlignmentSummary(const std::vector<CellComparison>& comparisons) {
  if (comparisons.empty()) return "";
  const std::string what = "misaligned " + OperationWords(comparisons.front().subject.pattern);
  std::vector<const CellComparison*> slower;
  std::vector<const CellComparison*> faster;
  for (const CellComparison& c : comparisons) {
    if (!c.change.significant) continue;
    (c.change.change < 0 ? slower : faster).push_back(&c);
  }
  const size_t n = comparisons.size();
  if (slower.empty() && faster.empty()) {
    return fmt::format(
        "{}: no significant difference from aligned ones in any of the {} grid cells "
        "(simultaneous 95% intervals)",
        what, n);
  }
  std::string text;
  auto describe = [&](const std::vector<const CellComparison*>& list, const char* word) {
    const CellComparison* big = Largest(list);
    return fmt::format("significantly {} in {} of {} grid cells (largest: {}, {})", word,
                       list.size(), n, CellPhrase(big->subject), ChangePhrase(big->change));
  };
  text = what + ": ";
  if (!slower.empty()) text += describe(slower, "slower");
  if (!faster.empty()) text += (slower.empty() ? "" : "; ") + describe(faster, "faster");
  return text;
}

void AddAlignmentAnalysis(BenchReport& report) {
  report.alignment = CompareAlignment(report.cells);
  report.summary = AlignmentSummary(report.alignment);
}

nlohmann::json BenchJson(const BenchReport& report) {
  nlohmann::json j;
  j["schema_version"] = kJsonSchemaVersion;
  j["partalign_version"] = kVersion;
  const BenchTargetInfo& t = report.target;
  j["target"] = {{"path", t.path},
                 {"kind", t.kind},
                 {"size_bytes", t.size_bytes},
                 {"logical_sector_size", t.logical_sector_size},
                 {"range_start_bytes", t.range_start_bytes},
                 {"range_bytes", t.range_bytes},
                 {"offset_origin_bytes", t.offset_origin_bytes}};
  const BenchSettings& s = report.settings;
  j["settings"] = {{"mode", s.mode},           {"budget_seconds", s.budget_seconds},
                   {"seed", s.seed},           {"engine", s.engine},
                   {"rounds", s.rounds},       {"trial_seconds", Round(s.trial_seconds, 1e-6)},
                   {"confidence", kConfidence}};
  nlohmann::json cells = nlohmann::json::array();
  for (const CellSummary& c : report.cells) {
    nlohmann::json cell = CellKeyJson(c.cell);
    cell["group"] = c.group ? nlohmann::json(*c.group) : nlohmann::json();
    cell["iops"] = Round(c.iops, 0.01);
    cell["mib_per_s"] = Round(c.mib_per_s, 0.001);
    cell["ci95_low"] = Round(c.iops_ci.low, 0.01);
    cell["ci95_high"] = Round(c.iops_ci.high, 0.01);
    cell["ci_level"] = Round(c.iops_ci.level, 1e-4);
    cell["lat_p50_us"] = Round(c.lat_p50_us, 0.001);
    cell["lat_p99_us"] = Round(c.lat_p99_us, 0.001);
    cell["lat_mean_us"] = Round(c.lat_mean_us, 0.001);
    cell["trials"] = c.trials;
    cell["window_rate"] = WindowRateKindName(c.rate_kind);
    cell["io_count"] = c.io_count;
    cell["measured_seconds"] = Round(c.measured_seconds, 1e-6);
    nlohmann::json trials = nlohmann::json::array();
    for (double v : c.trial_iops) trials.push_back(Round(v, 0.01));
    cell["trial_iops"] = std::move(trials);
    cells.push_back(std::move(cell));
  }
  j["cells"] = std::move(cells);
  nlohmann::json comparisons = nlohmann::json::array();
  for (const CellComparison& c : report.alignment) {
    nlohmann::json cmp = CellKeyJson(c.subject);
    cmp["reference_offset_align"] = c.reference.offset_align;
    cmp["reference_iops"] = Round(c.reference_iops, 0.01);
    cmp["iops"] = Round(c.subject_iops, 0.01);
    cmp.update(ChangeJson(c.change));
    comparisons.push_back(std::move(cmp));
  }
  j["alignment"] = {
      {"family_size", report.alignment.size()},
      {"comparison_confidence", report.alignment.empty()
                                    ? kConfidence
                                    : Round(report.alignment.front().change.confidence, 1e-6)},
      {"comparisons", std::move(comparisons)}};
  j["summary"] = report.summary;
  j["notes"] = report.notes;
  j["elapsed_seconds"] = Round(report.elapsed_seconds, 1e-3);
  return j;
}

Result<BenchReport> ParseBenchJson(const nlohmann::json& json, const std::string& source) {
  JsonReader r(source);
  if (!json.is_object()) return MakeError(fmt::format("'{}': not a JSON object", source));
  auto cells = json.find("cells");
  if (cells == json.end() || !cells->is_array()) {
    return MakeError(
        fmt::format("'{}': no \"cells\" array; not a partalign bench --json document", source));
  }
  BenchReport report;
  if (auto target = json.find("target"); target != json.end() && target->is_object()) {
    report.target.path = r.String(*target, "path");
    report.target.kind = r.String(*target, "kind");
    report.target.size_bytes = r.Optional(*target, "size_bytes", uint64_t{0});
    report.target.logical_sector_size = r.Optional(*target, "logical_sector_size", uint64_t{512});
    report.target.range_start_bytes = r.Optional(*target, "range_start_bytes", uint64_t{0});
    report.target.range_bytes = r.Optional(*target, "range_bytes", uint64_t{0});
    report.target.offset_origin_bytes = r.Optional(*target, "offset_origin_bytes", uint64_t{0});
  }
  if (auto settings = json.find("settings"); settings != json.end() && settings->is_object()) {
    report.settings.mode = r.String(*settings, "mode");
    report.settings.engine = r.String(*settings, "engine");
    report.settings.seed = r.Optional(*settings, "seed", uint64_t{0});
    report.settings.rounds = r.Optional(*settings, "rounds", 0u);
    report.settings.budget_seconds = r.Optional(*settings, "budget_seconds", 0.0);
    report.settings.trial_seconds = r.Optional(*settings, "trial_seconds", 0.0);
  }
  std::vector<size_t> without_kind;
  for (size_t i = 0; i < cells->size(); ++i) {
    Result<CellSummary> cell = ParseCell(r, (*cells)[i], i);
    if (!cell) return cell.error();
    if (!(*cells)[i].contains("window_rate")) without_kind.push_back(i);
    report.cells.push_back(std::move(*cell));
  }
  // Before "window_rate" (2026-12-05), a cell that shared its group's windows had the rate of
  // its mean latency without the slowest tenth, whether I/O by I/O or taking turns; a cell
  // alone (or without a group: windows of its own) had the count's.
  if (!without_kind.empty()) {
    std::map<uint32_t, size_t> group_sizes;
    for (const CellSummary& c : report.cells) {
      if (c.group) ++group_sizes[*c.group];
    }
    for (size_t i : without_kind) {
      CellSummary& c = report.cells[i];
      const bool shared = c.group && group_sizes[*c.group] > 1;
      c.rate_kind = shared ? WindowRateKind::kMeanLatency : WindowRateKind::kCount;
    }
  }
  report.summary = r.String(json, "summary");
  AddAlignmentAnalysis(report);
  return report;
}

Result<BenchComparison> CompareReports(const BenchReport& before, const BenchReport& after,
                                       const std::string& before_source,
                                       const std::string& after_source, size_t family,
                                       bool same_run) {
  BenchComparison result{before_source, after_source, before, after, {}, {}, {}};
  std::vector<std::pair<const CellSummary*, const CellSummary*>> pairs;
  std::vector<std::pair<const CellSummary*, const CellSummary*>> other_kind;
  auto same = [](const BenchCell& a, const BenchCell& b) {
    return a.pattern == b.pattern && a.block_size == b.block_size &&
           a.offset_align == b.offset_align && a.queue_depth == b.queue_depth;
  };
  for (const CellSummary& b : before.cells) {
    auto a = std::find_if(after.cells.begin(), after.cells.end(),
                          [&](const CellSummary& c) { return same(c.cell, b.cell); });
    if (a == after.cells.end()) {
      result.unmatched.push_back(fmt::format("{} (only in '{}')", Describe(b.cell), before_source));
    } else if (a->rate_kind != b.rate_kind) {
      // A median latency's rate against a mean latency's would show the difference of the two
      // statistics as a change.
      other_kind.emplace_back(&b, &*a);
    } else {
      pairs.emplace_back(&b, &*a);
    }
  }
  for (const CellSummary& a : after.cells) {
    auto b = std::find_if(before.cells.begin(), before.cells.end(),
                          [&](const CellSummary& c) { return same(c.cell, a.cell); });
    if (b == before.cells.end()) {
      result.unmatched.push_back(fmt::format("{} (only in '{}')", Describe(a.cell), after_source));
    }
  }
  // One line for each pair of kinds (a document of an older version: every grid row).
  while (!other_kind.empty()) {
    const WindowRateKind was = other_kind.front().first->rate_kind;
    const WindowRateKind is = other_kind.front().second->rate_kind;
    auto same_kinds = [&](const auto& p) {
      return p.first->rate_kind == was && p.second->rate_kind == is;
    };
    auto rest = std::stable_partition(other_kind.begin(), other_kind.end(), same_kinds);
    const size_t n = static_cast<size_t>(rest - other_kind.begin());
    const std::string cells =
        n == 1 ? Describe(other_kind.front().first->cell)
               : fmt::format("{} cells, {} to {}", n, Describe(other_kind.front().first->cell),
                             Describe((rest - 1)->first->cell));
    result.unmatched.push_back(
        fmt::format("{} (rates of another kind in each run: {} in '{}', {} in '{}'; measure "
                    "both with the same partalign)",
                    cells, RateKindPhrase(was), before_source, RateKindPhrase(is), after_source));
    other_kind.erase(other_kind.begin(), rest);
  }
  if (pairs.empty()) {
    return MakeError(
        fmt::format("'{}' and '{}' have no cell in common", before_source, after_source));
  }
  const double confidence = BonferroniConfidence(kConfidence, std::max(family, pairs.size()));
  for (const auto& [b, a] : pairs) {
    Result<Change> change = CompareCells(*b, *a, confidence, same_run);
    if (!change) {
      return MakeError(fmt::format("{}: {}", Describe(b->cell), change.error().message));
    }
    result.cells.push_back({b->cell, a->cell, b->iops, a->iops, *change});
  }
  result.summary = ComparisonSummary(result.cells);
  return result;
}

std::string ComparisonSummary(const std::vector<CellComparison>& comparisons) {
  // Findings first, then what did not change.
  std::vector<std::string> parts;
  std::vector<std::string> unchanged;
  std::vector<const CellComparison*> grid;
  std::vector<const CellComparison*> grid_significant;
  bool any_significant = false;
  for (const CellComparison& c : comparisons) {
    any_significant |= c.change.significant;
    if (!IsHeadline(c.subject)) {
      grid.push_back(&c);
      if (c.change.significant) grid_significant.push_back(&c);
      continue;
    }
    (c.change.significant ? parts : unchanged)
        .push_back(CellPhrase(c.subject) + " " + ChangePhrase(c.change));
  }
  const size_t noisy = static_cast<size_t>(
      std::count_if(comparisons.begin(), comparisons.end(),
                    [](const CellComparison& c) { return TooNoisyToTell(c.change); }));
  // An interval that straddles 0 and reaches beyond the bound is no finding either way.
  const std::string noisy_text =
      noisy == 0 ? ""
                 : fmt::format(
                       "; {} of them too noisy to tell (intervals beyond {:.0f}% either "
                       "way: the rates varied from window to window; a longer run "
                       "narrows them)",
                       noisy, kNoChangeBound * 100);
  if (!any_significant) {
    return fmt::format(
        "no significant difference in any of the {} cells (simultaneous 95% "
        "intervals){}",
        comparisons.size(), noisy_text);
  }
  if (!grid.empty()) {
    if (grid_significant.empty()) {
      unchanged.push_back(
          fmt::format("the other grid cells: no significant difference in all {}", grid.size()));
    } else {
      const CellComparison* big = Largest(grid_significant);
      parts.push_back(
          fmt::format("{} of the other {} grid cells significantly different "
                      "(largest: {} {})",
                      grid_significant.size(), grid.size(), CellPhrase(big->subject),
                      ChangePhrase(big->change)));
    }
  }
  parts.insert(parts.end(), unchanged.begin(), unchanged.end());
  std::string text;
  for (const std::string& p : parts) text += (text.empty() ? "" : "; ") + p;
  return text;
}

bool TooNoisyToTell(const Change& change) {
  return !change.significant && (change.low < -kNoChangeBound || change.high > kNoChangeBound);
}

std::string SignificanceWord(const Change& change) {
  if (change.significant) return "yes";
  return TooNoisyToTell(change) ? "no, too noisy" : "no";
}

std::vector<std::string> ComparisonLegend(const BenchComparison& comparison) {
  const bool paired = std::any_of(comparison.cells.begin(), comparison.cells.end(),
                                  [](const CellComparison& c) { return c.change.pairs > 0; });
  return {std::string("BEFORE, AFTER: median IOPS of each over its windows. CHANGE: the change of "
                      "IOPS estimated ") +
              (paired ? "window by window (the median of AFTER/BEFORE in the same window)"
                      : "over every pair of windows of the two runs (Hodges-Lehmann)") +
              ", not the ratio of the two medians: for a small change the two can differ, even in "
              "sign.",
          fmt::format("(low..high%): the estimate's simultaneous 95% interval. SIGNIFICANT: yes "
                      "when it excludes 0; no when it includes 0 and stays within {:.0f}% either "
                      "way (unchanged); \"no, too noisy\" when it includes 0 and reaches beyond: "
                      "too noisy to tell.",
                      kNoChangeBound * 100)};
}

nlohmann::json ComparisonJson(const BenchComparison& comparison) {
  nlohmann::json j;
  j["schema_version"] = kJsonSchemaVersion;
  j["partalign_version"] = kVersion;
  auto side = [](const std::string& source, const BenchReport& r) {
    return nlohmann::json{{"source", source},
                          {"target", r.target.path},
                          {"engine", r.settings.engine},
                          {"seed", r.settings.seed},
                          {"rounds", r.settings.rounds}};
  };
  j["before"] = side(comparison.before_source, comparison.before);
  j["after"] = side(comparison.after_source, comparison.after);
  j["family_size"] = comparison.cells.size();
  j["comparison_confidence"] = comparison.cells.empty()
                                   ? kConfidence
                                   : Round(comparison.cells.front().change.confidence, 1e-6);
  nlohmann::json cells = nlohmann::json::array();
  for (const CellComparison& c : comparison.cells) {
    nlohmann::json cell = CellKeyJson(c.subject);
    cell["before_iops"] = Round(c.reference_iops, 0.01);
    cell["after_iops"] = Round(c.subject_iops, 0.01);
    cell.update(ChangeJson(c.change));
    cells.push_back(std::move(cell));
  }
  j["cells"] = std::move(cells);
  j["unmatched"] = comparison.unmatched;
  j["summary"] = comparison.summary;
  return j;
}

std::string FormatChange(const Change& c) {
  return fmt::format("{} ({:+.1f}..{:+.1f}%){}", SignedPercent(c.change), c.low * 100.0,
                     c.high * 100.0, c.significant ? " *" : "");
}

std::string FormatIops(double iops) {
  if (iops >= 1e6) return fmt::format("{:.2f}M", iops / 1e6);
  if (iops >= 1e4) return fmt::format("{:.1f}k", iops / 1e3);
  if (iops >= 1e3) return fmt::format("{:.2f}k", iops / 1e3);
  return fmt::format("{:.0f}", iops);
}

namespace {

std::string FormatMicros(double us) {
  if (us >= 1e4) return fmt::format("{:.1f}ms", us / 1e3);
  if (us >= 1e3) return fmt::format("{:.2f}ms", us / 1e3);
  return fmt::format("{:.1f}us", us);
}

std::vector<std::string> CellKeyCells(const BenchCell& cell) {
  return {std::string(ToString(cell.pattern)), std::to_string(cell.block_size),
          std::to_string(cell.offset_align), std::to_string(cell.queue_depth)};
}

}  // namespace

std::vector<std::string> CellColumns() {
  return {"PATTERN",    "BLOCK",   "ALIGN",   "QD",     "IOPS",      "MiB/s",
          "IOPS-95%CI", "LAT-P50", "LAT-P99", "TRIALS", "VS-ALIGNED"};
}

std::vector<std::vector<std::string>> CellRows(const BenchReport& report) {
  std::vector<std::vector<std::string>> rows;
  for (const CellSummary& c : report.cells) {
    std::vector<std::string> row = CellKeyCells(c.cell);
    std::string versus;
    for (const CellComparison& a : report.alignment) {
      if (a.subject == c.cell) versus = FormatChange(a.change);
    }
    for (std::string s :
         {FormatIops(c.iops), fmt::format("{:.1f}", c.mib_per_s),
          FormatIops(c.iops_ci.low) + "-" + FormatIops(c.iops_ci.high), FormatMicros(c.lat_p50_us),
          FormatMicros(c.lat_p99_us), std::to_string(c.trials), versus}) {
      row.push_back(std::move(s));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::string> ComparisonColumns() {
  return {"PATTERN", "BLOCK", "ALIGN", "QD", "BEFORE", "AFTER", "CHANGE", "SIGNIFICANT"};
}

std::vector<std::vector<std::string>> ComparisonRows(const BenchComparison& comparison) {
  std::vector<std::vector<std::string>> rows;
  for (const CellComparison& c : comparison.cells) {
    std::vector<std::string> row = CellKeyCells(c.subject);
    row.push_back(FormatIops(c.reference_iops));
    row.push_back(FormatIops(c.subject_iops));
    row.push_back(FormatChange(c.change));
    row.push_back(SignificanceWord(c.change));
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace partalign
