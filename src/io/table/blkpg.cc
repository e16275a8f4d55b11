// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/table/blkpg.h"

#include <linux/blkpg.h>
#include <sys/ioctl.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "partalign/util/units.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;

// sysfs reports partition start and size in 512-byte units (Documentation/ABI/stable/sysfs-block).
constexpr uint64_t kSysfsSectorBytes = 512;

std::optional<uint64_t> ReadSysfsNumber(const fs::path& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text)) return std::nullopt;
  Result<uint64_t> v = ParseUint(text);
  return v ? std::optional<uint64_t>(*v) : std::nullopt;
}

}  // namespace

Result<std::vector<KernelPartitionNode>> ReadKernelPartitions(const std::string& sysfs_root,
                                                              uint32_t major, uint32_t minor) {
  const fs::path link = fs::path(sysfs_root) / "dev" / "block" / fmt::format("{}:{}", major, minor);
  std::error_code ec;
  fs::path dir = fs::canonical(link, ec);
  if (ec) {
    return ErrnoError(ec.value(),
                      fmt::format("cannot find block device {}:{} in sysfs", major, minor));
  }
  std::vector<KernelPartitionNode> out;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    std::optional<uint64_t> number = ReadSysfsNumber(e.path() / "partition");
    std::optional<uint64_t> start = ReadSysfsNumber(e.path() / "start");
    std::optional<uint64_t> size = ReadSysfsNumber(e.path() / "size");
    if (!number || !start || !size) continue;
    out.push_back(
        {{static_cast<uint32_t>(*number), *start * kSysfsSectorBytes, *size * kSysfsSectorBytes},
         e.path().filename().string()});
  }
  std::sort(out.begin(), out.end(), [](const KernelPartitionNode& a, const KernelPartitionNode& b) {
    return a.partition.number < b.partition.number;
  });
  return out;
}

Status ApplyKernelUpdates(int fd, const std::string& path,
                          const std::vector<KernelUpdate>& updates) {
  for (const KernelUpdate& u : updates) {
    blkpg_partition part{};
    part.pno = static_cast<int>(u.partition.number);
    part.start = static_cast<long long>(u.partition.start_bytes);
    part.length = static_cast<long long>(u.partition.size_bytes);
    blkpg_ioctl_arg arg{};
    arg.op = u.op == KernelUpdate::Op::kDelete ? BLKPG_DEL_PARTITION : BLKPG_ADD_PARTITION;
    arg.datalen = sizeof(part);
    arg.data = &part;
    if (::ioctl(fd, BLKPG, &arg) != 0) {
      return ErrnoError(errno,
                        fmt::format("'{}': the kernel refused to {} (BLKPG)", path, Describe(u)));
    }
  }
  return {};
}

}  // namespace partalign
