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
#include "partalign/layout/partition_table.h"
#include "partalign/layout/plan.h"
#include "partalign/layout/plan_render.h"
#include "partalign/util/shell_quote.h"

namespace partalign {

/// `partalign plan` with the options that shape the plan (--assume, --sector-size, --grain,
/// --layout, --discard, --no-scan, --make-room), `-o output` and the target.
PlanFileAdvice PlanFileAdviceFor(const TargetOptions& target,
                                 const std::optional<std::string>& grain,
                                 const std::optional<std::string>& layout,
                                 const ContentOptions& content,
                                 const std::string& output = "plan.json");

/// What would align the partitions `plan` cannot (way_through.h), as plan and report print it:
/// the plan command of the ways through is PlanFileAdviceFor with their --discard added.
/// `table` is the one the plan was made from, with its contents.
std::vector<std::string> WayThroughLines(const Plan& plan, const PartitionTable& table,
                                         const TargetOptions& target,
                                         const std::optional<std::string>& grain,
                                         const ContentOptions& content);

}  // namespace partalign
