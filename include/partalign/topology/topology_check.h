// Sanity rules for reported topologies: which values are suspicious, each with a one-line
// reason a person can act on. The rules and their sources are in docs/architecture.md
// ("Topology sanity rules").
#pragma once

#include <string>
#include <vector>

#include "partalign/topology/device.h"
#include "partalign/topology/topology.h"

namespace partalign {

/// The known bogus optimal I/O size: 0xFFFF blocks of 512 bytes, reported by broken USB-SATA
/// bridges (alignment-heuristics.md §1.3). libfdisk >= 2.37 ignores it ("always a controller
/// error", util-linux commit bbb66067c); parted uses it as a 65535-sector grain.
inline constexpr uint64_t kBogusBridgeOptimalIo = 0xFFFF * 512;

struct TopologyFinding {
  std::string code;     ///< stable identifier, e.g. "opt-io-bridge-0xffff"
  std::string message;  ///< one line, names the values it is about
  bool operator==(const TopologyFinding&) const = default;
};

/// Checks the I/O limits alone.
std::vector<TopologyFinding> CheckTopology(const Topology& topology);

/// CheckTopology plus what only the identity and table tell (a kernel-reported misaligned
/// stack, a table written for another logical sector size).
std::vector<TopologyFinding> CheckDevice(const DeviceInfo& device);

}  // namespace partalign
