// SPDX-License-Identifier: GPL-3.0-or-later
// Making room at apply (plan --make-room, docs/resize.md): the plan's shrinks, before every
// other step. Each partition's contents are shrunk by their own tool on a scratch copy (the
// checker clean before and after, ShrinkOnScratch), every one before anything is written; then
// what each tool changed, with the table entry that makes the partition smaller, is written as
// one journaled step that moves no data, one shrink after the other (each table entry computed
// from the table the step before it wrote): after a crash `partalign resume` completes it or
// rolls it back. apply then runs the rest of the plan (PlanAfterShrinks) on the table the last
// step wrote.
#pragma once

#include <string>

#include "cli/apply/table_write.h"
#include "cli/commands.h"
#include "io/device/device_probe.h"
#include "partalign/layout/partition_table.h"
#include "partalign/layout/plan.h"

namespace partalign {

struct ShrinkStepsRequest {
  std::string plan_path;
  const Plan* plan = nullptr;  ///< its claims recomputed (RecomputePlan), consent given
  std::string path;
  const DeviceInfo* device = nullptr;
  const PartitionTable* table = nullptr;  ///< the disk's, read with contents
  const TableWriteOptions* write = nullptr;
  std::string journal_dir;
  bool progress = false;
  bool json = false;
};

/// Shows the plan's shrinks and, unless --dry-run, asks once, writes them in plan order and
/// verifies the table each step wrote: kOk with `*written` true then. kOk with `*written` false
/// for a dry run, which shows the rest of the plan as planned on the table the shrinks make
/// (its steps are computed from the table they write, so the dry run shows its actions, not
/// its journaled steps). Anything else after printing why.
ExitCode ApplyShrinks(Streams io, const ShrinkStepsRequest& request, bool* written);

}  // namespace partalign
