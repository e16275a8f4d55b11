// SPDX-License-Identifier: GPL-3.0-or-later
// What lives where `partalign move` would write: the table areas and the partitions its
// destination overlaps. A move onto the MBR, a GPT header or another partition's data destroys
// them (issue #37); `move` names what is there and refuses without --force.
#pragma once

#include <string>
#include <vector>

#include "partalign/layout/partition_table.h"
#include "partalign/move/move_plan.h"

namespace partalign {

/// One line per table area and per partition that the destination of `move` overlaps in
/// `table`: "the MBR (bytes 0-511)", "partition 2 (bytes 33554432-67108863, ext4)". The
/// partitions the source overlaps are the ones being moved: their own bytes are not listed. A DOS
/// extended partition is listed only through its EBRs (areas) and its logical partitions.
std::vector<std::string> DestinationOverlaps(const PartitionTable& table, const MoveGeometry& move);

}  // namespace partalign
