// SPDX-License-Identifier: GPL-3.0-or-later
// The `partalign apply` command for a plan file, as every piece of advice prints it (the plan's
// "Applying it", the report's plan section, the planner's .md export, apply's own refusals):
// with the consent the plan needs (--discard N for each partition it gives up, --make-room when
// it shrinks one), so that it runs as printed (issue #40).
#pragma once

#include <optional>
#include <string>

#include "partalign/layout/plan.h"

namespace partalign {

/// The options that name the disk and its topology for apply, as the person gave them.
struct ApplyTarget {
  std::string target;                      ///< --target
  std::string assume;                      ///< --assume
  std::optional<std::string> sector_size;  ///< --sector-size
};

/// "partalign apply --make-room --discard 3 plan.json": apply on `plan_path`, with --make-room
/// when `plan` shrinks a partition (PlanShrinks), --discard N for each partition it gives up
/// (PlanDiscards) and the options of `on` that are set. A plan made with an assumed topology
/// gets `--assume` with its values when `on` names neither --assume nor --sector-size.
std::string ApplyCommand(const std::string& plan_path, const Plan& plan,
                         const ApplyTarget& on = {});

}  // namespace partalign
