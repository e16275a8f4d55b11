// SPDX-License-Identifier: GPL-3.0-or-later
// "Empty" is proven, never guessed (docs/audit-plan.md, "Empty is proven"): the partitions a
// plan would leave behind (their start moves, or they shrink) are read in full unless the
// probe proved them already (a signature, data in the head, an image's holes) or the user
// gave them up (--discard N). Shared by plan, report, the interactive planner and apply.
#pragma once

#include <string>
#include <vector>

#include "cli/cli11_fwd.h"
#include "cli/commands.h"
#include "partalign/layout/partition_table.h"
#include "partalign/layout/plan.h"
#include "partalign/layout/planner.h"
#include "partalign/topology/alignment.h"
#include "partalign/topology/device.h"
#include "partalign/util/result.h"

namespace partalign {

struct ContentOptions {
  /// --discard N (repeatable): partitions whose contents the user gives up.
  std::vector<uint32_t> discard;
  /// --no-scan: never read a partition in full; what is not proven empty is moved whole.
  bool no_scan = false;
  /// plan --make-room: the person lets a partition's contents be shrunk to make room
  /// (cli/room/make_room.h); registered by plan itself, named in the advice that repeats it.
  bool make_room = false;
  /// plan --at-next-boot: the partitions the running system uses are planned like the others,
  /// to be moved at the next boot (apply --at-next-boot, docs/at-boot.md); the plan says so
  /// (Plan::at_next_boot).
  bool at_next_boot = false;
};

/// Registers --discard and --no-scan on `command`.
void AddContentOptions(CLI::App* command, ContentOptions* options);

/// Reads in full every partition of `table` named in `numbers` whose contents are not proven
/// either way (ContentProof::kUnscanned) and records what it finds: kZeros, or kData with the
/// first byte that is not zero. Says on io.err which partition it reads and why, with progress
/// on a terminal (or always, with `progress`). An error when a read fails.
Status ProvePartitionsEmpty(Streams io, const std::string& path, PartitionTable* table,
                            const std::vector<uint32_t>& numbers, bool progress = false);

/// Reads each tail of `tails` (a partition's bytes [from_bytes, size) from its start: the end a
/// plan gives up) and records what it finds (docs/audit-plan.md, "A partition never shrinks in
/// silence"): PartitionContents::zeros_from_bytes, or tail_data_bytes with the first byte that
/// is not zero. Says on io.err what it reads and why; an error when a read fails.
Status ProveTailsZero(Streams io, const std::string& path, PartitionTable* table,
                      const std::vector<TailProof>& tails, bool progress = false);

/// For a fresh table on a disk without one: nothing that libblkid recognises may be on the
/// whole disk (a filesystem, LVM, RAID or LUKS written without a partition table), since the
/// new table's sectors would overwrite it. An error naming the first one found.
Status CheckNothingOnTheWholeDisk(const std::string& path, uint64_t sector_size);

/// The plan of `table` with every emptiness it relies on proven: a first plan with the
/// unscanned partitions planned as empty and the tails past filesystems as zeros shows which of
/// them matter (PartitionsWorthProving, TailsToProve); those are read (unless --no-scan: then
/// nothing is read, and no partition that may hold data gives up a sector), and the plan is
/// made again with what was found (what is still unscanned then counts as data, and is moved
/// whole). `table` keeps the proofs. `shrinks`: plan --make-room's (PlanOptions::shrinks).
/// `*contents_probed` false: `table` was read without its partitions' contents (TableRead); a
/// plan made without them that keeps an aligned table as it is holds whatever they hold
/// (PlanIgnoresContents) and is the plan, nothing read; otherwise they are probed
/// (ProbeTableContents, `*contents_probed` becomes true) and the plan made as above. nullptr:
/// they were probed.
Result<Plan> MakeProvenPlan(Streams io, const std::string& path, PartitionTable* table,
                            const DeviceInfo& device, const Alignment& alignment,
                            const ContentOptions& content,
                            const std::vector<PlannedShrink>& shrinks = {},
                            bool* contents_probed = nullptr);

}  // namespace partalign
