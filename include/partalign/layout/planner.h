// SPDX-License-Identifier: GPL-3.0-or-later
// partalign plan: the smallest change to a partition table that puts every partition's start
// on the alignment (and its end so that the next aligned start follows), without shrinking or
// overlapping any filesystem. Rules and their reasons: docs/audit-plan.md.
#pragma once

#include <cstdint>
#include <functional>
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

/// The sectors a partition's filesystem covers (its size rounded up to whole sectors), when the
/// size is known and not larger than the partition.
std::optional<uint64_t> FilesystemSectors(const Partition& partition, uint64_t sector_size);

/// How many sectors of a partition the planner must keep. A partition never shrinks in silence
/// (docs/audit-plan.md): one that may hold data keeps all of it, except, when it holds a
/// filesystem smaller than itself, the sectors past the filesystem that were read as zeros
/// (PartitionContents::zeros_from_bytes; with `unread_tail_as_zeros`, the first pass of a
/// proof, also those not read yet); one with metadata at its end keeps its size exactly; one
/// proven empty (PartitionContents::MayHoldData) keeps one grain, or its size when that is
/// smaller. Shrinking has a cost in the search, so an empty partition only gives up what
/// aligning the others needs.
uint64_t ProtectedSectors(const Partition& partition, uint64_t sector_size, uint64_t grain_sectors,
                          bool unread_tail_as_zeros = false);

struct PlanOptions {
  /// DOS: the sectors libfdisk keeps free before every logical partition but the first, for
  /// its EBR (its first LBA: the partition starts >= previous end + 1 + this). nullopt: the
  /// table's first_usable_lba, which is what libfdisk uses on the same disk.
  std::optional<uint64_t> dos_logical_gap_sectors;
  /// Partitions whose contents the user gives up (plan --discard N): planned as empty whatever
  /// they hold; their table-only actions say Emptiness::kDiscarded.
  std::vector<uint32_t> discard;
  /// Plan partitions not proven either way (ContentProof::kUnscanned) as empty, and the tails
  /// past filesystems not read yet as zeros: the first pass of a proof, which finds the
  /// partitions worth reading in full (PartitionsWorthProving) and the tails worth reading
  /// (TailsToProve). Never for a plan that is shown or applied.
  bool unscanned_as_empty = false;
  /// Partitions the running system uses (mounted, active swap, held by device-mapper, md or a
  /// loop device): each keeps its place and size, as apply may write around a partition in use
  /// but never moves or resizes one (docs/audit-plan.md, "In use"). A misaligned one is
  /// impossible while it is in use, and says so.
  std::vector<uint32_t> in_use;
  /// plan --make-room: partitions whose contents their own tool shrinks first, at their end
  /// (docs/resize.md). The planner plans the table as it is after the shrinks; each shrunk
  /// partition's action keeps its old place (old_*), says `shrink`, and is never "none".
  std::vector<PlannedShrink> shrinks;
};

/// `table` as it is after the shrinks of `options` (each shrunk partition ends size_sectors
/// after its start, its filesystem no larger than the tool makes it, nothing known of a tail
/// it no longer has). An error for a shrink of a partition the table does not have, of the
/// extended partition, or to a size not smaller than the partition's.
Result<PartitionTable> ShrunkTable(const PartitionTable& table, const PlanOptions& options);

/// The end of a partition that a plan gives up: the bytes [from_bytes, size) from its old
/// start (its new size is from_bytes).
struct TailProof {
  uint32_t partition = 0;
  uint64_t from_bytes = 0;
  bool operator==(const TailProof&) const = default;
};

/// The tails `actions` give up that must be read before a plan may rely on them: of partitions
/// that may hold data (not discarded in `options`), whose filesystem is smaller than they are
/// (ProtectedSectors: only those may give up anything), that an action makes smaller without
/// cutting into the filesystem, and that are not read that far yet (zeros_from_bytes) nor found
/// to hold data past it (tail_data_bytes). Reading each (ProveTailsZero in the CLI) and
/// planning again gives the plan to show; apply reads those of the plan it is given.
std::vector<TailProof> TailsToProve(const PartitionTable& table,
                                    const std::vector<PlanAction>& actions,
                                    const PlanOptions& options);

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
/// changes). Fails when the extents overlap, leave the usable area, move a start off the
/// alignment, move a BIOS boot partition, or leave a partition fewer sectors than it keeps
/// (ProtectedSectors: a partition never shrinks in silence).
Result<std::vector<PlanAction>> DescribeExtents(
    const PartitionTable& table, const Alignment& alignment, const PlanOptions& options,
    const std::vector<std::pair<uint64_t, uint64_t>>& extents);

