// SPDX-License-Identifier: GPL-3.0-or-later
// The layout the interactive planner (`plan --interactive`) edits, and every rule of an edit:
// new partitions go into free space, every start and size snaps to partalign's grain,
// partitions never overlap and never shrink below the filesystem they hold, an existing
// partition keeps its data (moving its start is a journaled data move, counted in bytes). The
// layout becomes a plan `apply` executes: a fresh table on a disk whose partitions hold no
// data, or new places for the existing partitions. Pure: positions in bytes, no devices.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partalign/layout/partition_table.h"
#include "partalign/layout/plan.h"
#include "partalign/layout/planner.h"
#include "partalign/tools/layout_prediction.h"
#include "partalign/topology/alignment.h"
#include "partalign/topology/device.h"
#include "partalign/util/result.h"

namespace partalign {

/// What the planner starts from: the probed disk (its topology with the command line's
/// --assume) and the table on it now (label kNone when it has none).
struct PlannerDisk {
  DeviceInfo device;
  PartitionTable table;
  /// Partitions the running system uses: `A` keeps them where they are, as plan does
  /// (PlanOptions::in_use).
  std::vector<uint32_t> in_use;
  /// How small each partition's contents can be made (ReadShrinkOffers, read when plan cannot
  /// align every partition): what `M` may shrink (way_through.h). Empty: only --discard ways.
  std::vector<ShrinkOffer> shrink_offers;
  /// Why the limits could not be read, when they could not; `M` says it.
  std::string shrink_offers_error;
};

struct PlannedPartition {
  uint32_t number = 0;
  /// The number of the partition of the disk's table this is; nullopt for a new one.
  std::optional<uint32_t> existing;
  PartitionKind kind = PartitionKind::kPrimary;
  uint64_t start_bytes = 0;
  uint64_t size_bytes = 0;
  std::string type;  ///< GPT type GUID or DOS "0x83"
  std::string name;
  std::string attributes;
  bool bootable = false;
  uint64_t end_bytes() const { return start_bytes + size_bytes; }  ///< exclusive
  bool operator==(const PlannedPartition&) const = default;
};

struct PlannerLayout {
  LabelType label = LabelType::kGpt;
  /// In disk order (a DOS extended partition before its logical ones).
  std::vector<PlannedPartition> partitions;
  /// Partitions of the disk's table whose contents are given up (`d` on a partition that may
  /// hold data, or plan --interactive --discard N): planned as `plan --discard N` plans them,
  /// kept in the table as empty partitions. In number order.
  std::vector<uint32_t> discarded;
  /// `M` (make room, as plan --make-room): the partition whose contents its own tool shrinks at
  /// its end before any move; the layout is planned as the table is after it. The plan `w`
  /// applies says it (the action's "shrink"), and apply runs it with --make-room.
  std::vector<PlannedShrink> shrinks;
  bool operator==(const PlannerLayout&) const = default;
};

/// A line of the partition list: a partition, or free space a new partition could use.
struct PlannerRow {
  bool free = false;
  size_t index = 0;  ///< into layout().partitions, for a partition
  uint64_t start_bytes = 0;
  uint64_t end_bytes = 0;  ///< exclusive; for free space the aligned usable part
  bool inside_extended = false;
};

/// Why `n` does nothing in the free space of a DOS extended partition.
inline constexpr const char* kInsideExtendedText =
    "this free space lies inside the extended partition, and partalign does not plan new "
    "logical partitions: n makes a partition in free space outside it";

/// What happens to a partition when the layout is applied.
struct PartitionChange {
  enum class Kind { kNew, kUnchanged, kTableOnly, kMoveData, kImpossible } kind = Kind::kNew;
  uint64_t bytes_to_move = 0;
  std::string text;  ///< "new", "unchanged", "table only", "move 256 MiB", "impossible"
  /// For a partition of the disk's table: why, in `partalign plan`'s words (its action's
  /// reason); empty for a new one.
  std::string reason;
};

class PlannerModel {
 public:
  /// A model of `disk`: its partitions as they are, or an empty `label` table when it has none.
  /// `discard`: partitions whose contents are given up from the start (plan --interactive
  /// --discard N); an error names one that is not a partition of the table, or the extended one.
  static Result<PlannerModel> Make(PlannerDisk disk, LabelType label_when_empty,
                                   const std::vector<uint32_t>& discard = {});

