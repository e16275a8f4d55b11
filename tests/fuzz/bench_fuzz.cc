// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer harness: the benchmark result reader (`partalign bench --compare BEFORE AFTER` reads
// two `bench --json` documents, files anybody may have edited). Any input: no crash, no
// sanitizer report; an error is one line naming the file; an accepted document is written back
// as it reads, its alignment analysis and its comparison with itself are computed, and the
// HTML pages and heatmaps made from it show none of its strings unescaped.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz/fuzz_check.h"
#include "partalign/bench/bench_render.h"
#include "partalign/bench/bench_report.h"

namespace {

// A string of the document that would be markup if it reached the page as it is.
void CheckEscaped(const std::string& page, const std::string& text) {
  if (text.find('<') != std::string::npos || text.find('&') != std::string::npos) {
    FUZZ_CHECK(page.find(text) == std::string::npos);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace partalign;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;  // the CLI says "not valid JSON" before the reader runs
  Result<BenchReport> report = ParseBenchJson(json, "before.json");
  if (!report) {
    FUZZ_CHECK(report.error().message.find("before.json") != std::string::npos);
    FUZZ_CHECK(report.error().message.find('\n') == std::string::npos);
    return 0;
  }
  const nlohmann::json written = BenchJson(*report);
  Result<BenchReport> again = ParseBenchJson(written, "again.json");
  FUZZ_CHECK(again);
  FUZZ_CHECK(BenchJson(*again) == written);
  FUZZ_CHECK(report->alignment.size() <= report->cells.size());

  const std::string page = BenchHtml(*report);
  std::string svg;
  if (std::optional<Heatmap> heatmap = AlignmentHeatmap(*report, "fuzz")) {
    svg = HeatmapSvg(*heatmap);
  }
  for (const std::string& s :
       {report->target.path, report->target.kind, report->settings.mode, report->settings.engine}) {
    CheckEscaped(page, s);
    CheckEscaped(svg, s);
  }

  // The run against itself: every cell has its partner (the first of its kind).
  Result<BenchComparison> self =
      CompareReports(*report, *report, "before.json", "after.json", 0, /*same_run=*/true);
  if (!self) {
    FUZZ_CHECK(self.error().message.find('\n') == std::string::npos);
    return 0;
  }
  FUZZ_CHECK(self->cells.size() <= report->cells.size());
  FUZZ_CHECK(!ComparisonJson(*self).dump().empty());
  const std::string compared = ComparisonHtml(*self);
  if (std::optional<Heatmap> change = ChangeHeatmap(*self)) (void)HeatmapSvg(*change);
  CheckEscaped(compared, report->target.path);
  return 0;
}
