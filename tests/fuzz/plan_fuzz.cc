// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer harness: the plan file reader (apply PLAN). Any input: no crash, no sanitizer
// report, and a plan that is accepted survives a round trip through its own file format and
// can be rendered (tests/fuzz/, scripts/fuzz, docs/safety.md).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "partalign/layout/plan.h"
#include "partalign/layout/plan_render.h"
#include "partalign/layout/planner.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace partalign;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Result<Plan> plan = PlanFromJson(text);
  if (!plan) {
    FUZZ_CHECK(!plan.error().message.empty());
    FUZZ_CHECK(plan.error().message.find('\n') == std::string::npos);
    return 0;
  }
  Result<Plan> again = PlanFromJson(PlanToJson(*plan).dump());
  FUZZ_CHECK(again);
  FUZZ_CHECK(*again == *plan);
  (void)PlanRows(*plan);
  (void)PlanHeadline(*plan);
  (void)PlanSummary(*plan);
  return 0;
}
