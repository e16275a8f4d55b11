// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer harness: the benchmark result reader (`partalign bench --compare BEFORE AFTER` reads
// two `bench --json` documents, files anybody may have edited). Any input: no crash, no
// sanitizer report; an error is one line naming the file; an accepted document is written back
// as it reads, its alignment analysis and its comparison with itself are computed, and the
// HTML pages and heatmaps made from it show none of its strings (target, settings, summary)
// unescaped.
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

// Appended to every string of the document before it is rendered: markup no page or heatmap
// holds of its own, so that finding it raw means a string went out unescaped (a string of the
// document alone could be "<td>", which the page holds anyway).
constexpr const char* kMarker = "<x-partalign-fuzz>";

void CheckEscaped(const std::string& rendered) {
  FUZZ_CHECK(rendered.find(kMarker) == std::string::npos);
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

  BenchReport marked = *report;
  for (std::string* field : {&marked.target.path, &marked.target.kind, &marked.settings.mode,
                             &marked.settings.engine, &marked.summary}) {
    *field += kMarker;
  }
  CheckEscaped(BenchHtml(marked));
  if (std::optional<Heatmap> heatmap = AlignmentHeatmap(marked, "fuzz")) {
    CheckEscaped(HeatmapSvg(*heatmap));
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
  if (std::optional<Heatmap> change = ChangeHeatmap(*self)) (void)HeatmapSvg(*change);
  Result<BenchComparison> marked_self =
      CompareReports(marked, marked, std::string("before") + kMarker,
                     std::string("after") + kMarker, 0, /*same_run=*/true);
  FUZZ_CHECK(marked_self);
  CheckEscaped(ComparisonHtml(*marked_self));
  return 0;
}
