// SPDX-License-Identifier: GPL-3.0-or-later
// Where `systemd-repart --empty=force` puts the partitions of a set of definitions on an empty
// disk: each sized definition has SizeMinBytes= = SizeMaxBytes= = its size, the last one may
// have neither and takes the rest. repart rounds every size up to its grain (4 KiB, at least
// the sector size, or --grain-size; partition_min_size/partition_max_size), checks that the
// minimum sizes fit the one free area (a definition without a size needs 10 MiB,
// DEFAULT_MIN_SIZE; context_allocate_partitions), gives the rest to the open-ended one
// (context_grow_partitions) and places them back to back from libfdisk's first usable LBA
// rounded up to the grain (context_place_partitions). Restated from src/partition/repart.c of
// systemd (alignment-heuristics.md §5); no upstream code is copied.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partalign/tools/repart_model.h"

namespace partalign {

struct RepartPartition {
  int number = 0;
  uint64_t start_sector = 0;
  uint64_t end_sector = 0;
  bool operator==(const RepartPartition&) const = default;
};

struct RepartLayout {
  /// Empty when repart refuses.
  std::vector<RepartPartition> partitions;
  std::string error;
  std::vector<std::string> reasons;
};

/// `sizes_bytes`: one per definition, in the order of their file names; nullopt for the one
/// without a size. `grain_size_bytes`: --grain-size (newer repart).
RepartLayout PredictRepartLayout(const Topology& topology, const ToolVersion& systemd_version,
                                 const ToolVersion& util_linux_version,
                                 const std::vector<std::optional<uint64_t>>& sizes_bytes,
                                 std::optional<uint64_t> grain_size_bytes = {});

}  // namespace partalign
