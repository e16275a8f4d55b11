// SPDX-License-Identifier: GPL-3.0-or-later
// libmount: the mount table (/proc/self/mountinfo). The only file that includes <libmount.h>.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "partalign/util/result.h"

namespace partalign {

struct MountEntry {
  std::string source;  ///< "/dev/loop3p1"; what mountinfo calls the mount source
  std::string target;  ///< the mount point
  std::string fstype;
  /// The device number mountinfo reports (st_dev of the filesystem): for a filesystem on a
  /// block device, that device's number.
  uint32_t major = 0;
  uint32_t minor = 0;
  bool read_only = false;  ///< mounted "ro" (the mount's own options, not the superblock's)
};

/// Every mount in `mountinfo_path` (the /proc/self/mountinfo format), parsed by libmount.
Result<std::vector<MountEntry>> ReadMountTable(
    const std::string& mountinfo_path = "/proc/self/mountinfo");

}  // namespace partalign
