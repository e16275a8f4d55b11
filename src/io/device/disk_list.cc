// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/device/disk_list.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <system_error>

namespace partalign {
namespace {

bool IsNotADisk(std::string_view name) {
  constexpr std::array<std::string_view, 7> kPrefixes{"loop", "ram", "zram", "fd",
                                                      "sr",   "dm-", "md"};
  return std::any_of(kPrefixes.begin(), kPrefixes.end(),
                     [&](std::string_view p) { return name.starts_with(p); });
}

// The size in 512-byte units sysfs reports; 0 when it cannot be read.
uint64_t SectorCount(const std::filesystem::path& dir) {
  std::ifstream in(dir / "size");
  uint64_t sectors = 0;
  if (!(in >> sectors)) return 0;
  return sectors;
}

}  // namespace

Result<std::vector<std::string>> ListWholeDisks(const std::string& sys_block) {
  std::error_code ec;
  std::filesystem::directory_iterator it(sys_block, ec);
  if (ec) return ErrnoError(ec.value(), fmt::format("cannot list '{}'", sys_block));
  std::vector<std::string> disks;
  for (const std::filesystem::directory_entry& entry : it) {
    const std::string name = entry.path().filename().string();
    if (IsNotADisk(name) || SectorCount(entry.path()) == 0) continue;
    disks.push_back("/dev/" + name);
  }
  std::sort(disks.begin(), disks.end());
  return disks;
}

}  // namespace partalign
