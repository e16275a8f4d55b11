// SPDX-License-Identifier: GPL-3.0-or-later
// The records outside the partition table that name a moved partition's place
// (docs/boot-records.md: boot sectors' hidden sectors, exFAT's PartitionOffset, GRUB's
// pointers, Windows' BCD and MountedDevices), written by apply in the journaled step that moves
// the partition: the mover writes them with the step's table, once the data is moved and
// verified, and resume completes or rolls them back with it (TableUpdate::in_data for those
// inside the moved data).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "partalign/boot/boot_record.h"
#include "partalign/layout/partition_table.h"
#include "partalign/move/move_plan.h"
#include "partalign/table/table_transition.h"
#include "partalign/util/result.h"

namespace partalign {

/// One step of apply as the records see it: which partitions its table write changes (the
/// moved one first), the table before and after it, and its table ranges (their new bytes may
/// take an edit that falls in them: GRUB's pointer in the MBR).
struct RecordStep {
  uint32_t moved = 0;             ///< the partition whose data the step moves
  std::vector<uint32_t> changed;  ///< every partition whose entry the step changes
  const PartitionTable* before = nullptr;
  const PartitionTable* after = nullptr;
  TableTransition* transition = nullptr;
};

/// What a step writes besides its table.
struct StepRecords {
  /// Whole sectors, absolute: the mover's updates (in_data where they lie in the moved data).
  std::vector<TableUpdate> updates;
  /// One line each, for the dry run and the report ("NTFS boot sector: hidden sectors 63 ->
  /// 2048, primary and backup").
  std::vector<std::string> descriptions;
  /// The bytes the edits change on the disk after the step, absolute [first, end): what the
  /// disk invariant allows to differ (tests/support/disk_invariant.h).
  std::vector<std::pair<uint64_t, uint64_t>> edited;
};

/// Assigns each edit of `report` (kUpdate findings) to the step that changes its cause's place
/// and turns it into whole-sector updates at the place its bytes have when that step writes
/// its table: the sector's bytes are read from `fd` now (before any step: where the partition
/// the bytes belong to is on the original table, `original`), with the edits of earlier steps
/// to the same sector applied. An edit that falls in a table range of its step patches that
/// range's new bytes instead. Edits without a cause (stale records fixed in place) and causes
/// no step moves are returned in `unassigned`.
Result<std::vector<StepRecords>> RecordsPerStep(const BootReport& report, int fd,
                                                const std::string& path,
                                                const PartitionTable& original,
                                                std::vector<RecordStep>& steps,
                                                std::vector<ByteEdit>* unassigned);

}  // namespace partalign
