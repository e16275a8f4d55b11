// SPDX-License-Identifier: GPL-3.0-or-later
// Where `sgdisk -o -n 0:0:+SIZE ... -n 0:0:0 DEV` puts every partition: each `-n` takes the
// first free partition number, starts at the first sector of the largest free area moved to the
// alignment (Align(): down when everything in between is free, else up), and ends SIZE sectors
// later (`+SIZE`, IeeeToInt()) or at the end of that free area (`0`). Any `-n` that fails makes
// sgdisk save nothing. Restated from gptcl.cc and gpt.cc (CreatePartition, FindFirstInLargest,
// FindLastInFree, Align) and support.cc (IeeeToInt) of gptfdisk 1.0.9 (alignment-heuristics.md
// §4); no upstream code is copied.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partalign/tools/gdisk_model.h"

namespace partalign {

/// The end field of one `-n 0:0:END`: "+SIZE" with a unit suffix (K, M, G, T, P; binary) or
/// none (sectors), or "0" (the end of the free area).
struct SgdiskNew {
  /// nullopt: `0`.
  std::optional<uint64_t> size;
  /// 0 (sectors), or 1..5 for K, M, G, T, P.
  int unit_power = 0;
};

struct SgdiskPartition {
  int number = 0;
  uint64_t start_sector = 0;
  uint64_t end_sector = 0;
  bool operator==(const SgdiskPartition&) const = default;
};

struct SgdiskLayout {
  /// Empty when sgdisk refuses ("Error encountered; not saving changes.").
  std::vector<SgdiskPartition> partitions;
  std::string error;
  /// `sgdisk -v` afterwards: its cautions about starts and ends.
  std::vector<std::string> warnings;
  std::vector<std::string> reasons;
};

/// The text of an END field: "+256M", "+12345" or "0".
std::string SgdiskEndText(const SgdiskNew& n);

/// `n` as sgdisk writes it for `size_bytes`: the largest binary unit that divides it, or
/// sectors rounded up when no unit does.
SgdiskNew SgdiskSizeOf(uint64_t size_bytes, uint64_t logical_sector_size);

/// Runs `sgdisk -o` and the `-n` options in order on a disk of `topology` (gdisk reads only the
/// logical sector size, and the physical one for `-v`).
SgdiskLayout PredictSgdiskLayout(const Topology& topology, const ToolVersion& version,
                                 const std::vector<SgdiskNew>& news);

}  // namespace partalign
