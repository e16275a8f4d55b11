// SPDX-License-Identifier: GPL-3.0-or-later
// What systemd-repart does on an empty disk (--empty=force): its grain (4 KiB, at least the
// sector size, or --grain-size), and the first partition start, which is libfdisk's first
// usable LBA of a new GPT rounded up to the grain. Restated from src/partition/repart.c
// (context_load_partition_table) of systemd (alignment-heuristics.md §5); no upstream code is
// copied.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partalign/tools/tool_version.h"
#include "partalign/topology/topology.h"
#include "partalign/util/result.h"

namespace partalign {

struct RepartPrediction {
  ToolVersion version;
  ToolEra era;
  ToolVersion libfdisk_version;
  uint64_t sector_size = 512;
  uint64_t grain_bytes = 4096;
  /// libfdisk's first LBA of the new GPT (fdisk_get_first_lba after fdisk_create_disklabel).
  uint64_t libfdisk_first_lba = 0;
  /// The free area of the empty disk in bytes: the first LBA rounded up and the end of the
  /// last usable LBA rounded down to the grain (context_load_partition_table).
  uint64_t area_start_bytes = 0;
  uint64_t area_end_bytes = 0;
  /// First partition on an empty disk, in logical sectors; nullopt when no partition fits.
  std::optional<uint64_t> first_start;
  /// Start of a second partition after a first one of `first_size_bytes`, when asked for.
  std::optional<uint64_t> second_start;
  std::string error;
  std::vector<std::string> reasons;
  std::string key_reason;
};

/// `systemd_version` selects repart's era, `util_linux_version` the libfdisk it links.
/// `grain_size_bytes` is --grain-size (newer repart); `min_partition_bytes` the least size the
/// definitions need (a definition without sizes needs 10 MiB, DEFAULT_MIN_SIZE).
Result<RepartPrediction> PredictRepart(const Topology& topology, const ToolVersion& systemd_version,
                                       const ToolVersion& util_linux_version,
                                       std::optional<uint64_t> grain_size_bytes = {},
                                       std::optional<uint64_t> first_size_bytes = {});

}  // namespace partalign
