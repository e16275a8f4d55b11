// SPDX-License-Identifier: GPL-3.0-or-later
// What Anaconda's storage library, blivet, does: it asks libparted (through pyparted) for the
// device's optimum and minimum alignment, intersects them with the label's (none for GPT and
// msdos), and places a new partition at the aligned sector nearest the start of a free region
// with its end aligned up. So its grain is exactly parted's `-a optimal` one, which partalign
// already checks against the real parted (parted_model.h). Restated from
// blivet/formats/disklabel.py (get_alignment, get_end_alignment) and blivet/partitioning.py
// (add_partition, align_size_for_disklabel) of storaged-project/blivet; no upstream code is
// copied.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partalign/tools/layout_prediction.h"
#include "partalign/tools/parted_model.h"
#include "partalign/tools/tool_version.h"
#include "partalign/topology/device.h"
#include "partalign/topology/topology.h"
#include "partalign/util/result.h"

namespace partalign {

/// The alignments a blivet DiskLabel holds, in sectors.
struct BlivetAlignments {
  SectorAlignment optimal;
  SectorAlignment minimal;
  int64_t sector_size = 512;
};

/// From libparted's view of the device: optimum and minimum, each intersected with the label's
/// partition alignment, which libparted leaves at "any" for GPT and msdos
/// (ped_disk_get_partition_alignment), so they are parted's unchanged.
BlivetAlignments BlivetAlignmentsOf(const PartedModel& parted);

/// DiskLabel.get_alignment(size): the optimal alignment; from 1.16 the minimal one for a size
/// below the optimal grain, and an error ("requested size cannot be aligned") below the minimal
/// grain.
Result<SectorAlignment> BlivetGetAlignment(const BlivetAlignments& a, const ToolVersion& version,
                                           std::optional<uint64_t> size_bytes = {});

/// DiskLabel.get_end_alignment(): the start alignment moved back one sector (offset - 1).
SectorAlignment BlivetEndAlignment(const SectorAlignment& start);

/// align_size_for_disklabel(): the size rounded up to a multiple of the grain - taken as a
/// number of *bytes* (Size(alignment.grainSize)), not sectors; what allocate_partitions() passes
/// on.
uint64_t BlivetAlignSize(const BlivetAlignments& a, const ToolVersion& version,
                         uint64_t size_bytes);

/// get_free_regions(align=True): a free region's length cut down to whole grains.
int64_t BlivetAlignFreeRegionLength(int64_t length, int64_t grain_sectors, bool align);

struct BlivetGeometry {
  int64_t start = 0;
  int64_t end = 0;
  int64_t length() const { return end - start + 1; }
};

/// add_partition(disklabel, free, type, size, start, end): with no start, the aligned sector
/// nearest the free region's start (plus one grain for a logical partition), then the end
/// aligned up; an explicit start/end is used as given.
Result<BlivetGeometry> BlivetAddPartition(const BlivetAlignments& a, const ToolVersion& version,
                                          int64_t free_first, int64_t free_last,
                                          std::optional<uint64_t> size_bytes,
                                          std::optional<int64_t> start = {},
                                          std::optional<int64_t> end = {}, bool logical = false);

/// Anaconda on a fresh label of a disk with this topology, with libparted `parted_version`.
struct BlivetPrediction {
  ToolVersion version;
  ToolEra era;
  SectorAlignment optimal;
  SectorAlignment minimal;
  /// A first partition of `first_size_bytes` (allocate_partitions: size aligned, then
  /// add_partition in the fresh label's free region).
  std::optional<uint64_t> first_start;
  std::optional<uint64_t> second_start;
  /// Where a 1 MiB partition (the BIOS boot partition of Anaconda's GPT layouts) starts.
  std::optional<uint64_t> small_first_start;
  std::string error;
  std::vector<std::string> reasons;
  std::string key_reason;
};

Result<BlivetPrediction> PredictBlivet(const Topology& topology, const ToolVersion& version,
                                       const ToolVersion& parted_version, LabelType label,
                                       uint64_t first_size_bytes);

/// The size a growing request ("the rest") starts from: Anaconda's and blivet-gui's new
/// partition with grow=True and a size of 1 MiB.
inline constexpr uint64_t kBlivetGrowBaseBytes = 1024 * 1024;

/// blivet's do_partitioning() for these requests on a fresh label (Anaconda's custom
/// partitioning): the fixed-size requests sorted larger first, a growing one ("the rest", base
/// kBlivetGrowBaseBytes) last (partition_compare); each size rounded up to the grain taken as
/// bytes (align_size_for_disklabel), put in the smallest free region that holds it (a growing
/// request: the largest) by add_partition(); then grow_partitions() lays the free region's
/// partitions out again back to back from its aligned start, each end aligned down, the
/// growing one taking what is left up to the region's aligned end. Partitions are numbered as
/// parted numbers them: in the order they are added (by start when a request grows). A DOS
/// layout of four or more partitions: blivet makes the fourth an extended partition
/// (get_next_partition_type), which is not modelled.
LayoutPrediction BlivetLayoutPrediction(const Topology& topology, const ToolVersion& version,
                                        const ToolVersion& parted_version,
                                        const LayoutRequest& request);

}  // namespace partalign
