// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/device/mounted_partitions.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "io/device/mount_table.h"
#include "io/device/sysfs_identity.h"

namespace partalign {

namespace {

// `a` and `b` name the same file (a disk's node by two names: /dev/sda and a symlink to it).
bool SameNode(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return a == b;
  return sa.st_rdev == sb.st_rdev && S_ISBLK(sa.st_mode) == S_ISBLK(sb.st_mode);
}

}  // namespace

Result<std::vector<MountedPartition>> MountedPartitionsOf(const std::string& disk,
                                                          const std::string& mountinfo,
                                                          const std::string& sysfs_root) {
  Result<std::vector<MountEntry>> mounts = ReadMountTable(mountinfo);
  if (!mounts) return mounts.error();
  std::vector<MountedPartition> out;
  for (const MountEntry& m : *mounts) {
    if (m.major == 0) continue;  // no block device (tmpfs, proc, overlay)
    Result<std::optional<PartitionNode>> node = PartitionNodeOfDevice(m.major, m.minor, sysfs_root);
    if (!node || !*node || !(*node)->number || !SameNode((*node)->disk, disk)) continue;
    const uint32_t number = *(*node)->number;
    bool seen = false;
    for (const MountedPartition& p : out) seen = seen || p.number == number;
    if (!seen) out.push_back({number, m.target, m.fstype, m.read_only});
  }
  return out;
}

Result<std::optional<HoldingPartition>> PartitionHolding(const std::string& dir,
                                                         const std::string& sysfs_root) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    return ErrnoError(errno, fmt::format("cannot look at '{}'", dir));
  }
  Result<std::optional<PartitionNode>> node =
      PartitionNodeOfDevice(major(st.st_dev), minor(st.st_dev), sysfs_root);
  if (!node) return node.error();
  if (!*node || !(*node)->number) return std::optional<HoldingPartition>();
  return std::optional<HoldingPartition>(HoldingPartition{(*node)->disk, *(*node)->number});
}

}  // namespace partalign
