// SPDX-License-Identifier: GPL-3.0-or-later
// apply for a plan that moves data (docs/apply.md, "Plans that move data"): the plan's changes
// as steps (OrderApplySteps), one journaled move per step, each writing the table that goes
// with the data's new place through the mover, so that after a crash at any instant the table
// on disk matches every partition's data and `partalign resume JOURNAL` finishes or undoes the
// step that was running.
#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>

#include "cli/apply/table_write.h"
#include "cli/commands.h"
#include "io/device/device_probe.h"
#include "partalign/boot/boot_scan.h"
#include "partalign/layout/partition_table.h"
#include "partalign/layout/plan.h"
#include "partalign/move/move_way.h"
#include "partalign/table/plan_check.h"

namespace partalign {

struct MoveApplyRequest {
  std::string plan_path;
  const Plan* plan = nullptr;
  /// The disk, probed, with the plan already checked against it (PlanMismatches).
  std::string path;
  const DeviceInfo* device = nullptr;
  /// The disk's table, read with contents, the partitions the plan leaves behind proven empty
  /// (or discarded): `left_behind`.
  const PartitionTable* table = nullptr;
  const LeftBehind* left_behind = nullptr;
  const TableWriteOptions* write = nullptr;
  std::string journal_dir;
  bool progress = false;
  bool json = false;
  /// Move every byte, not only what each partition's contents use (docs/used-map.md).
  bool copy_all = false;
  /// --way: forced, or nullopt to choose per step by the costs measured then.
  std::optional<MoveWay> way;
  /// --allow-reinstall-bootloader (docs/boot-records.md).
  BootScanOptions boot;
  /// Each partition whose data moves leaves the table while it moves: a fence written before
  /// its move, which the move's table write replaces (fence_steps.h). The boot runner's apply.
  bool fence = false;
  /// Called after the confirmation and every check, before the disk is held and anything is
  /// written (apply --bench measures the old places); false stops apply with nothing written.
  std::function<bool()> before_first_write;
  /// Called once every step is done and verified and the kernel told (apply --bench measures
  /// the new places).
  std::function<void()> after_success;
};

/// The plan's actions as a table: old and new place, kind, reason.
void PrintPlanActions(std::ostream& out, const Plan& plan);

/// Runs the whole sequence: ordering, libfdisk's tables for every step, the checks, the
/// dry-run report (human or JSON), the confirmation, the backups and the moves.
ExitCode ApplyWithMoves(Streams io, const MoveApplyRequest& request);

}  // namespace partalign
