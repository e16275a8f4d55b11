// SPDX-License-Identifier: GPL-3.0-or-later
// What GPT fdisk (gdisk, sgdisk, cgdisk) does: 1 MiB in logical sectors on a new table, the
// alignment it infers from an existing table's starts, where `sgdisk -o -n 1:0:0` starts, and
// what `sgdisk -v` says. Restated from gpt.cc (ClearGPTData, ComputeAlignment, Align,
// FindFirstInLargest, Verify) and gptcl.cc of gptfdisk (alignment-heuristics.md §4); no
// upstream code is copied.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partalign/tools/tool_version.h"
#include "partalign/topology/topology.h"
#include "partalign/util/result.h"

namespace partalign {

struct GdiskPrediction {
  ToolVersion version;
  ToolEra era;
  /// sectorAlignment of a new table (`-o`, ClearGPTData).
  uint64_t alignment_sectors = 0;
  uint64_t first_usable_lba = 0;
  uint64_t last_usable_lba = 0;
  /// `sgdisk -o -n 1:0:0`; nullopt when the disk cannot hold a partition.
  std::optional<uint64_t> first_start;
  /// Partition 2 of `sgdisk -o -n 1:0:+SIZE -n 2:0:0`, when asked for and it fits.
  std::optional<uint64_t> second_start;
  /// What ComputeAlignment() infers from `existing_starts` (an existing table), if any.
  std::optional<uint64_t> existing_table_alignment;
  /// `sgdisk -v` "Caution: Partition 1 doesn't begin on a N-sector boundary" for first_start.
  std::optional<std::string> verify_warning;
  std::vector<std::string> reasons;
  std::string key_reason;
};

/// The alignment ComputeAlignment() infers: the largest power of two (at most 1 MiB in sectors)
/// dividing every start, raised to 8 on disks of at least the era's Advanced Format threshold.
uint64_t GdiskComputeAlignment(const ToolVersion& version, uint64_t logical_sector_size,
                               uint64_t disk_sectors, const std::vector<uint64_t>& starts);

/// The physical sector size only affects warnings; gdisk reads it with BLKPBSZGET, so an image
/// file (origin kDefault) has none.
Result<GdiskPrediction> PredictGdisk(const Topology& topology, const ToolVersion& version,
                                     const std::vector<uint64_t>& existing_starts = {},
                                     std::optional<uint64_t> first_size_sectors = {});

/// Verify()'s testAlignment (gpt.cc): max(physical / logical sector, sectorAlignment). gdisk
/// reads the physical sector with BLKPBSZGET only, which image files (origin kDefault) lack.
uint64_t GdiskTestAlignment(const Topology& topology, uint64_t alignment_sectors);

/// `sgdisk -v`'s test for one partition start: the boundary it checks and whether it warns.
std::optional<std::string> GdiskVerifyBeginWarning(const Topology& topology,
                                                   uint64_t alignment_sectors, int number,
                                                   uint64_t start);

/// `sgdisk -v`'s test for one partition end: "doesn't end on a T-sector boundary" when
/// (end + 1) % T != 0.
std::optional<std::string> GdiskVerifyEndWarning(const Topology& topology,
                                                 uint64_t alignment_sectors, int number,
                                                 uint64_t end);

}  // namespace partalign
