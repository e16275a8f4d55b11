// SPDX-License-Identifier: GPL-3.0-or-later
// partalign plan: the smallest change to a partition table that puts every partition's start
// on the alignment (and its end so that the next aligned start follows), without shrinking or
// overlapping any filesystem. Rules and their reasons: docs/audit-plan.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "partalign/layout/partition_table.h"
#include "partalign/layout/plan.h"
#include "partalign/topology/alignment.h"
#include "partalign/topology/device.h"
#include "partalign/util/result.h"

namespace partalign {

/// The largest sector number an MBR partition entry can address (32-bit LBA fields; libfdisk
/// caps the DOS area at UINT_MAX in get_disk_ranges()): 2 TiB with 512-byte sectors.
inline constexpr uint64_t kMbrMaxSector = 0xFFFFFFFFull;

/// Filesystem signatures whose metadata sits at the end of the partition (md RAID 0.90/1.0
/// superblocks, ZFS labels L2/L3, ...): changing such a partition's size by even one sector
/// hides that metadata, so the planner keeps their size exactly.
bool IsEndAnchored(const PartitionContents& contents);

/// How many sectors of a partition the planner must keep: the filesystem's size when it is
/// known and not larger than the partition; the whole partition when it may hold data of
/// unknown size (no signature and not proven empty) or metadata at its end; for a partition
/// proven empty (PartitionContents::MayHoldData) one grain, or its size when that is smaller.
/// Shrinking has a cost in the search, so an empty partition only gives up what aligning the
/// others needs.
uint64_t ProtectedSectors(const Partition& partition, uint64_t sector_size, uint64_t grain_sectors);

struct PlanOptions {
  /// DOS: the sectors libfdisk keeps free before every logical partition but the first, for
  /// its EBR (its first LBA: the partition starts >= previous end + 1 + this). nullopt: the
  /// table's first_usable_lba, which is what libfdisk uses on the same disk.
  std::optional<uint64_t> dos_logical_gap_sectors;
  /// Partitions whose contents the user gives up (plan --discard N): planned as empty whatever
  /// they hold; their table-only actions say Emptiness::kDiscarded.
  std::vector<uint32_t> discard;
  /// Plan partitions not proven either way (ContentProof::kUnscanned) as empty: the first pass
  /// of a proof, which finds the partitions worth reading in full (PartitionsWorthProving).
  /// Never for a plan that is shown or applied.
  bool unscanned_as_empty = false;
};

/// The partitions whose emptiness matters to `optimistic` (actions planned with
/// unscanned_as_empty): not proven either way, not discarded, and moved or shrunk by it. Reading
/// them in full (kZeros or kData) and planning again gives the plan to show.
std::vector<uint32_t> PartitionsWorthProving(const PartitionTable& table,
                                             const std::vector<PlanAction>& optimistic,
                                             const PlanOptions& options);

/// The actions for every partition of `table` (table order, the DOS extended partition
/// included), aligned to `alignment`. Fails on tables it cannot reason about: overlapping
/// partitions, an alignment that is not a whole number of sectors, labels other than GPT and
/// DOS.
Result<std::vector<PlanAction>> PlanPartitions(const PartitionTable& table,
                                               const Alignment& alignment,
                                               const PlanOptions& options = {});

/// The actions that take the partitions of `table` to `extents` (the new start and end sector
/// of each partition, in table order), described as PlanPartitions describes its own: a start
/// that moves under data is kMoveData (the partition moved whole: a partition counts as empty
/// only when proven, or discarded in `options`), one proven empty kTableOnly with its proof,
/// the bytes to move and the reason in plan's words. For layouts a person chose (plan
/// --interactive), so that a layout equal to plan's gets plan's very actions (an impossible
/// one aside: a misaligned start left where it is is kNone, or kTableOnly when its end
/// changes). Fails when the extents overlap, leave the usable area, or move a start off the
/// alignment.
Result<std::vector<PlanAction>> DescribeExtents(
    const PartitionTable& table, const Alignment& alignment, const PlanOptions& options,
    const std::vector<std::pair<uint64_t, uint64_t>>& extents);

/// A plan without actions for `current` on `device`: what every plan is bound to (disk
/// identity, topology, label, table fingerprint) and the alignment.
Plan EmptyPlan(const PartitionTable& current, const DeviceInfo& device, const Alignment& alignment);

/// Whether every partition of `discard` (plan --discard N) may be given up: a partition of
/// `table`, not the extended one (its logical partitions are given up one by one).
Status CheckDiscard(const PartitionTable& table, const std::vector<uint32_t>& discard);

/// The whole plan: PlanPartitions bound to the disk (identity, topology, table fingerprint).
Result<Plan> MakePlan(const PartitionTable& table, const DeviceInfo& device,
                      const Alignment& alignment, const PlanOptions& options = {});

/// Whether `table`'s partitions lie where a table may have them: each inside the usable area
/// (DOS: sectors 1 to 2^32-1 and the disk's end), primary and extended partitions disjoint,
/// logical ones disjoint and inside the extended partition after its first sector. The planner
/// starts from it; apply checks the table a plan file asks for with it.
Status CheckTableLayout(const PartitionTable& table);

/// The table a plan produces: every partition moved to its new extent (nothing else changes).
/// Partitions without an action keep their place.
PartitionTable ApplyPlanToTable(const PartitionTable& table,
                                const std::vector<PlanAction>& actions);

/// "4 partitions: 1 unchanged, 1 table-only, 2 move data (1.5 GiB), 0 impossible".
std::string PlanSummary(const Plan& plan);

}  // namespace partalign
