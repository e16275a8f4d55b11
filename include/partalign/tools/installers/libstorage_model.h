// SPDX-License-Identifier: GPL-3.0-or-later
// What YaST's storage library, libstorage-ng, does: its alignment grain (the sysfs optimal I/O
// doubled until it reaches 1 MiB, shifted by the alignment offset), the four align policies,
// and the unused partition slots of a GPT or msdos table, where YaST's Partitioner and its
// proposal put partitions. Restated from storage/Utils/AlignmentImpl.cc,
// storage/Devices/PartitionTableImpl.cc, GptImpl.cc, MsdosImpl.cc and
// storage/Utils/RegionImpl.cc of openSUSE/libstorage-ng (docs/explain.md); no upstream code is
// copied.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partalign/tools/layout_prediction.h"
#include "partalign/tools/tool_version.h"
#include "partalign/topology/device.h"
#include "partalign/topology/topology.h"
#include "partalign/util/result.h"

namespace partalign {

/// libstorage-ng's Topology: what it reads from sysfs (`alignment_offset`,
/// `queue/optimal_io_size`; nothing else) and the least grain (1 MiB unless set).
struct LibstorageTopology {
  int64_t alignment_offset = 0;
  uint64_t optimal_io_size = 0;
  uint64_t minimal_grain = 1024 * 1024;
};

/// AlignType: OPTIMAL follows the topology, REQUIRED only the hard requirements.
enum class LibstorageAlignType { kOptimal, kRequired };

/// AlignPolicy (storage/Utils/Alignment.h).
enum class LibstorageAlignPolicy {
  kAlignStartAndEnd,   ///< start rounded up, end rounded down
  kAlignStartKeepEnd,  ///< start rounded up, end kept (get_unused_partition_slots' default)
  kAlignStartKeepSize,
  kKeepStartAlignEnd,  ///< the Partitioner's custom sizes
};

struct LibstorageAlignment {
  LibstorageTopology topology;
  LibstorageAlignType type = LibstorageAlignType::kOptimal;
  /// A grain the label adds (DASD tracks); 0 for none.
  uint64_t extra_grain = 0;
};

/// Alignment::Impl::calculate_grain(), in bytes.
uint64_t LibstorageGrain(const LibstorageAlignment& alignment);

/// align_block_in_place(): rounds a start up or an end (the block before the next start) down,
/// in blocks of `block_size`, with unsigned 64-bit arithmetic as libstorage-ng does; false when
/// an end would go below 0.
bool LibstorageAlignBlock(const LibstorageAlignment& alignment, uint64_t* block,
                          uint64_t block_size, bool is_end);

/// A libstorage-ng Region: start and length in blocks.
struct LibstorageRegion {
  uint64_t start = 0;
  uint64_t length = 0;
  uint64_t block_size = 512;
  uint64_t end() const { return start + length - 1; }
  bool operator==(const LibstorageRegion&) const = default;
};

/// align_region_in_place(): nullopt when the region cannot be aligned (AlignError).
std::optional<LibstorageRegion> LibstorageAlignRegion(const LibstorageAlignment& alignment,
                                                      const LibstorageRegion& region,
                                                      LibstorageAlignPolicy policy);

enum class LibstoragePartitionType { kPrimary, kExtended, kLogical };

struct LibstoragePartition {
  uint32_t number = 0;
  LibstoragePartitionType type = LibstoragePartitionType::kPrimary;
  uint64_t start = 0;
  uint64_t length = 0;
};

/// PartitionSlot: where a partition can be created.
struct LibstorageSlot {
  uint32_t number = 0;
  LibstorageRegion region;
  bool primary_slot = false;
  bool primary_possible = false;
  bool extended_slot = false;
  bool extended_possible = false;
  bool logical_slot = false;
  bool logical_possible = false;
};

/// The table a slot computation needs.
struct LibstorageTable {
  LabelType label = LabelType::kGpt;
  uint64_t disk_blocks = 0;
  uint64_t block_size = 512;
  std::vector<LibstoragePartition> partitions;
  /// Msdos: the gap kept before the first partition (minimal-mbr-gap, 1 MiB by default).
  uint64_t minimal_mbr_gap_bytes = 1024 * 1024;
  /// GPT: the partition entries (128 unless parted reports another count, since 4.2.72).
  uint64_t gpt_partition_slots = 128;
};

/// get_unused_partition_slots(): primary slots between the non-logical partitions of the
/// usable region, then logical slots inside an extended partition (room kept for 128 EBR
/// sectors), each aligned with `policy`; slots that cannot be aligned are dropped.
std::vector<LibstorageSlot> LibstorageUnusedSlots(
    const LibstorageTable& table, const LibstorageAlignment& alignment,
    LibstorageAlignPolicy policy = LibstorageAlignPolicy::kAlignStartKeepEnd);

/// YaST on a fresh label of a disk with this topology.
struct LibstoragePrediction {
  ToolVersion version;
  ToolEra era;
  LibstorageTopology topology;
  uint64_t grain_bytes = 0;
  int64_t offset_sectors = 0;
  /// The first slot's start (where the Partitioner's and the proposal's first partition go);
  /// nullopt when the table has no slot.
  std::optional<uint64_t> first_start;
  /// The slot after a first partition of `first_size_bytes` (its end aligned down, as the
  /// Partitioner does for a custom size).
  std::optional<uint64_t> second_start;
  std::vector<std::string> reasons;
  std::string key_reason;
};

/// `topology` as libstorage-ng reads it from sysfs: an image file (origin kDefault) has no
/// sysfs entry, so its optimal I/O and offset read as 0.
LibstorageTopology LibstorageTopologyOf(const Topology& topology);

Result<LibstoragePrediction> PredictLibstorage(const Topology& topology, const ToolVersion& version,
                                               LabelType label,
                                               std::optional<uint64_t> first_size_bytes = {});

/// YaST's Partitioner asked for every partition of `request` in turn on a fresh label ("Add
/// Partition", then "Custom Size", or "Maximum Size" for the rest), as yast-storage-ng's
/// add_partition controller and partition_size dialog do it on libstorage-ng's slots: a custom
/// size must lie between the optimal grain and the largest optimal slot; it goes to the start of
/// the smallest optimal slot that holds it, its length rounded up to whole sectors, its end
/// aligned down unless it ends the slot (PartitionTables::Base#align_end); the rest is the whole
/// largest slot. At commit libstorage-ng runs `parted mkpart` with those sectors, and parted's
/// warnings are the prediction's. A DOS layout of more than four partitions needs an extended
/// partition, which the Partitioner makes only when asked: partitions 4 and up are not
/// modelled then.
LayoutPrediction LibstorageLayoutPrediction(const Topology& topology, const ToolVersion& version,
                                            const ToolVersion& parted_version,
                                            const LayoutRequest& request);

}  // namespace partalign
