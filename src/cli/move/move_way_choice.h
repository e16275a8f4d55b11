// SPDX-License-Identifier: GPL-3.0-or-later
// The way a move takes, as `move` and `apply` (and the boot-time runner through apply's steps)
// choose and say it: the costs measured on the disk and beside the journal now, the cheaper
// safe way chosen, one line saying why (docs/mover.md §5a).
#pragma once

#include <optional>
#include <string>

#include "cli/commands.h"
#include "partalign/move/move_way.h"
#include "partalign/util/result.h"

namespace partalign {

/// "auto" (nullopt), "copies", "ordered": the values of --way.
Result<std::optional<MoveWay>> ParseMoveWay(const std::string& value);

struct ChosenWay {
  MoveGeometry move;  ///< the geometry to move with: the same bytes copied either way
  std::string line;   ///< "way: saved copies (...)": DescribeWay
};

/// Measures the costs (MeasureDeviceCosts) unless `forced` or no flush-ordered way exists, chooses
/// the way of `move` (its copy set chosen), and says it; prints a warning to io.err when the costs
/// could not be measured (then saved copies).
ChosenWay ChooseMoveWayNow(Streams io, const std::string& journal_path,
                           uint64_t logical_sector_size, const MoveGeometry& move,
                           std::optional<MoveWay> forced);

}  // namespace partalign
