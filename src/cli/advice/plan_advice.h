// SPDX-License-Identifier: GPL-3.0-or-later
// The command that writes a plan as a file: what `plan --format markdown` and `report` say
// to run before `partalign apply` (issue #30: the advice printed must be the command that
// makes this very plan, with the options that shaped it, not one that plans something else).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cli/content/content_proof.h"
#include "cli/target/target_options.h"
#include "partalign/layout/plan_render.h"
#include "partalign/util/shell_quote.h"

namespace partalign {

/// `partalign plan` with the options that shape the plan (--assume, --sector-size, --grain,
/// --layout, --discard, --no-scan), `-o output` and the target.
PlanFileAdvice PlanFileAdviceFor(const TargetOptions& target,
                                 const std::optional<std::string>& grain,
                                 const std::optional<std::string>& layout,
                                 const ContentOptions& content,
                                 const std::string& output = "plan.json");

}  // namespace partalign
