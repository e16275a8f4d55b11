// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/ext4_image.h"

#include <filesystem>

#include <fmt/format.h>

#include "support/run_command.h"

namespace partalign::test {
namespace {

constexpr uint64_t kExt4ImageSector = 512;

}  // namespace

void MakeExt4At(const std::string& image, uint64_t start, uint64_t sectors, const FileSet& files,
                const TempDir& dir, const std::string& name) {
  const std::string root = dir.File(name);
  for (const auto& [path, bytes] : files) {
    std::filesystem::create_directories(std::filesystem::path(root + "/" + path).parent_path());
    WriteFile(root + "/" + path, bytes);
  }
  // 4096-byte blocks: mke2fs picks 1024 below 512 MiB, which a disk with 4096-byte sectors
  // does not mount.
  RunOrThrow({"mkfs.ext4", "-q", "-F", "-b", "4096", "-d", root, "-E",
              fmt::format("offset={}", start * kExt4ImageSector), image,
              fmt::format("{}k", sectors * kExt4ImageSector / 1024)});
}

std::string CheckExt4At(const std::string& image, uint64_t start, uint64_t sectors,
                        const FileSet& files, const TempDir& dir) {
  const std::string part = dir.File(fmt::format("ext4-at-{}.img", start));
  RunOrThrow({"dd", "if=" + image, "of=" + part, fmt::format("bs={}", kExt4ImageSector),
              fmt::format("skip={}", start), fmt::format("count={}", sectors), "status=none"});
  CommandResult fsck = RunCommand({"e2fsck", "-fn", part});
  if (fsck.exit_code != 0) return "e2fsck: " + fsck.out + fsck.err;
  for (const auto& [path, bytes] : files) {
    CommandResult cat = RunCommand({"debugfs", "-R", "cat /" + path, part});
    if (cat.out != bytes) {
      return fmt::format("{}: {} bytes read, {} written", path, cat.out.size(), bytes.size());
    }
  }
  std::filesystem::remove(part);
  return "";
}

}  // namespace partalign::test
