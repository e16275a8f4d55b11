// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/repart_model.h"

#include <algorithm>

#include <fmt/format.h>

#include "partalign/tools/libfdisk_model.h"
#include "partalign/topology/alignment.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// repart.c: "Use at least 4K ... regardless of what kind of sector size is in use we'll place
// partitions at multiples of 4K".
constexpr uint64_t kRepartMinGrain = 4096;
// DEFAULT_MIN_SIZE (repart.c): the size a definition without SizeMinBytes= needs.
constexpr uint64_t kRepartDefaultMinSize = 10 * kMiB;

const ToolVersion kSavesSectorSizeSince{253, 0, 0, 1};

}  // namespace

Result<RepartPrediction> PredictRepart(const Topology& t, const ToolVersion& systemd,
                                       const ToolVersion& util_linux,
                                       std::optional<uint64_t> grain_size,
                                       std::optional<uint64_t> first_size) {
  Result<ToolEra> era = EraOf(Tool::kSystemd, systemd);
  if (!era) return era.error();
  RepartPrediction p;
  p.version = systemd;
  p.era = *era;
  p.libfdisk_version = util_linux;
  const bool saves_sector_size = systemd >= kSavesSectorSizeSince;
  std::optional<uint64_t> user_sector;
  if (saves_sector_size) user_sector = t.logical_sector_size;
  Result<LibfdiskContext> cxt = DiscoverLibfdisk(t, util_linux, user_sector);
  if (!cxt) return cxt.error();
  Result<LibfdiskLabel> label = CreateLibfdiskLabel(*cxt, LabelType::kGpt);
  if (!label) return label.error();
  p.sector_size = label->cxt.sector_size;
  p.grain_bytes = std::max(grain_size.value_or(kRepartMinGrain), p.sector_size);
  p.libfdisk_first_lba = label->cxt.first_lba;
  if (saves_sector_size) {
    p.reasons.push_back(fmt::format(
        "systemd-repart {} saves the sector size {} in libfdisk, which resets its I/O size: "
        "optimal I/O above 1 MiB no longer moves the first LBA",
        systemd.ToString(), t.logical_sector_size));
  } else {
    p.reasons.push_back(fmt::format("systemd-repart {} lets libfdisk {} read the topology itself",
                                    systemd.ToString(), util_linux.ToString()));
  }
  p.reasons.push_back(fmt::format(
      "grain = max({}, sector size {}) = {} bytes; repart never reads physical sector, I/O "
      "sizes or the alignment offset",
      grain_size ? fmt::format("--grain-size {}", *grain_size) : std::string("4 KiB"),
      p.sector_size, p.grain_bytes));
  const uint64_t first_bytes = AlignUp(p.libfdisk_first_lba * p.sector_size, p.grain_bytes);
  const uint64_t end_bytes = AlignDown((label->cxt.last_lba + 1) * p.sector_size, p.grain_bytes);
  p.area_start_bytes = first_bytes;
  p.area_end_bytes = end_bytes;
  p.reasons.push_back(
      fmt::format("libfdisk {}: {}", util_linux.ToString(), label->reasons.front()));
  p.reasons.push_back(fmt::format(
      "first start = libfdisk's first LBA {} x {} rounded up to the grain = byte {} = sector {}",
      p.libfdisk_first_lba, p.sector_size, first_bytes, first_bytes / p.sector_size));
  p.key_reason = fmt::format(
      "systemd-repart starts at libfdisk's first usable LBA {} rounded up to its {}-byte grain",
      p.libfdisk_first_lba, p.grain_bytes);
  uint64_t need = AlignUp(kRepartDefaultMinSize, p.grain_bytes);
  if (end_bytes <= first_bytes || end_bytes - first_bytes < need) {
    p.error = "Can't fit requested partitions into available free space";
    p.reasons.push_back(fmt::format(
        "the free area {}..{} bytes is smaller than the {} a partition needs: repart fails",
        first_bytes, end_bytes, FormatSize(need)));
    return p;
  }
  p.first_start = first_bytes / p.sector_size;
  if (first_size) {
    uint64_t second = first_bytes + AlignUp(*first_size, p.grain_bytes);
    if (second < end_bytes && end_bytes - second >= need) p.second_start = second / p.sector_size;
  }
  return p;
}

}  // namespace partalign
