// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/advice/plan_advice.h"

#include <fmt/format.h>

namespace partalign {

PlanFileAdvice PlanFileAdviceFor(const TargetOptions& target,
                                 const std::optional<std::string>& grain,
                                 const std::optional<std::string>& layout,
                                 const ContentOptions& content, const std::string& output) {
  std::string command = "partalign plan";
  if (!target.assume.empty()) command += " --assume " + ShellQuote(target.assume);
  if (target.sector_size) command += " --sector-size " + ShellQuote(*target.sector_size);
  if (grain) command += " --grain " + ShellQuote(*grain);
  if (layout) command += " --layout " + ShellQuote(*layout);
  for (uint32_t n : content.discard) command += fmt::format(" --discard {}", n);
  if (content.no_scan) command += " --no-scan";
  command += " -o " + ShellQuote(output) + " " + ShellQuote(target.target);
  return {command, "", output};
}

}  // namespace partalign
