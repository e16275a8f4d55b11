// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/repart_layout.h"

#include <fmt/format.h>

#include "partalign/topology/alignment.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// DEFAULT_MIN_SIZE (repart.c): what a definition without SizeMinBytes= needs.
constexpr uint64_t kRepartLayoutDefaultMinSize = 10 * kMiB;
// config_parse_size4096(): SizeMinBytes= is rounded up and SizeMaxBytes= down to 4096.
constexpr uint64_t kSizeParseRounding = 4096;

}  // namespace

RepartLayout PredictRepartLayout(const Topology& t, const ToolVersion& systemd,
                                 const ToolVersion& util_linux,
                                 const std::vector<std::optional<uint64_t>>& sizes,
                                 std::optional<uint64_t> grain_size) {
  RepartLayout out;
  Result<RepartPrediction> r = PredictRepart(t, systemd, util_linux, grain_size);
  if (!r) {
    out.error = r.error().message;
    return out;
  }
  const uint64_t ss = r->sector_size;
  const uint64_t grain = r->grain_bytes;
  // context_load_partition_table(): the usable area, both ends rounded to the grain.
  const uint64_t start = r->area_start_bytes;
  const uint64_t end = r->area_end_bytes;
  const uint64_t area = end > start ? end - start : 0;
  out.reasons.push_back(fmt::format(
      "the free area is bytes {}..{} (libfdisk's first usable LBA {} rounded up and the end "
      "rounded down to the {}-byte grain)",
      start, end, r->libfdisk_first_lba, grain));
  // partition_min_size(): sizes rounded up to the grain; the open-ended one needs 10 MiB.
  std::vector<uint64_t> min_sizes;
  uint64_t required = 0;
  for (const std::optional<uint64_t>& size : sizes) {
    uint64_t s = size ? AlignUp(AlignUp(*size, kSizeParseRounding), grain)
                      : AlignUp(kRepartLayoutDefaultMinSize, grain);
    min_sizes.push_back(s);
    required += s;
  }
  if (required > area) {
    out.error =
        fmt::format("Can't fit requested partitions into available free space ({}), refusing.",
                    FormatSize(area));
    out.reasons.push_back(
        fmt::format("the definitions need {} bytes, the free area holds {}: "
                    "repart refuses",
                    required, area));
    return out;
  }
  // context_grow_partitions(): sized definitions keep their size (minimum = maximum), the one
  // without a maximum grows over what is left, in whole grains.
  uint64_t offset = start;
  for (size_t i = 0; i < sizes.size(); ++i) {
    uint64_t size = min_sizes[i];
    if (!sizes[i]) size += AlignDown(area - required, grain);
    out.partitions.push_back({static_cast<int>(i) + 1, offset / ss, (offset + size) / ss - 1});
    out.reasons.push_back(fmt::format(
        "partition {}: byte {} ({}), {} bytes{}", i + 1, offset, offset / ss, size,
        sizes[i]
            ? (*sizes[i] == size ? "" : fmt::format(" ({} rounded up to the grain)", *sizes[i]))
            : " (no size: the rest of the free area)"));
    offset += size;
  }
  return out;
}

}  // namespace partalign
