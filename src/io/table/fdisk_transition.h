// SPDX-License-Identifier: GPL-3.0-or-later
// Computing a TableTransition through libfdisk without touching the disk: the disk's table as
// an sfdisk dump, with the planned partitions moved, is applied by libfdisk (exactly as sfdisk
// would apply it) to a scratch copy - a sparse memfd of the disk's size and sector size that
// holds a copy of the table's sectors. The new table's sectors are then read back from the
// scratch copy. So the new table is libfdisk's own (header CRCs, backup GPT, EBR chain, boot
// code kept), and every byte the write will change is known - and backed up - before the first
// write. docs/apply.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/table/fdisk_write.h"
#include "io/util/unique_fd.h"
#include "partalign/layout/partition_table.h"
#include "partalign/table/table_transition.h"
#include "partalign/table/table_translation.h"
#include "partalign/util/result.h"

namespace partalign {

struct ComputedTransition {
  TableTransition transition;
  PartitionTable old_table;           ///< as read from the disk, with each partition's contents
  PartitionTable new_table;           ///< as libfdisk wrote it on the scratch copy
  std::string old_script;             ///< sfdisk dump of the disk's table
  std::string new_script;             ///< the script libfdisk applied
  std::vector<std::string> messages;  ///< what libfdisk said while applying it
};

/// A sparse in-memory file of `size_bytes` standing in for a disk (memfd, tmpfs-backed: a disk
/// of many TiB costs only the pages written; nothing is left behind on a crash). libfdisk opens
/// it as /proc/self/fd/N.
Result<UniqueFd> CreateScratchDisk(uint64_t size_bytes);

/// Never writes to `path`. `sector_size` is the disk's logical sector size (image files have
/// none of their own). Fails on tables other than GPT and DOS, on edits libfdisk rejects, and
/// when libfdisk wrote anything outside the table areas it reports.
Result<ComputedTransition> ComputeTableTransition(const std::string& path, uint64_t sector_size,
                                                  const std::vector<ScriptEdit>& edits);

/// The transition to a fresh table (an sfdisk script of a whole new table, as RenderSfdiskScript
/// writes a fresh-layout plan) replacing whatever `path` holds: no table, an empty one, or one
/// of another label (FreshLayoutTransition). libfdisk writes the script on a scratch copy that
/// holds only the disk's first sector (its boot code is kept, as sfdisk keeps it). The old
/// table's other areas get zeros as their new bytes, except those the new partitions cover.
/// `old_table` carries each old partition's contents. Never writes to `path`.
Result<ComputedTransition> ComputeFreshTableTransition(const std::string& path,
                                                       uint64_t sector_size,
                                                       const std::string& script);

/// A chain of transitions for a change made in steps (apply's data moves, one per step): step
/// k starts from the table step k-1 made (on its scratch copy) and applies `steps[k]`. The old
/// bytes of every range are what the disk will hold when the step runs: its bytes now, with the
/// changed ranges of the earlier steps written over them. Each step's `old_table` carries the
/// contents libblkid found in each partition on the disk. Never writes to `path`.
Result<std::vector<ComputedTransition>> ComputeTransitionChain(
    const std::string& path, uint64_t sector_size,
    const std::vector<std::vector<ScriptEdit>>& steps);

/// The rewrite of a table written for another logical sector size (partalign translate,
/// docs/migration.md): `old_table` is the table of `path` as read with its own sector size
/// (plan.from_sector_size), `plan` its translation (PlanTranslation, without refusals). The
/// table's sfdisk dump with the new starts, sizes and usable area is applied by libfdisk with
/// plan.to_sector_size-byte sectors to a scratch copy that holds only the disk's first 512
/// bytes (the boot code libfdisk keeps): the old table's sectors that the new one does not
/// overwrite are zeroed, so that no reader finds a stale copy of it. The transition is in
/// to_sector_size units. Never writes to `path`.
Result<ComputedTransition> ComputeTableTranslation(const std::string& path,
                                                   const PartitionTable& old_table,
                                                   const TableTranslation& plan);

}  // namespace partalign
