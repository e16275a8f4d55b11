// SPDX-License-Identifier: GPL-3.0-or-later
// Executing a plan file with every protection of the safety contract (docs/apply.md, "What
// apply does, step by step"): the steps `partalign apply` runs, and that every other way of
// applying a plan (the interactive planner's `w`) calls rather than repeats.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/apply/apply_bench.h"
#include "cli/apply/table_write.h"
#include "cli/commands.h"
#include "io/boot/boot_records.h"
#include "io/move/journal_registry.h"
#include "partalign/move/move_way.h"

namespace partalign {

/// What `partalign apply` was asked to do.
struct ApplyRequest {
  std::string plan_path;
  TableWriteOptions write;
  bool json = false;
  std::string journal_dir = DefaultJournalDir();
  bool progress = false;
  bool copy_all = false;
  /// --way: how each small shift stays safe; nullopt (auto) takes the cheaper way, measured
  /// beside the journal at the start of each step (docs/mover.md §5a).
  std::optional<MoveWay> way;
  /// --discard N: the partitions whose contents the person gives up again (the plan's
  /// "empty": "discarded" is a claim, never consent: docs/apply.md).
  std::vector<uint32_t> discard;
  /// --make-room: the person allows the plan's shrink again (docs/resize.md); like a discard,
  /// the plan file's "shrink" is a claim, never consent.
  bool make_room = false;
  BootScanOptions boot;     ///< --allow-reinstall-bootloader (docs/boot-records.md)
  ApplyBenchOptions bench;  ///< --bench (apply_bench.h)
  /// The boot runner's apply: each partition whose data moves leaves the table while it moves
  /// (fence_steps.h; docs/at-boot.md, "The fence").
  bool fence = false;
};

/// Runs every step: the plan read and checked against the disk, emptiness proven, the table
/// write or the journaled moves (apply_moves.h), verification, the kernel told; prints what it
/// does on `io` and returns the exit status.
ExitCode ApplyPlan(Streams io, const ApplyRequest& request);

/// `apply PLAN` with these options (and `--discard` for each of `discard`, `--make-room` with
/// `make_room`) and every other one at its default: the whole contract (the planner's `w` runs
/// it on the plan file it wrote, giving up again what the person gave up in the planner and
/// allowing the shrink they took with `M`).
ExitCode ApplyPlanFile(const std::string& plan_path, const TableWriteOptions& write, Streams io,
                       const std::vector<uint32_t>& discard = {}, bool make_room = false);

}  // namespace partalign
