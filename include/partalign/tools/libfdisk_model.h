// SPDX-License-Identifier: GPL-3.0-or-later
// What util-linux's libfdisk (fdisk, sfdisk, cfdisk, and systemd-repart's first LBA) does on a
// given topology: the I/O size it keeps, its grain and first LBA, the first usable LBA of a
// fresh GPT or DOS label, where a partition with a default start goes, and its "does not start
// on physical sector boundary" warning. Restated from libfdisk/src/alignment.c, gpt.c and
// dos.c (alignment-heuristics.md §3, docs/explain.md); no upstream code is copied.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partalign/tools/tool_version.h"
#include "partalign/topology/device.h"
#include "partalign/topology/topology.h"
#include "partalign/util/result.h"

namespace partalign {

/// The device properties of a libfdisk context after fdisk_discover_topology(),
/// fdisk_discover_geometry() and fdisk_reset_alignment(): the fields of `struct fdisk_context`
/// that alignment uses. All sizes in bytes, LBAs in logical sectors.
struct LibfdiskContext {
  ToolVersion version;
  ToolEra era;
  uint64_t sector_size = 512;
  uint64_t phy_sector_size = 512;
  uint64_t min_io_size = 512;
  uint64_t optimal_io_size = 0;  ///< raw, as libblkid reported it
  uint64_t io_size = 512;        ///< "I/O size used by fdisk", after the filters
  uint64_t alignment_offset = 0;
  uint64_t total_sectors = 0;
  uint64_t grain_bytes = 0;
  uint64_t first_lba = 0;  ///< topology first LBA; a label may raise it (GPT)
  uint64_t last_lba = 0;
  std::vector<std::string> reasons;
  /// The reason that decides the result on this topology (a filter that fired, a first LBA
  /// taken from the topology, or the plain 1 MiB default).
  std::string key_reason;
};

/// Discovers `topology` as libfdisk `version` does. An image file or a device without libblkid
/// topology (origin kDefault) gets libfdisk's defaults. `user_sector_size` is what
/// fdisk_save_user_sector_size(cxt, 0, N) sets (systemd-repart >= 253 always does, sfdisk
/// --sector-size too): it resets the minimum and used I/O sizes to N.
Result<LibfdiskContext> DiscoverLibfdisk(const Topology& topology, const ToolVersion& version,
                                         std::optional<uint64_t> user_sector_size = {});

enum class AlignDirection { kUp, kDown, kNearest };

/// fdisk_align_lba(): `lba` if aligned, else the aligned LBA in `direction`, with the alignment
/// offset compensation ("physical blocks start at LBA -1").
uint64_t FdiskAlignLba(const LibfdiskContext& cxt, uint64_t lba, AlignDirection direction);

/// fdisk_align_lba_in_range() of the context's version.
uint64_t FdiskAlignLbaInRange(const LibfdiskContext& cxt, uint64_t lba, uint64_t start,
                              uint64_t stop);

/// lba_is_phy_aligned(): whether `lba` starts on a boundary of max(physical sector, minimum
/// I/O), shifted by the alignment offset. fdisk -l warns when it does not.
bool FdiskLbaIsPhyAligned(const LibfdiskContext& cxt, uint64_t lba);

/// A fresh label created in the context (fdisk_create_disklabel): the context with the label's
/// first/last LBA, and the label's usable range.
struct LibfdiskLabel {
  LabelType label = LabelType::kGpt;
  LibfdiskContext cxt;
  uint64_t first_usable_lba = 0;  ///< GPT FirstUsableLBA; DOS: the context's first LBA
  uint64_t last_usable_lba = 0;   ///< GPT LastUsableLBA; DOS: last sector (at most 2^32-1)
  std::vector<std::string> reasons;
};

Result<LibfdiskLabel> CreateLibfdiskLabel(const LibfdiskContext& cxt, LabelType label);

/// Where sfdisk puts partitions with an empty start field on a fresh label
/// (`label: gpt|dos` then `,SIZE` lines).
struct SfdiskPlacement {
  std::optional<uint64_t> first_start;  ///< nullopt: sfdisk refuses (`error`)
  std::string error;
  /// Start of partition 2 when partition 1 is `,SIZE` with `first_size_sectors` (nullopt when
  /// it does not fit or was not asked for).
  std::optional<uint64_t> second_start;
  /// False when fdisk -l prints "Partition 1 does not start on physical sector boundary.".
  bool first_start_phys_aligned = true;
  std::vector<std::string> reasons;
};

SfdiskPlacement PredictSfdisk(const LibfdiskLabel& label,
                              std::optional<uint64_t> first_size_sectors = {});

/// fdisk's warning text for partition `number`.
std::string FdiskPhysBoundaryWarning(int number);

}  // namespace partalign