  const PlannerDisk& disk() const { return disk_; }
  const PlannerLayout& layout() const { return layout_; }
  void set_layout(PlannerLayout layout);
  /// partalign's alignment on the disk's topology: every edit snaps to it.
  const Alignment& alignment() const { return alignment_; }
  uint64_t sector_size() const { return disk_.device.topology.logical_sector_size; }
  uint64_t disk_bytes() const { return disk_.device.topology.size_bytes; }
  /// The usable area of the layout's label, in bytes (GPT: after the primary and before the
  /// backup header and entries; DOS: after the MBR, at most 2^32 sectors).
  uint64_t usable_start_bytes() const;
  uint64_t usable_end_bytes() const;  ///< exclusive
  /// The table has partitions (not a fresh disk).
  bool editing_existing() const { return !disk_.table.partitions.empty(); }

  /// Partitions and free space (grain-aligned, at least one grain) in disk order.
  std::vector<PlannerRow> Rows() const;

  /// `n`: a partition in the free space of `row` (a free row), `size_text` as typed ("" for all
  /// of it, "512M", "20G", "25%" of the free space), `type_text` ("" for linux). The start is
  /// the first aligned byte of the free space; the size is rounded up to whole grains, or down
  /// when that would not fit. Errors say why in one line.
  Status Add(const PlannerRow& row, std::string_view size_text, std::string_view type_text);
  /// `d`: deletes the partition; on a table whose partitions may hold data (a fresh table would
  /// orphan them), a partition of the disk's table is not deleted but its contents are given
  /// up (as `plan --discard N`): it stays, empty, and A may use its space.
  Status Delete(const PlannerRow& row);
  /// The options PlanPartitions plans this layout with (its discarded partitions).
  PlanOptions Options() const;
  /// `r`: a new size ("" keeps it, rounded to whole grains); a partition whose start is off the
  /// grain moves to the nearest aligned start the free space around it allows.
  Status Resize(const PlannerRow& row, std::string_view size_text);
  /// `m`: moves the partition, its size kept (its end grown to the next boundary when the
  /// space after it allows, as plan does), to `start_text` ("50M", "102400" sectors, as
  /// sfdisk reads a start; rounded up to the grain) or, for "", to the aligned start nearest
  /// to where it is that leaves room for all of it. Refused, saying why and what would make
  /// room, when it does not fit there.
  Status Move(const PlannerRow& row, std::string_view start_text);
  /// `A`: every partition of the disk where `partalign plan` puts it (PlanPartitions with the
  /// same proofs of emptiness and the layout's discarded partitions): the plan's own answer,
  /// including the partitions it cannot align. Partitions added or deleted in the planner are
  /// undone by it; discarded ones stay discarded.
  Status AlignAll();
  /// PlanPartitions' actions for the disk's table with Options(), or why it has none (a fresh
  /// disk: empty).
  const Result<std::vector<PlanAction>>& plan_actions() const { return plan_actions_; }
  /// What would align the partitions plan_actions() cannot (way_through.h), as lines for `x`.
  std::vector<std::string> WayThroughLines() const;
  /// What `M` offers: every shrink plan --make-room would take (the same room search, TakeRoom
  /// over shrink_offers) and the lines that say which partition gives how many MiB, with what
  /// tool and why (MakeRoomLines, then how each tool works); or,
  /// without a shrink, an error that says why (nothing is impossible, room is made already,
  /// each partition's reason it cannot give room).
  struct RoomOffer {
    /// Every shrink plan --make-room takes (TakeRoom), in the order taken.
    std::vector<PlannedShrink> shrinks;
    std::vector<std::string> lines;
  };
  Result<RoomOffer> OfferRoom() const;
  /// `M` confirmed: the layout gets `offer`'s shrinks and every partition goes where plan
  /// --make-room puts it (AlignAll on the shrunk table).
  Status MakeRoom(const RoomOffer& offer);
  /// `t`: "" for linux, an sfdisk shortcut, a GUID or a DOS byte.
  Status SetType(const PlannerRow& row, std::string_view type_text);
  /// Whether `t` may change the type of `row` at all (not free space, not the extended
  /// partition, not a partition that may hold data), and why not.
  Status CanSetType(const PlannerRow& row) const;

