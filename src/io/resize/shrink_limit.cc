// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/resize/shrink_limit.h"

#include <fmt/format.h>

#include "io/boot/ntfs_file.h"
#include "io/resize/scratch_copy.h"
#include "io/resize/shrink_tools.h"
#include "io/used/used_map_reader.h"

namespace partalign {
namespace {

// The bytes the contents use, from their used map: everything but what lies past the
// filesystem's end (which a shrink gives up first).
uint64_t UsedByContents(const UsedMap& map) {
  uint64_t used = 0;
  for (const UsedRange& r : map.ranges()) {
    if (r.reasons == ReasonBit(UsedReason::kBeyondFilesystem)) continue;
    used += r.length_bytes;
  }
  return used;
}

}  // namespace

Result<ShrinkLimit> ReadShrinkLimit(int fd, const std::string& path, uint64_t offset_bytes,
                                    uint64_t length_bytes, const std::string& fs_type,
                                    const std::string& scratch_dir) {
  ShrinkLimit limit;
  limit.min_bytes = length_bytes;
  const ShrinkWay way = ShrinkWayFor(fs_type);
  if (!way.tool) {
    limit.reason = way.reason;
    return limit;
  }
  uint64_t used = 0;
  std::vector<ByteExtent> used_ranges;
  if (*way.tool == ShrinkTool::kNtfsresize) {
    Result<uint64_t> ntfs = NtfsUsedBytes(fd, offset_bytes, length_bytes, path);
    if (!ntfs) {
      limit.reason = ntfs.error().message;
      return limit;
    }
    used = *ntfs;
  } else {
    Result<UsedMap> map = ReadUsedMap({.path = path,
                                       .fd = fd,
                                       .offset_bytes = offset_bytes,
                                       .length_bytes = length_bytes,
                                       .fs_type = fs_type});
    if (!map) {
      // A hibernation image in a swap area, or a partition that cannot be read.
      limit.reason = map.error().message;
      return limit;
    }
    for (const UsedRange& r : map->ranges()) {
      if (r.reasons & ReasonBit(UsedReason::kWhole)) {
        limit.reason = map->notes().empty() ? fs_type + ": its free space cannot be read"
                                            : map->notes().front();
        return limit;
      }
    }
    used = UsedByContents(*map);
    for (const UsedRange& r : map->ranges())
      used_ranges.push_back({r.offset_bytes, r.length_bytes});
  }
  limit.tool = way.tool;
  limit.used_bytes = used;
  limit.min_bytes = ShrinkFloorBytes(*way.tool, used, length_bytes);
  if (*way.tool == ShrinkTool::kFatResize) {
    // libparted's own minimum (it keeps a FAT32 volume's cluster size), read on a scratch copy of
    // what the volume uses: libparted opens its files read-write.
    Result<ScratchCopy> copy = ScratchCopy::Create(scratch_dir, length_bytes);
    if (!copy) return copy.error();
    if (Status copied = copy->CopyIn(fd, path, offset_bytes, used_ranges); !copied) {
      return copied.error();
    }
    Result<uint64_t> minimum = FatResizerMinimumBytes(copy->path(), length_bytes, path);
    if (!minimum || *minimum >= length_bytes) {
      limit.tool.reset();
      limit.reason = minimum ? fmt::format(
                                   "libparted's FAT resizer cannot make this FAT volume "
                                   "smaller (its minimum is {} bytes)",
                                   *minimum)
                             : minimum.error().message;
      return limit;
    }
    limit.min_bytes = std::max(limit.min_bytes, *minimum);
    // ... and never below the size that keeps its type and cluster size.
    Result<std::vector<uint8_t>> boot = copy->Read(0, 512);
    if (!boot) return boot.error();
    const std::optional<uint64_t> type_floor = FatTypeFloorBytes(*boot);
    if (!type_floor || *type_floor >= length_bytes) {
      limit.tool.reset();
      limit.reason = "its FAT volume is as small as its type and cluster size allow";
      return limit;
    }
    limit.min_bytes = std::max(limit.min_bytes, *type_floor);
  }
  return limit;
}

}  // namespace partalign
