// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/advice/plan_advice.h"

#include <algorithm>

#include <fmt/format.h>

#include "cli/room/make_room.h"
#include "io/device/in_use.h"
#include "partalign/layout/way_through.h"
#include "partalign/table/plan_check.h"

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
  if (content.make_room) command += " --make-room";
  if (content.at_next_boot) command += " --at-next-boot";
  command += " -o " + ShellQuote(output) + " " + ShellQuote(target.target);
  return {command, "", output, target.assume, target.sector_size};
}

std::vector<std::string> WayThroughLines(const Plan& plan, const PartitionTable& table,
                                         const TargetOptions& target,
                                         const std::optional<std::string>& grain,
                                         const ContentOptions& content) {
  PlanOptions options;
  options.discard = content.discard;
  options.shrinks = PlanShrinks(plan);
  // A partition in use waits for the next boot, not for room (its reason says so), as in the
  // plan (MakeProvenPlan): it is no way through's business.
  if (!content.at_next_boot) {
    if (Result<std::vector<DiskUser>> users = FindDiskUsers(target.target)) {
      for (const DiskUser& u : *users) {
        if (u.partition != 0) options.in_use.push_back(u.partition);
      }
    }
  }
  WayContext context;
  context.discard = content.discard;
  context.plan_command = [&](const std::vector<uint32_t>& discard) {
    ContentOptions with = content;
    with.discard = discard;
    return PlanFileAdviceFor(target, grain, std::nullopt, with).command;
  };
  context.make_room_command = [&] {
    ContentOptions with = content;
    with.make_room = true;
    return PlanFileAdviceFor(target, grain, std::nullopt, with).command;
  };
  // The shrinks that could make room: read only when something is impossible. A disk whose
  // contents cannot be read for it still gets the other ways.
  std::vector<ShrinkOffer> offers;
  if (!content.make_room &&
      std::any_of(plan.actions.begin(), plan.actions.end(),
                  [](const PlanAction& a) { return a.kind == ActionKind::kImpossible; })) {
    if (Result<std::vector<ShrinkOffer>> read = ReadShrinkOffers(target.target, table)) {
      offers = std::move(*read);
    }
  }
  return WayText(FindWaysThrough(table, plan.alignment, options, plan.actions, offers), context);
}

}  // namespace partalign
