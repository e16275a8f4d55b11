// SPDX-License-Identifier: GPL-3.0-or-later
// The fence of a partition whose data moves at boot (docs/at-boot.md, "The fence"): before the
// step's move, a journaled step that moves no data takes the partition's entry out of the
// table (FenceTransition; a DOS logical partition's entry is pointed at a one-sector
// placeholder instead); the move's own table write then puts it at its new place. Until
// then no system booted in between (a live USB, an older kernel's initramfs) finds the
// half-moved filesystem to mount. A fence with no move under it (a power loss between the two
// steps, or a move rolled back) is lifted by LiftFence, which the boot runner calls before it
// looks at the staged plan, and apply after a rolled-back move.
#pragma once

#include <string>
#include <vector>

#include "cli/commands.h"
#include "io/device/device_probe.h"
#include "io/device/target.h"
#include "io/table/fdisk_transition.h"
#include "partalign/move/move_plan.h"
#include "partalign/table/table_transition.h"

namespace partalign {

struct PreparedFence {
  uint32_t partition = 0;
  /// The step's old table -> the same table without the partition.
  TableTransition transition;
  /// The fenced table as libfdisk reads it (the fence backup's applied fingerprint).
  std::string fenced_fingerprint;
};

/// The fence of a step moving `partition`, whose table change libfdisk computed as `step`:
/// FenceTransition (for a DOS logical partition with its placeholder: the first sector after
/// its EBR, inside the extended partition, that no partition of the step's tables and no table
/// area holds), checked on a scratch copy of the disk's size, where libfdisk must read every
/// partition of the step's old table but `partition` (a logical one: at its placeholder), each
/// as it was. The error says why the partition cannot be fenced (the extended partition, a
/// logical one with no free sector after its EBR, ...).
Result<PreparedFence> PrepareFence(const ComputedTransition& step, uint32_t partition);

/// The step's table updates once the fence is on the disk: the same ranges, with the fenced
/// bytes as the old bytes of those the fence changed (the move's rollback writes the fence
/// back); a sector the fence changed that the step leaves as it is (the old place of a logical
/// partition's EBR that moves) gets its bytes back last, after the step's table.
std::vector<TableUpdate> UpdatesAfterFence(std::vector<TableUpdate> updates,
                                           const PreparedFence& fence);

/// Writes the fence: its backup (command "fence") into `backup_dir`, then the journaled step
/// that moves no data (journal `journal`), and reads the table back (the fenced fingerprint).
/// Prints what it does. kOk when the fence is on the disk.
ExitCode WriteFence(Streams io, const Target& disk, const DeviceInfo& device,
                    const ComputedTransition& step, const PreparedFence& fence,
                    const std::string& backup_dir, const std::string& journal, bool progress);

/// Lifts a fence with no move under it from `path`: when the table on the disk is the fenced
/// table of a "fence" backup of this disk in `backup_dir` and no move of the disk is
/// unfinished, the backup's bytes are written back through a journaled step that moves no
/// data (its journal in `journal_dir`) and the kernel is told. `held`: the disk as the caller
/// holds it for writing, or null (then it is acquired here, only when there is a fence to
/// lift). Prints what it does; kOk also when there is none.
ExitCode LiftFence(Streams io, const std::string& path, Target* held, const std::string& backup_dir,
                   const std::string& journal_dir, bool progress);

}  // namespace partalign
