// SPDX-License-Identifier: GPL-3.0-or-later
// A topology in one line for table-driven tests: lbs/pbs/min_io/opt_io/align_off, the way
// alignment-heuristics.md writes them. Header-only and pure (tests/core and tests/cli).
#pragma once

#include <cstdint>

#include "partalign/topology/topology.h"

namespace partalign::test {

inline Topology MakeTopology(uint64_t lbs, uint64_t pbs, uint64_t min_io, uint64_t opt_io,
                             uint64_t offset, TopologyOrigin origin = TopologyOrigin::kAssumed,
                             uint64_t size_bytes = 8ull << 30) {
  Topology t;
  t.logical_sector_size = lbs;
  t.physical_sector_size = pbs;
  t.minimum_io_size = min_io;
  t.optimal_io_size = opt_io;
  t.alignment_offset = offset;
  t.size_bytes = size_bytes;
  t.origin = origin;
  return t;
}

}  // namespace partalign::test
