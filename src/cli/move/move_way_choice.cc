// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/move/move_way_choice.h"

#include <ostream>

#include <fmt/format.h>

#include "io/move/device_costs.h"

namespace partalign {

Result<std::optional<MoveWay>> ParseMoveWay(const std::string& value) {
  if (value == "auto") return std::optional<MoveWay>();
  if (value == "copies") return std::optional<MoveWay>(MoveWay::kSavedCopies);
  if (value == "ordered") return std::optional<MoveWay>(MoveWay::kFlushOrdered);
  return MakeError(fmt::format("--way: '{}' is not auto, copies or ordered", value));
}

ChosenWay ChooseMoveWayNow(Streams io, const std::string& journal_path,
                           uint64_t logical_sector_size, const MoveGeometry& move,
                           std::optional<MoveWay> forced) {
  if (move.length_bytes == 0) return {move, "way: no data moves"};
  const WayChoice considered = ConsiderMoveWays(move, logical_sector_size, forced);
  std::optional<DeviceCosts> costs;
  if (!forced && considered.ordered && considered.copies_bytes > 0) {
    Result<DeviceCosts> measured = MeasureDeviceCosts(
        journal_path, considered.ordered->chunk_bytes,
        [&](const DeviceCosts& so_far) { return WayIsClear(considered, so_far); },
        [&](const DeviceCosts& measured_once) {
          return DecideMoveWay(considered, measured_once).way == MoveWay::kFlushOrdered;
        });
    if (measured) {
      costs = *measured;
    } else {
      PrintWarning(io.err, fmt::format("the flush and write costs were not measured ({}): the "
                                       "move writes saved copies",
                                       measured.error().message));
    }
  }
  const WayChoice choice = DecideMoveWay(considered, costs);
  return {choice.move, DescribeWay(choice, costs)};
}

}  // namespace partalign
