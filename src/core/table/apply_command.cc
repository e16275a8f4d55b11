// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/table/apply_command.h"

#include <fmt/format.h>

#include "partalign/table/plan_check.h"
#include "partalign/util/shell_quote.h"

namespace partalign {

std::string ApplyCommand(const std::string& plan_path, const Plan& plan, const ApplyTarget& on) {
  std::string command = "partalign apply";
  if (plan.at_next_boot) command += " --at-next-boot";
  if (!PlanShrinks(plan).empty()) command += " --make-room";
  for (uint32_t n : PlanDiscards(plan)) command += fmt::format(" --discard {}", n);
  if (!on.target.empty()) command += " --target " + ShellQuote(on.target);
  if (!on.assume.empty()) command += " --assume " + ShellQuote(on.assume);
  if (on.sector_size) command += " --sector-size " + ShellQuote(*on.sector_size);
  // A plan made with an assumed topology is applied with the same assumption, or apply refuses
  // it ("the plan was made with an assumed topology"): when the caller does not know how it was
  // given (the planner's `a`, a plan file read back), the plan's own values say it.
  if (on.assume.empty() && !on.sector_size && plan.topology.origin == TopologyOrigin::kAssumed) {
    command += " --assume " + ShellQuote(TopologySpecOf(plan.topology));
  }
  return command + " " + ShellQuote(plan_path);
}

}  // namespace partalign
