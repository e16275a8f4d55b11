// SPDX-License-Identifier: GPL-3.0-or-later
// Sanity rules for reported topologies: which values are suspicious, each with a one-line
// reason a person can act on. The rules and their sources are in docs/architecture.md
// ("Topology sanity rules").
#pragma once

#include <string>
#include <vector>

#include "partalign/topology/device.h"
#include "partalign/topology/topology.h"
#include "partalign/util/result.h"

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

/// The largest logical sector size partalign accepts. Linux handles up to 64 KiB logical blocks
/// (large block size support); anything above is a typo.
inline constexpr uint64_t kMaxLogicalSectorSize = 64 * 1024;

/// The largest value a Linux block device reports for a sector size, I/O size or alignment
/// offset: the kernel's queue limits are 32-bit (`unsigned int` in struct queue_limits, and the
/// BLKPBSZGET, BLKIOMIN, BLKIOOPT and BLKALIGNOFF ioctls return them as such).
inline constexpr uint64_t kMaxQueueLimit = 0xFFFFFFFF;

/// Refuses a topology no block device can have, with a one-line reason naming the value:
/// a logical sector size that is not a power of two, a physical sector that is not a power of
/// two or smaller than the logical one, a minimum I/O size that is 0 or not a whole number of
/// logical sectors, a size of 0 or not a whole number of sectors, values above kMaxQueueLimit,
/// an alignment offset outside the physical sector. Odd values a device can report (a minimum
/// I/O below the physical sector, the bridge's 0xFFFF optimal I/O) pass: CheckTopology flags them.
Status ValidateTopology(const Topology& topology);

/// Checks the I/O limits alone.
std::vector<TopologyFinding> CheckTopology(const Topology& topology);

/// CheckTopology plus what only the identity and table tell (a kernel-reported misaligned
/// stack, a table written for another logical sector size).
std::vector<TopologyFinding> CheckDevice(const DeviceInfo& device);

}  // namespace partalign
