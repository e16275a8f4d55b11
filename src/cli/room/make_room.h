// SPDX-License-Identifier: GPL-3.0-or-later
// Making room (issue 38, docs/resize.md): how small each partition's contents can be made, read
// from the disk (ReadShrinkLimit), and `plan --make-room`, which takes the least invasive shrink
// the room search finds (way_through.h). Shared by plan, report's advice and apply, which reads
// the same limits to check a plan's shrink (plan_check.h).
#pragma once

#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/content/content_proof.h"
#include "partalign/layout/partition_table.h"
#include "partalign/layout/plan.h"
#include "partalign/resize/shrink_way.h"
#include "partalign/topology/alignment.h"
#include "partalign/topology/device.h"
#include "partalign/util/result.h"

namespace partalign {

/// Where a FAT volume's limit is read (libparted works on a scratch copy of its used bytes):
/// on disk storage, not tmpfs (docs/resize.md).
inline constexpr const char* kShrinkScratchDir = "/var/tmp";

/// What ReadShrinkLimit says of each partition of `table` (read with contents) but the extended
/// one, in table order. Writes nothing to `path`. An error when the disk cannot be read.
Result<std::vector<ShrinkOffer>> ReadShrinkOffers(
    const std::string& path, const PartitionTable& table,
    const std::string& scratch_dir = kShrinkScratchDir);

/// A plan made with --make-room, and what it says about the room it made.
struct MadeRoom {
  Plan plan;
  /// "partition 7 (swap, 321.58 MiB) gives 2 MiB at its end: ...": the shrink and why, or why
  /// none was made.
  std::vector<std::string> lines;
};

/// plan --make-room: the proven plan (MakeProvenPlan); when it leaves partitions impossible,
/// the room search over every partition's limit (ReadShrinkOffers, TakeRoom) and the plan
/// again with the shrinks it took, each the least invasive that aligns more, if any.
Result<MadeRoom> MakeRoomPlan(Streams io, const std::string& path, PartitionTable* table,
                              const DeviceInfo& device, const Alignment& alignment,
                              const ContentOptions& content);

}  // namespace partalign
