// SPDX-License-Identifier: GPL-3.0-or-later
// What binds a plan (and a table backup) to one disk: apply refuses a plan whose disk changed
// since the plan was made (a stale plan) or that was made for another disk, and after writing
// checks entry by entry that the disk holds the table the plan asked for.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "partalign/layout/partition_table.h"
#include "partalign/layout/plan.h"
#include "partalign/layout/planner.h"
#include "partalign/topology/device.h"
#include "partalign/topology/topology.h"

namespace partalign {

/// The identity of the disk `info` describes, as plans and backups record it.
DiskIdentity IdentityOf(const DeviceInfo& info);

/// Differences between a recorded identity and the disk now: size, logical sector size, serial,
/// WWN, one message each ("serial: plan 'WD-1', disk 'WD-2'"). `recorded_by` names the record
/// ("plan", "backup"). Paths are not compared: the same disk may be reached by another name.
std::vector<std::string> IdentityMismatches(const DiskIdentity& recorded, const DiskIdentity& now,
                                            std::string_view recorded_by);

/// The --assume spec that reproduces `topology`
/// ("log=512,phys=4096,min-io=4096,opt-io=33553920,align-offset=0").
std::string TopologySpecOf(const Topology& topology);

/// Everything that makes `plan` stale for the disk as it is now (`now` with apply's own
/// --assume applied, `table` read from it): identity, topology, table type, table fingerprint,
/// and each action's old start and end against the partition on disk. Empty when the plan
/// still fits. A plan made with an assumed topology needs the same values assumed again: the
/// message names the --assume spec that does it.
std::vector<std::string> PlanMismatches(const Plan& plan, const DeviceInfo& now,
                                        const PartitionTable& table);

/// Which case a stale plan (PlanMismatches not empty) is, for the person reading the refusal.
enum class StalePlanCase {
  kAnotherDisk,  ///< the serial, the WWN or the table's disk GUID / DOS identifier differ
  /// the plan's table identifier differs from the disk's while its table fingerprint agrees: the
  /// plan file was edited (the fingerprint covers the identifier; another disk has another one)
  kEdited,
  kChanged,   ///< the same identifiers: the disk (its table, size) changed since the plan
  kTopology,  ///< the same disk and table, seen with another topology (--assume)
  kUnknown,   ///< nothing tells them apart (no serial, no table identifier in the plan)
};

struct StalePlan {
  StalePlanCase kind = StalePlanCase::kUnknown;
  /// What decided it: "its table's disk GUID is X, the plan's is Y", "the same disk GUID X".
  std::string why;
};

StalePlan ClassifyStalePlan(const Plan& plan, const DeviceInfo& now, const PartitionTable& table);

/// apply's refusal of a stale plan, one line each: which case it is (ClassifyStalePlan), the
/// `mismatches` indented, "nothing was written", and the command that plans the disk at
/// `disk_path` as it is now (another disk: into a new file beside `plan_path`, which stays
/// right for its own disk; the same disk changed: over `plan_path`; with the plan's --assume).
std::vector<std::string> StalePlanRefusal(const Plan& plan, const DeviceInfo& now,
                                          const PartitionTable& table,
                                          const std::vector<std::string>& mismatches,
                                          const std::string& plan_path,
                                          const std::string& disk_path);

/// What makes `plan` (a plan file: possibly edited by hand) unfit for `table`, the disk's table
/// it is bound to, beyond staleness: the table it asks for must be a valid layout
/// (CheckTableLayout: inside the usable area, no overlaps, logical partitions inside the
/// extended one), every start a table-only or move-data action moves must lie on the plan's
/// alignment (DOS extended partitions excepted: they hold only the EBR chain), and a table-only
/// action may not move the start of a partition that may hold data (`table` read with
/// contents, its claims proven: PartitionContents::MayHoldData), nor shrink one without a
/// filesystem, unless the plan says the user discarded it: the data would stay behind. A fresh
/// layout (plan.layout) must be a valid table of its label on the disk `table` describes (GPT: room
/// for the headers and entries around its usable area), its partitions inside the usable area,
/// disjoint, each start on the plan's alignment. One message each; empty when the plan is
/// consistent.
std::vector<std::string> PlanInconsistencies(const Plan& plan, const PartitionTable& table);

/// The partitions of `table` whose bytes `plan` leaves where they are although the table
/// stops pointing at them: those of table-only actions that move the start or shrink a
/// partition without a signature (DOS extended partitions excepted), and for a fresh layout
/// every partition of `table` but the extended one. Apply proves them empty before it writes
/// (an image's holes, or every byte read as zero), unless the user discarded them
/// (Emptiness::kDiscarded). And the ends that moves and resizes take from the other partitions
/// (`tails`), which apply proves zero.
struct LeftBehind {
  std::vector<uint32_t> to_prove;   ///< claimed empty, or claiming nothing: proven by apply
  std::vector<uint32_t> discarded;  ///< given up by the user (plan --discard N)
  /// The ends that partitions which may hold data give up (a move or a resize makes them
  /// smaller): proven zero by apply, read again once it holds the disk.
  std::vector<TailProof> tails;
  std::vector<uint32_t> all() const;
};
LeftBehind PartitionsLeftBehind(const Plan& plan, const PartitionTable& table);

/// The target layout of `plan`: for each partition of `table`, in table order, the new start
/// and end sector of its action (its old ones without an action). What a plan file asks for;
/// everything else in it is a claim apply recomputes (RecomputePlan).
std::vector<std::pair<uint64_t, uint64_t>> TargetExtents(const Plan& plan,
                                                         const PartitionTable& table);

/// The partitions whose contents `plan` gives up (table-only actions that say "empty":
/// "discarded"), in action order.
std::vector<uint32_t> PlanDiscards(const Plan& plan);

/// Discarding is consent, and consent is not a field of a file: every partition `plan` gives up
/// must be given up again by the person (`consent`: apply --discard N), and only those. One
/// message each ("partition 3: ..."; "--discard 5: ..."); `apply_command` is the command that
/// says it ("partalign apply --discard 3 plan.json"), named in the message. Empty when they
/// agree.
std::vector<std::string> DiscardConsentProblems(const Plan& plan,
                                                const std::vector<uint32_t>& consent,
                                                const std::string& apply_command);

/// The shrinks `plan` asks for (plan --make-room), in action order.
std::vector<PlannedShrink> PlanShrinks(const Plan& plan);

/// What is left of `plan` once its shrinks are written (apply runs them first): each shrunk
/// partition's old place ends where the shrink left it, its action no longer says the shrink
/// and is "none" when nothing else about it changes. Apply checks and runs it on the table the
/// shrinks wrote, as it does a plan file.
Plan PlanAfterShrinks(const Plan& plan);

/// Shrinking is consent too (plan --make-room): a plan that shrinks a partition needs the
/// person's `consent` (apply --make-room), and --make-room for a plan that shrinks nothing is
/// refused. One message each, naming `apply_command`; empty when they agree.
std::vector<std::string> MakeRoomConsentProblems(const Plan& plan, bool consent,
                                                 const std::string& apply_command);

/// A plan file as apply executes it: its claims recomputed (docs/apply.md, "A plan is a
/// claim").
struct RecomputedPlan {
  /// The actions apply executes: the plan's target layout described as plan describes it.
  std::vector<PlanAction> actions;
  /// Each claim of the plan that differs from the recomputation, naming the field and both
  /// values ("actions[0].bytes_to_move: the plan says 4096, partition 1 needs 20447232 (ext4
  /// of 19.50 MiB)"), or why its target layout is not one plan would make. Empty when the plan
  /// claims exactly what apply will do.
  std::vector<std::string> refusals;
};

/// Recomputes everything apply will do for `plan` from `table` (the disk's table read with
/// contents, carrying the proofs apply made itself: partitions read in full, tails read) and
/// the plan's target layout (TargetExtents): one action per partition in table order, the
/// alignment plan derives from the topology and the plan's grain (RecommendAlignment), and
/// each action's kind, bytes to move, proof of emptiness and discard, with DescribeExtents and
/// `discard` (the partitions the person gave up again: DiscardConsentProblems). A plan with a
/// fresh layout has no actions to recompute. PlanMismatches (a stale plan) and
/// PlanInconsistencies come first. A shrink (PlanShrinks) is part of what the plan asks for,
/// like its target layout: each is checked against `offers` (what apply read of the contents:
/// ReadShrinkLimit) - the tool must be the way for the contents ("actions[i].shrink.tool"), the
/// size not below their limit ("actions[i].shrink.size_sectors") - and the actions are
/// recomputed on the table as it is after the shrinks.
RecomputedPlan RecomputePlan(const Plan& plan, const PartitionTable& table,
                             const std::vector<uint32_t>& discard,
                             const std::vector<ShrinkOffer>& offers = {});

/// Differences between the table `plan` asks for, starting from `before`, and `after`, entry
/// by entry: the same partitions (number, kind, type, name, UUID, attributes, boot flag), each
/// at its planned start and end (table-only actions) or where it was (every other kind), the
/// same table type, disk identifier and, for GPT, usable area. A fresh layout (plan.layout):
/// exactly its partitions (number, start, end, type, name, attributes, boot flag), its label
/// and, for GPT, its usable area. Empty when they agree.
std::vector<std::string> TableVersusPlan(const Plan& plan, const PartitionTable& before,
                                         const PartitionTable& after);

}  // namespace partalign
