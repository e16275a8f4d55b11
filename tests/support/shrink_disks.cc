// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/shrink_disks.h"

#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>

#include <fmt/format.h>

#include "partalign/resize/swap_header.h"
#include "support/boot_disks.h"
#include "support/run_command.h"

namespace partalign::test {
namespace {

constexpr uint64_t kShrinkDiskSector = 512;

std::string MtoolsName(const std::string& relative) { return "::/" + relative; }

// The `sectors` sectors at `start` of `image`, copied out to a file of their own.
std::string ExtractPartition(const std::string& image, uint64_t start, uint64_t sectors,
                             const TempDir& dir, const std::string& name) {
  const std::string part = dir.File(name);
  RunOrThrow({"dd", "if=" + image, "of=" + part, fmt::format("bs={}", kShrinkDiskSector),
              fmt::format("skip={}", start), fmt::format("count={}", sectors), "status=none"});
  return part;
}

void PutInto(const std::string& image, const std::string& part, uint64_t start) {
  RunOrThrow({"dd", "if=" + part, "of=" + image, fmt::format("bs={}", kShrinkDiskSector),
              fmt::format("seek={}", start), "conv=notrunc", "status=none"});
}

void WriteTree(const std::string& root, const FileSet& files) {
  for (const auto& [path, bytes] : files) {
    std::filesystem::create_directories(std::filesystem::path(root + "/" + path).parent_path());
    WriteFile(root + "/" + path, bytes);
  }
}

}  // namespace

void FillRandom(const std::string& image, uint64_t offset, uint64_t length, uint64_t seed) {
  std::fstream out(image, std::ios::in | std::ios::out | std::ios::binary);
  if (!out) throw std::runtime_error("cannot open " + image);
  out.seekp(static_cast<std::streamoff>(offset));
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> block(1 << 16);
  for (uint64_t done = 0; done < length;) {
    for (uint64_t& v : block) v = rng();
    const uint64_t n = std::min<uint64_t>(length - done, block.size() * sizeof(uint64_t));
    out.write(reinterpret_cast<const char*>(block.data()), static_cast<std::streamsize>(n));
    done += n;
  }
  if (!out) throw std::runtime_error("cannot write " + image);
}

void MakeFilesystemAt(const std::string& image, const std::string& type, uint64_t start,
                      uint64_t sectors, const FileSet& files, const TempDir& dir) {
  const uint64_t bytes = sectors * kShrinkDiskSector;
  FillRandom(image, start * kShrinkDiskSector, bytes, start + sectors);
  if (type == "ext4") {
    const std::string root = dir.File("ext4-files");
    WriteTree(root, files);
    RunOrThrow({"mkfs.ext4", "-q", "-F", "-b", "4096", "-d", root, "-E",
                fmt::format("offset={},nodiscard", start * kShrinkDiskSector), image,
                fmt::format("{}k", bytes / 1024)});
    return;
  }
  // The others are made in a file of their own (over the same random bytes) and put in place.
  const std::string part = ExtractPartition(image, start, sectors, dir, type + "-made.img");
  if (type == "swap") {
    RunOrThrow({"mkswap", "-U", kTestSwapUuid, "-L", kTestSwapLabel, part});
  } else if (type == "vfat") {
    // FAT32 with 4 KiB clusters, as Windows formats it up to 8 GiB.
    RunOrThrow(
        {"mkfs.vfat", "-F", "32", "-s", "8", "-n", "DATA", "-h", std::to_string(start), part});
    for (const auto& [path, content] : files) {
      const std::string local = dir.File("vfat-file");
      WriteFile(local, content);
      const std::string parent = std::filesystem::path(path).parent_path().string();
      if (!parent.empty()) RunCommand({"mmd", "-D", "s", "-i", part, MtoolsName(parent)});
      RunOrThrow({"mcopy", "-o", "-i", part, local, MtoolsName(path)});
    }
  } else if (type == "ntfs") {
    // -Q: quick (the clusters stay as they were); -p: the partition's start in the boot sector,
    // as Windows writes it.
    RunOrThrow({"mkntfs", "-Q", "-F", "-L", "WIN", "-p", std::to_string(start), "-H", "255", "-S",
                "63", part});
    const std::string mount_dir = dir.File("ntfs-mount");
    std::filesystem::create_directories(mount_dir);
    {
      FuseMount mount("ntfs-3g", part, mount_dir);
      WriteTree(mount_dir, files);
    }
  } else {
    throw std::runtime_error("no filesystem maker for " + type);
  }
  PutInto(image, part, start);
  std::filesystem::remove(part);
}

std::string CheckFilesystemAt(const std::string& image, const std::string& type, uint64_t start,
                              uint64_t sectors, const FileSet& files, const TempDir& dir) {
  const std::string part = ExtractPartition(image, start, sectors, dir, type + "-check.img");
  auto failed = [&](const std::string& what) {
    std::filesystem::remove(part);
    return what;
  };
  if (type == "ext4") {
    CommandResult fsck = RunCommand({"e2fsck", "-fn", part});
    if (fsck.exit_code != 0) return failed("e2fsck: " + fsck.out + fsck.err);
    for (const auto& [path, bytes] : files) {
      if (RunCommand({"debugfs", "-R", "cat /" + path, part}).out != bytes) {
        return failed(path + " differs (debugfs)");
      }
    }
  } else if (type == "vfat") {
    CommandResult fsck = RunCommand({"fsck.vfat", "-n", part});
    if (fsck.exit_code != 0) return failed("fsck.vfat: " + fsck.out + fsck.err);
    for (const auto& [path, bytes] : files) {
      if (RunCommand({"mtype", "-i", part, MtoolsName(path)}).out != bytes) {
        return failed(path + " differs (mtype)");
      }
    }
  } else if (type == "ntfs") {
    CommandResult fix = RunCommand({"ntfsfix", "-n", part});
    if (fix.exit_code != 0) return failed("ntfsfix -n: " + fix.out + fix.err);
    for (const auto& [path, bytes] : files) {
      // --force: ntfsresize leaves the volume marked for a check by Windows' chkdsk (as it says
      // it does), which libntfs-3g otherwise refuses to open.
      if (RunCommand({"ntfscat", "--force", part, path}).out != bytes) {
        return failed(path + " differs (ntfscat)");
      }
    }
  } else if (type == "swap") {
    CommandResult blkid = RunCommand({"blkid", "-p", "-o", "export", part});
    for (const std::string& want : {std::string("TYPE=swap"), std::string("UUID=") + kTestSwapUuid,
                                    std::string("LABEL=") + kTestSwapLabel}) {
      if (blkid.out.find(want + "\n") == std::string::npos) {
        return failed(fmt::format("blkid does not say {}: {}", want, blkid.out));
      }
    }
    // The header's size fills the partition without passing its end (swapon refuses an area
    // larger than its device).
    const std::string head = ReadFile(part).substr(0, 65536);
    const std::optional<SwapHeader> header = ParseSwapHeader(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(head.data()), head.size()));
    const uint64_t bytes = sectors * kShrinkDiskSector;
    if (!header || header->page_bytes != 4096 ||
        (uint64_t{header->last_page} + 1) * header->page_bytes > bytes ||
        bytes - (uint64_t{header->last_page} + 1) * header->page_bytes >= header->page_bytes) {
      return failed(fmt::format("the swap header does not describe {} bytes", bytes));
    }
  }
  return failed("");
}

}  // namespace partalign::test