  /// The partition's change when applied: for a partition of the disk's table, the action plan
  /// would describe for its new place (DescribeExtents), so that the classes and reasons are
  /// plan's own.
  PartitionChange ChangeOf(const PlannedPartition& p) const;
  /// The layout's actions on the disk's table, in table order, when the layout only moves and
  /// resizes the disk's partitions (none added, deleted or retyped); an error otherwise.
  Result<std::vector<PlanAction>> Actions() const;
  /// Each partition of the disk's table at its place in the layout (start and end sector), in
  /// table order: the target layout of the plan `MakePlan` writes.
  std::vector<std::pair<uint64_t, uint64_t>> Extents() const;
  /// Partitions of the disk's table that are no longer in the layout.
  std::vector<const Partition*> Deleted() const;
  /// "2 partitions new; 1 moves 512 MiB of data" etc.
  std::string ChangeSummary() const;

  /// The plan `apply` executes for this layout, or why there is none: a fresh table when the
  /// disk's partitions hold no data (all of them may go), else new places and sizes for every
  /// existing partition (none added or deleted).
  Result<Plan> MakePlan() const;
  /// MakePlan, or, when the layout cannot be applied because partitions that may hold data
  /// would be replaced, the fresh table it describes anyway: for review (an .sfdisk export),
  /// never for apply.
  Result<Plan> ReviewPlan() const;

  /// The layout as the tools are asked for it (explain --layout): the sizes in disk order, the
  /// last one "the rest" when it reaches the last aligned boundary.
  LayoutRequest Request() const;

  /// Each tool's verdict (ToolViews() with a verdict) on partition `index` of the layout on
  /// `topology` (the disk's, or an assumed one: the byte positions stay, the sectors follow).
  std::vector<ToolVerdict> Verdicts(size_t index, const Topology& topology) const;

 private:
  PlannerModel(PlannerDisk disk, PlannerLayout layout, Alignment alignment)
      : disk_(std::move(disk)), layout_(std::move(layout)), alignment_(alignment) {}
  /// The layout as a fresh table; with `check_data`, refused when a partition of the disk may
  /// hold data.
  Result<Plan> FreshPlan(bool check_data) const;
  /// The layout adds, deletes or retypes partitions of the disk's table (it is no longer
  /// those partitions, moved or resized).
  bool Reshaped() const;
  const Partition* Existing(const PlannedPartition& p) const;
  /// The free bytes around partition `index` (between its neighbours at its level).
  std::pair<uint64_t, uint64_t> Room(size_t index) const;
  Result<uint64_t> SnapSize(std::string_view text, uint64_t current, uint64_t start, uint64_t limit,
                            uint64_t at_least) const;
  uint32_t FreeNumber(PartitionKind kind) const;
  /// plan_actions_ for the layout's discarded partitions.
  void Replan();
  /// Whether a fresh table may replace the disk's: none of its partitions may hold data.
  bool AllEmpty() const;

  PlannerDisk disk_;
  PlannerLayout layout_;
  Alignment alignment_;
  Result<std::vector<PlanAction>> plan_actions_ = std::vector<PlanAction>{};
};

/// A size as the planner's prompts take it: "" (nullopt: the default), a size as sfdisk reads
/// it ("512M", "1.5G", a bare number of `sector_size`-byte sectors: partalign/util/sfdisk_size.h),
/// or "25%" of `whole` (rounded down to bytes).
Result<std::optional<uint64_t>> ParsePromptSize(std::string_view text, uint64_t whole,
                                                uint64_t sector_size);

}  // namespace partalign
