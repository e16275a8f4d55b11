// SPDX-License-Identifier: GPL-3.0-or-later
// The order in which apply executes a plan that moves data (docs/apply.md, "Plans that move
// data"): one step per partition whose data moves, each a journaled move with the table change
// from the table before it to the table after it, so that after a crash at any instant the
// table on disk matches the data of every partition. Table-only changes ride in the table write
// of the first step after which they fit. Pure: the plan and the table in, the steps out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "partalign/layout/partition_table.h"
#include "partalign/layout/plan.h"
#include "partalign/move/move_plan.h"
#include "partalign/table/table_transition.h"
#include "partalign/util/result.h"

namespace partalign {

/// A partition's place in the table a step writes. Sectors are logical sectors, inclusive.
struct TableEdit {
  uint32_t partition = 0;
  uint64_t start_sector = 0;
  uint64_t end_sector = 0;
  bool operator==(const TableEdit&) const = default;
};

/// ApplyStep::move_partition of a step that moves no data: a table write alone.
inline constexpr uint32_t kTableOnlyStep = 0;

/// One journaled move: the data of `move_partition` goes to its new place, then the table with
/// `edits` applied is written (by the mover, in the same journal). A step whose
/// move_partition is kTableOnlyStep moves nothing: its table is written as apply writes a
/// table-only plan (backed up, in the crash-safe order), to move a DOS EBR out of the way of
/// the next step's move.
struct ApplyStep {
  uint32_t move_partition = 0;
  /// Every entry this step's table changes, in partition order: the moved partition's new
  /// place, and table-only changes. A DOS extended partition whose start and end both change
  /// may take two steps: first the union of its old and new extent (so that it holds its
  /// logical partitions at their old and at their new places), then its new extent.
  std::vector<TableEdit> edits;
  bool operator==(const ApplyStep&) const = default;
};

/// Orders the move-data and table-only actions of `plan` on `table` (the disk's table, with
/// each partition's contents) into steps such that
///  - no move writes where another partition's data is at that moment (a partition moved by an
///    earlier step is at its new place, the others at their old one), and
///  - the table after every step is valid: partitions do not overlap, a DOS extended partition
///    holds its logical partitions, no EBR lands inside a partition (where libfdisk puts the
///    EBRs: ebr_placement.h), so every intermediate table can be written and read, and
///  - no move writes over an EBR of the table on the disk while it runs (the data would break
///    the chain until the step's table is written, and for good after a rollback): a
///    table-only step (kTableOnlyStep) first writes the table-only changes that fit then, or,
///    for a table another tool wrote, libfdisk's rewrite of the same table, when that moves
///    the EBR away.
/// Among the moves that may go next the lowest on the disk goes first: a cascade upwards runs
/// from the highest partition down, one downwards from the lowest up. A table-only change goes
/// into the first step after which it fits (before the first move: into the first step). Fails
/// with one sentence naming the partitions when no such order exists (moves that need each
/// other's place) or when the plan has no move-data action.
Result<std::vector<ApplyStep>> OrderApplySteps(const Plan& plan, const PartitionTable& table);

/// The plan restricted to one step: a table-only (or, for the moved partition, move-data)
/// action from the place in `before` (the table the step starts from) to the step's edit for
/// each partition it changes, "none" for every other. What TableVersusPlan checks the step's new
/// table against.
Plan StepPlan(const Plan& plan, const ApplyStep& step, const PartitionTable& before);

/// The areas of the table on the disk while a step's move runs - the old table of the step's
/// `transition`, changed or not - that the move's destination covers. The data would overwrite
/// them before the step's new table is written: until then, and for good after a rollback, the
/// table on the disk would have lost them (a DOS EBR in the gap after a logical partition that
/// moves up: the next logical partition drops out of the chain). One sentence each.
std::vector<std::string> MoveOverwritesTable(const TableTransition& transition, uint32_t partition,
                                             const MoveGeometry& move);

/// The byte range the mover copies for a move-data action: from the old start to the new start,
/// `bytes_to_move` long.
MoveGeometry MoveOf(const PlanAction& action, uint64_t sector_size);

/// "up" or "down".
std::string_view Direction(const PlanAction& action);

}  // namespace partalign