/// The actions of a plan file that takes `table` to `extents`: DescribeExtents in plan's
/// vocabulary, where a start left misaligned is kImpossible (plan says so of every start it
/// leaves off the alignment, a pinned BIOS boot partition aside), so that a layout equal to
/// plan's gets plan's very actions, reasons aside. The interactive planner writes its plans
/// with it, and apply recomputes every plan file's actions with it (docs/apply.md, "A plan is
/// a claim").
Result<std::vector<PlanAction>> PlanFileActions(
    const PartitionTable& table, const Alignment& alignment, const PlanOptions& options,
    const std::vector<std::pair<uint64_t, uint64_t>>& extents);

/// Gives each action of `actions` the reason of plan's own action for the same partition
/// (`own`, from PlanPartitions) where the two agree on everything else: plan's says more (why a
/// start cannot be aligned, what pushed a partition). The planner and apply show those.
void AdoptPlansReasons(const std::vector<PlanAction>& own, std::vector<PlanAction>* actions);

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

/// Whether `actions` (a plan of `table` made with whatever its partitions were known to hold)
/// are the plan of `table` whatever they hold: every partition but a DOS extended one starts
/// and ends on `alignment` (its end + 1 on it) and every action leaves its partition where it
/// is. Such a table costs nothing as it is, and every change costs something (the search's
/// cost), while a partition's contents only decide which changes are allowed and what a move
/// costs: no contents can give another plan, so plan need not read them (docs/audit-plan.md,
/// "Empty is proven"). False whenever anything is off the alignment or the plan changes it.
bool PlanIgnoresContents(const PartitionTable& table, const Alignment& alignment,
                         const std::vector<PlanAction>& actions);

/// How a plan's proofs are made: reading the disk (the CLI, src/cli/content/content_proof.h) or
/// a model of it (tests). Each records what it finds in the table's partitions.
struct PlanProofs {
  /// Reads in full each listed partition not proven either way (ContentProof::kUnscanned):
  /// kZeros, or kData with the first byte that is not zero.
  std::function<Status(PartitionTable*, const std::vector<uint32_t>&)> partitions;
  /// Reads each tail: PartitionContents::zeros_from_bytes, or tail_data_bytes.
  std::function<Status(PartitionTable*, const std::vector<TailProof>&)> tails;
};

/// The plan of `*table` with every emptiness and every tail it relies on proven: a first plan
/// with the unscanned partitions planned as empty and the unread tails as zeros
/// (unscanned_as_empty) shows which of them matter (PartitionsWorthProving, TailsToProve);
/// `proofs` reads those, and the plan is made again, round after round, until nothing more is
/// worth reading (each round proves something new, so this ends); then the plan with what was
/// found (what is still unscanned counts as data and is moved whole; a tail not proven zero is
/// kept). `*table` keeps the proofs. Without `proofs` (plan --no-scan) nothing is read.
Result<Plan> MakeProvenPlan(PartitionTable* table, const DeviceInfo& device,
                            const Alignment& alignment, const PlanOptions& options,
                            const PlanProofs& proofs);

/// "4 partitions: 1 unchanged, 1 table-only, 2 move data (1.5 GiB), 0 impossible".
std::string PlanSummary(const Plan& plan);

/// The backup GPT of `table` to move to the disk's last sector (a disk copied onto a bigger one,
/// or grown): from where its header is to the last sector, the usable area grown to end just
/// before the backup entries there. nullopt for other labels and for a backup already at the end.
std::optional<BackupGptRelocation> BackupRelocationFor(const PartitionTable& table);

/// One line for the plan's table-only step that moves the backup GPT ("relocate the backup GPT
/// from sector X to the end of the disk (sector Y) ...").
std::string DescribeRelocation(const BackupGptRelocation& move);

/// On a DOS table, the free space after the last partition once `plan` is applied, as a line of
/// plan's text ("free after the last partition: sectors X-Y (N MiB) ..."): what a disk copied
/// onto a bigger one gains, since a DOS table has no backup to move. nullopt for GPT (its usable
/// area says it) and when less than one alignment grain is left.
std::optional<std::string> DescribeFreeTail(const Plan& plan, const PartitionTable& table);

}  // namespace partalign
