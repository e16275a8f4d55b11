// Who is using a disk: mounted file systems (libmount), active swap, holders (device-mapper,
// md, LVM) - on the disk itself or any of its partitions; for an image file, the loop devices
// attached to it. A move refuses to start while anything uses the disk (product.md, safety
// contract 2).
#pragma once

#include <string>
#include <vector>

#include "io/target.h"
#include "partalign/result.h"

namespace partalign {

/// One line per user ("'/dev/loop0p1' is mounted on '/mnt'"); empty when nothing uses it.
Result<std::vector<std::string>> FindTargetUsers(const Target& target,
                                                 const std::string& sysfs_root = "/sys");

}  // namespace partalign
