// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/resize/shrink_way.h"

#include <algorithm>
#include <array>
#include <utility>

#include <fmt/format.h>

#include "partalign/topology/alignment.h"
#include "partalign/used/hibernation.h"
#include "partalign/util/byte_order.h"

namespace partalign {
namespace {

constexpr std::array<std::pair<ShrinkTool, const char*>, 4> kShrinkToolNames{{
    {ShrinkTool::kResize2fs, "resize2fs"},
    {ShrinkTool::kNtfsresize, "ntfsresize"},
    {ShrinkTool::kFatResize, "libparted-fat"},
    {ShrinkTool::kMkswap, "mkswap"},
}};

}  // namespace

const char* ToString(ShrinkTool tool) {
  for (const auto& [t, name] : kShrinkToolNames) {
    if (t == tool) return name;
  }
  return "unknown";
}

std::optional<ShrinkTool> ShrinkToolFromString(std::string_view name) {
  for (const auto& [t, n] : kShrinkToolNames) {
    if (name == n) return t;
  }
  return std::nullopt;
}

ShrinkWay ShrinkWayFor(std::string_view fs_type) {
  if (fs_type == "ext2" || fs_type == "ext3" || fs_type == "ext4") {
    return {ShrinkTool::kResize2fs, ""};
  }
  if (fs_type == "ntfs") return {ShrinkTool::kNtfsresize, ""};
  if (fs_type == "vfat") return {ShrinkTool::kFatResize, ""};
  if (fs_type == "swap") return {ShrinkTool::kMkswap, ""};
  if (fs_type == "swsuspend") {
    return {std::nullopt, fmt::format("the swap area holds a hibernation image: {} (or remove the "
                                      "image with mkswap) first",
                                      WakeAdvice(SleepingOs::kLinux))};
  }
  if (fs_type == "xfs") {
    return {std::nullopt, "XFS cannot be shrunk (xfs_growfs only grows a filesystem)"};
  }
  if (fs_type == "btrfs") {
    return {
        std::nullopt,
        "btrfs shrinks only while mounted ('btrfs filesystem resize'), which partalign does not "
        "do to a partition it changes"};
  }
  if (fs_type == "crypto_LUKS") {
    return {
        std::nullopt,
        "its contents are encrypted: the filesystem inside cannot be shrunk without opening it"};
  }
  if (fs_type == "LVM2_member") {
    return {std::nullopt, "an LVM physical volume: shrink it with pvresize, not offline here"};
  }
  if (fs_type.empty()) return {std::nullopt, "no filesystem was recognised in it"};
  return {std::nullopt, std::string(fs_type) + " has no shrinking tool partalign uses"};
}

uint64_t ShrunkContentsBytes(ShrinkTool tool, uint64_t partition_bytes,
                             uint64_t logical_sector_size) {
  if (tool == ShrinkTool::kNtfsresize && partition_bytes >= logical_sector_size) {
    return partition_bytes - logical_sector_size;
  }
  return partition_bytes;
}

uint64_t ShrinkFloorBytes(ShrinkTool tool, uint64_t used_bytes, uint64_t contents_bytes) {
  if (tool == ShrinkTool::kMkswap) return std::min(kMinSwapBytes, contents_bytes);
  const uint64_t reserve = std::max(kShrinkReserveBytes, contents_bytes / 20);
  return std::min(contents_bytes, used_bytes + reserve);
}

std::optional<uint64_t> FatTypeFloorBytes(std::span<const uint8_t> b) {
  // BPB (Microsoft's FAT specification): BytsPerSec 0x0B, SecPerClus 0x0D, RsvdSecCnt 0x0E,
  // NumFATs 0x10, RootEntCnt 0x11, TotSec16 0x13, FATSz16 0x16, TotSec32 0x20, FATSz32 0x24.
  const std::optional<uint16_t> bps = Le<uint16_t>(b, 0x0B);
  const std::optional<uint8_t> spc = Le<uint8_t>(b, 0x0D);
  const std::optional<uint16_t> reserved = Le<uint16_t>(b, 0x0E);
  const std::optional<uint8_t> fats = Le<uint8_t>(b, 0x10);
  const std::optional<uint16_t> root_entries = Le<uint16_t>(b, 0x11);
  const std::optional<uint16_t> total16 = Le<uint16_t>(b, 0x13);
  const std::optional<uint16_t> fat16 = Le<uint16_t>(b, 0x16);
  const std::optional<uint32_t> total32 = Le<uint32_t>(b, 0x20);
  const std::optional<uint32_t> fat32 = Le<uint32_t>(b, 0x24);
  if (!bps || !spc || !reserved || !fats || !root_entries || !total16 || !fat16 || !total32 ||
      !fat32 || Le<uint16_t>(b, 510) != 0xAA55 || *bps < 512 || *bps > 4096 ||
      (*bps & (*bps - 1)) != 0 || *spc == 0 || (*spc & (*spc - 1)) != 0 || *reserved == 0 ||
      *fats == 0) {
    return std::nullopt;
  }
  const uint64_t sector = *bps;
  const uint64_t fat_sectors = *fat16 != 0 ? *fat16 : *fat32;
  const uint64_t root_sectors = (uint64_t{*root_entries} * 32 + sector - 1) / sector;
  const uint64_t total = *total16 != 0 ? *total16 : *total32;
  const uint64_t meta = *reserved + uint64_t{*fats} * fat_sectors + root_sectors;
  if (total <= meta) return std::nullopt;
  const uint64_t clusters = (total - meta) / *spc;
  // The type is the cluster count's (not what the boot sector's label says).
  const uint64_t min_clusters = clusters >= 65525 ? 65525 : clusters >= 4085 ? 4085 : 1;
  return (meta + min_clusters * *spc) * sector;
}

std::vector<uint8_t> FatBootSectorAfterResize(std::span<const uint8_t> old,
                                              std::span<const uint8_t> resized) {
  constexpr size_t kBootBytes = 512;
  std::vector<uint8_t> out(old.begin(), old.begin() + kBootBytes);
  auto take = [&](size_t from, size_t to) {
    std::copy(resized.begin() + from, resized.begin() + to, out.begin() + from);
  };
  take(0x0B, 0x15);  // bytes per sector .. total sectors (16 bit)
  take(0x16, 0x18);  // FAT size (16 bit)
  take(0x20, 0x24);  // total sectors (32 bit)
  if (Le<uint16_t>(resized, 0x16) == 0) take(0x24, 0x34);  // FAT32's extended BPB fields
  return out;
}

std::vector<ByteExtent> CoalesceChanges(std::vector<ByteExtent> changes, uint64_t sector_bytes,
                                        uint64_t gap_bytes, size_t max_ranges) {
  std::vector<ByteExtent> aligned;
  for (const ByteExtent& c : changes) {
    if (c.length_bytes == 0) continue;
    const uint64_t first = AlignDown(c.offset_bytes, sector_bytes);
    aligned.push_back({first, AlignUp(c.end(), sector_bytes) - first});
  }
  std::sort(aligned.begin(), aligned.end(), [](const ByteExtent& a, const ByteExtent& b) {
    return a.offset_bytes < b.offset_bytes;
  });
  for (uint64_t gap = gap_bytes;; gap = std::max<uint64_t>(gap * 2, sector_bytes)) {
    std::vector<ByteExtent> merged;
    for (const ByteExtent& c : aligned) {
      if (!merged.empty() && c.offset_bytes <= merged.back().end() + gap) {
        merged.back().length_bytes =
            std::max(merged.back().end(), c.end()) - merged.back().offset_bytes;
      } else {
        merged.push_back(c);
      }
    }
    if (merged.size() <= std::max<size_t>(max_ranges, 1)) return merged;
  }
}

}  // namespace partalign
