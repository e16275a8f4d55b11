// SPDX-License-Identifier: GPL-3.0-or-later
// What would make the partitions a plan cannot align alignable (issue 38: "impossible" always
// comes with the way through). The sources of room, least invasive first:
//  1. free space anywhere on the disk: the planner itself moves partitions down into gaps as
//     well as up (planner.h), so when it calls a partition impossible, no free space is left;
//  2. a partition whose contents can be given up and made again: a swap area (mkswap makes it
//     anew after apply), given up with `plan --discard N` (RoomSource::kDiscard);
//  3. shrinking one partition at its end by the fewest whole MiB that align the most (plan
//     --make-room): a swap area re-created smaller (less invasive than giving it up), a
//     filesystem shrunk by its own tool (more: ext, then NTFS, then FAT, by how much each tool
//     is trusted to move data); contents that cannot shrink are not chosen, with the reason.
// FindWaysThrough tries each source on the planner and keeps those that align more; WayText is
// the one place that words them, for plan, the planner, apply and the report. Pure.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "partalign/layout/partition_table.h"
#include "partalign/layout/plan.h"
#include "partalign/layout/planner.h"
#include "partalign/resize/shrink_way.h"
#include "partalign/topology/alignment.h"

namespace partalign {

/// Least invasive first.
enum class RoomSource {
  kShrinkSwap,        ///< a swap area re-created smaller, same UUID and label (--make-room)
  kDiscard,           ///< the partition's contents are given up (plan --discard N)
  kShrinkFilesystem,  ///< a filesystem shrunk by its own tool (plan --make-room)
};

/// One way through: what gives the room, and what it aligns.
struct WayThrough {
  RoomSource source = RoomSource::kDiscard;
  uint32_t partition = 0;        ///< the partition that gives the room
  std::string contents;          ///< what it holds ("swap")
  uint64_t partition_bytes = 0;  ///< its size
  /// kShrink*: how much smaller it gets (whole MiB) and the tool that shrinks it.
  uint64_t shrink_bytes = 0;
  std::optional<ShrinkTool> tool;
  /// The partitions the plan cannot align now that this way aligns.
  std::vector<uint32_t> aligned;
  /// Partitions that stay impossible even so.
  std::vector<uint32_t> still_impossible;
};

struct WaysThrough {
  /// The partitions the plan cannot align (empty: nothing to say).
  std::vector<uint32_t> impossible;
  /// How much more room at the end of the usable area would align every one of them: the
  /// shortfall, in bytes; 0 when no amount of room would (a pinned partition, the MBR's 2 TiB
  /// limit) or nothing is impossible.
  uint64_t missing_bytes = 0;
  uint64_t missing_sectors = 0;
  /// The way that aligns the most first; among those the least invasive (RoomSource, then
  /// ext before NTFS before FAT, then the fewest MiB, then the smallest partition).
  std::vector<WayThrough> ways;
  /// Partitions that were offered no shrink (ShrinkOffer without a tool): why, for the person.
  struct NotOffered {
    uint32_t partition = 0;
    std::string contents;
    std::string reason;
  };
  std::vector<NotOffered> not_offered;
};

/// The ways through for the plan `actions` that PlanPartitions made for `table` with
/// `options`: each source of room tried on the planner. `offers` (ReadShrinkLimit of each
/// partition) are the shrinks it may try: each partition with a tool is shrunk at its end by
/// 1, 2, ... whole MiB, never below its min_bytes, and the fewest MiB that align the most are
/// its way; without offers only --discard ways are found. A partition in use
/// (options.in_use) that stays impossible is none of them: room does not move it, the next
/// boot does (its reason says so).
WaysThrough FindWaysThrough(const PartitionTable& table, const Alignment& alignment,
                            const PlanOptions& options, const std::vector<PlanAction>& actions,
                            const std::vector<ShrinkOffer>& offers = {});

/// The first way of `ways` that shrinks (plan --make-room takes it), or nullptr.
const WayThrough* BestShrink(const WaysThrough& ways);

/// The shrink of `way` (a kShrink* way of a partition of `table`) as PlanOptions take it.
PlannedShrink ShrinkOf(const WayThrough& way, const PartitionTable& table);

/// plan --make-room's search (issue 38): the shrink BestShrink takes, then, on the plan with it,
/// the next one BestShrink takes of another partition, and so on until every partition aligns
/// or no shrink aligns more: one plan that sees the room its own shrinks make, so that a plan
/// made after it is applied finds nothing more to do.
struct RoomTaken {
  /// The shrinks taken, in the order taken (each way's `aligned` counts from the plan with the
  /// ones before it); empty when none aligns more.
  std::vector<WayThrough> shrinks;
  /// The search on the plan with every shrink taken (the first search when none was).
  WaysThrough last;
};
RoomTaken TakeRoom(const PartitionTable& table, const Alignment& alignment,
                   const PlanOptions& options, const std::vector<PlanAction>& actions,
                   const std::vector<ShrinkOffer>& offers);

/// The shrinks of `taken` as PlanOptions take them, in order.
std::vector<PlannedShrink> ShrinksOf(const RoomTaken& taken, const PartitionTable& table);

/// What TakeRoom took, as MakeRoomLines(ways, offers) says one shrink: a line per shrink, then
/// the partitions that stay impossible; or, when none was taken, why.
std::vector<std::string> MakeRoomLines(const RoomTaken& taken,
                                       const std::vector<ShrinkOffer>& offers);

/// What taking the room search's way says (plan --make-room, the planner's M): "make room:
/// partition 7 (swap, 321.58 MiB) gives 2 MiB at its end, shrunk by mkswap before any move (its
/// contents use 0 B, it keeps at least 1 MiB): the least invasive way that aligns partitions
/// 1, 5, 6 and 7", then the partitions that stay impossible; or, without a shrink
/// (BestShrink), that nothing is shrunk and each partition's reason it cannot give room.
/// `offers`: the limits the search had (for what the contents use and keep).
std::vector<std::string> MakeRoomLines(const WaysThrough& ways,
                                       const std::vector<ShrinkOffer>& offers);

/// How `tool` shrinks `contents` and what it checks first ("mkswap re-creates the swap area
/// with the same UUID, label and page size; refused if it holds a hibernation image").
std::string ShrinkHowText(ShrinkTool tool, const std::string& contents);

/// How a way is asked for where the text is shown.
struct WayContext {
  /// The plan command that gives up the contents of the partitions in `discard` (the ones
  /// given up already and the way's), as a person runs it ("partalign plan --discard 7 -o
  /// plan.json disk.img"); empty in the interactive planner, where the way is a key.
  std::function<std::string(const std::vector<uint32_t>& discard)> plan_command;
  /// The --discard options already given.
  std::vector<uint32_t> discard;
  /// The plan command with --make-room (and the options given); empty in the interactive
  /// planner.
  std::function<std::string()> make_room_command;
  /// Where the way is a key (the interactive planner's "M"): said instead of the command.
  std::string make_room_key;
};

/// The way through as lines, one per way and one for the missing room ("partition 7 (swap,
/// 321 MiB) can give the room: 'partalign plan --discard 7 disk.img' gives up its contents
/// (mkswap makes a new swap area there after apply); partitions 1, 5, 6 and 7 then align").
/// Empty when nothing is impossible.
std::vector<std::string> WayText(const WaysThrough& ways, const WayContext& context);

}  // namespace partalign
