// SPDX-License-Identifier: GPL-3.0-or-later
// The topologies of alignment-heuristics.md §6 (rows A-K, an 8 GiB disk), shared by the model
// unit tests.
#pragma once

#include <cstdint>
#include <string>

#include "partalign/topology/topology.h"
#include "support/test_topology.h"

namespace partalign::test {

inline constexpr uint64_t kSection6DiskBytes = 8ull << 30;

struct Section6Row {
  char row;
  uint64_t lbs, pbs, min_io, opt_io, align_off;

  Topology topology() const {
    return MakeTopology(lbs, pbs, min_io, opt_io, align_off, TopologyOrigin::kAssumed,
                        kSection6DiskBytes);
  }
  std::string name() const { return std::string(1, row); }
};

inline constexpr Section6Row kRowA{'A', 512, 512, 512, 0, 0};
inline constexpr Section6Row kRowB{'B', 512, 4096, 4096, 0, 0};
inline constexpr Section6Row kRowC{'C', 512, 4096, 4096, 33553920, 0};
inline constexpr Section6Row kRowD{'D', 512, 4096, 4096, 1048576, 0};
inline constexpr Section6Row kRowE{'E', 512, 512, 65536, 131072, 0};
inline constexpr Section6Row kRowF{'F', 512, 4096, 4096, 0, 3584};
inline constexpr Section6Row kRowG{'G', 4096, 4096, 4096, 0, 0};
inline constexpr Section6Row kRowH{'H', 512, 4096, 65536, 196608, 0};
inline constexpr Section6Row kRowI{'I', 512, 512, 512, 33553920, 0};
inline constexpr Section6Row kRowJ{'J', 512, 512, 512, 4194304, 0};
inline constexpr Section6Row kRowK{'K', 512, 512, 196608, 0, 0};

}  // namespace partalign::test
