// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/topology/topology.h"

namespace partalign {

std::string_view ToString(TopologyOrigin origin) {
  switch (origin) {
    case TopologyOrigin::kKernel:
      return "kernel";
    case TopologyOrigin::kDefault:
      return "default";
    case TopologyOrigin::kAssumed:
      return "assumed";
  }
  return "unknown";
}

Topology DefaultTopology(uint64_t logical_sector_size, uint64_t size_bytes) {
  Topology t;
  t.logical_sector_size = logical_sector_size;
  t.physical_sector_size = logical_sector_size;
  t.minimum_io_size = logical_sector_size;
  t.optimal_io_size = 0;
  t.alignment_offset = 0;
  t.size_bytes = size_bytes;
  t.origin = TopologyOrigin::kDefault;
  return t;
}

}  // namespace partalign
