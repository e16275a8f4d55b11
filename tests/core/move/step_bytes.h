// SPDX-License-Identifier: GPL-3.0-or-later
// The bytes a step of a mover segment reads and writes, for the brute-force checks of the
// geometry (move_plan_test.cc, move_way_test.cc).
#pragma once

#include <cstdint>

#include "partalign/move/move_plan.h"

namespace partalign::test {

struct Interval {
  uint64_t begin, end;
};

inline Interval SourceOf(const MoveGeometry& m, const Segment& s, uint64_t step) {
  const ChunkExtent e = ChunkExtentOf(m, ChunkAt(s, step));
  return {s.source_base + e.position_bytes, s.source_base + e.position_bytes + e.length_bytes};
}

inline Interval DestOf(const MoveGeometry& m, const Segment& s, uint64_t step) {
  const ChunkExtent e = ChunkExtentOf(m, ChunkAt(s, step));
  return {s.dest_base + e.position_bytes, s.dest_base + e.position_bytes + e.length_bytes};
}

}  // namespace partalign::test
