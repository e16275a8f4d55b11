// SPDX-License-Identifier: GPL-3.0-or-later
// Probing a target end to end: open it read-only, read its topology (libblkid), identity
// (sysfs) and partition table type, then apply the user's --assume override.
#pragma once

#include <string>

#include "partalign/topology/device.h"
#include "partalign/topology/topology_spec.h"
#include "partalign/util/result.h"

namespace partalign {

struct ProbeOptions {
  /// --assume and --sector-size, already parsed.
  TopologyOverride assume;
  /// Where sysfs is mounted; tests point this at a fake tree.
  std::string sysfs_root = "/sys";
};

/// Never writes. Errors name the path and the step that failed.
Result<DeviceInfo> ProbeTarget(const std::string& path, const ProbeOptions& options);

}  // namespace partalign
