// SPDX-License-Identifier: GPL-3.0-or-later
// What is left of a staged plan after a boot that ran part of it (docs/at-boot.md): apply runs
// a plan in steps, each complete or covered by its journal; a power loss between two steps
// leaves the disk with the first steps done. The next boot finishes the interrupted step
// (resume) and applies what is left: the same plan, with the partitions already at their new
// place marked as done. Nothing here is new consent: every place is the staged plan's.
#pragma once

#include "partalign/layout/partition_table.h"
#include "partalign/layout/plan.h"
#include "partalign/util/result.h"

namespace partalign {

struct PlanLeft {
  Plan plan;
  /// Actions of the staged plan already done on the disk (their partition at its new place).
  size_t done = 0;
  /// Actions still to do.
  size_t left = 0;
};

/// `staged` as it applies to `now`: unchanged when `now` is the table it was made from; else
/// each action's partition must be at its old place (still to do) or at its new one (done, the
/// action becomes "none"), after the plan's shrinks when every shrunk partition has its shrunk
/// size (PlanAfterShrinks). An error names the partition found elsewhere, or missing.
Result<PlanLeft> StagedPlanLeft(const Plan& staged, const PartitionTable& now);

}  // namespace partalign
