// SPDX-License-Identifier: GPL-3.0-or-later
// What GNU parted / libparted does on a given topology: its minimum and optimum alignment
// (`-a minimal|optimal`), where `mkpart` places a partition on a fresh label, whether it
// prints "not properly aligned for best performance", and what `align-check` answers.
// Restated from parted's source (libparted/arch/linux.c, device.c, cs/natmath.c,
// cs/constraint.c, disk.c, labels/gpt.c, labels/dos.c, unit.c, parted/parted.c); see
// alignment-heuristics.md §2 and docs/explain.md. No upstream code is copied.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "partalign/tools/tool_version.h"
#include "partalign/topology/device.h"
#include "partalign/topology/topology.h"
#include "partalign/util/result.h"

namespace partalign {

/// parted's `-a` mode. `none` and `cylinder` are not modelled (no device alignment).
enum class PartedMode { kOptimal, kMinimal };

std::string_view ToString(PartedMode mode);  ///< "optimal", "minimal"

/// libparted's PedAlignment: the sectors offset + k * grain.
struct SectorAlignment {
  int64_t offset_sectors = 0;
  int64_t grain_sectors = 1;
  bool operator==(const SectorAlignment&) const = default;
};

/// What libparted knows about the device (PedDevice plus the libblkid topology it keeps).
struct PartedDevice {
  int64_t sector_size = 512;       ///< dev->sector_size
  int64_t phys_sector_size = 512;  ///< dev->phys_sector_size
  int64_t length_sectors = 0;      ///< dev->length
  /// False for image files (parted never probes them) and when libblkid returns no topology.
  bool has_topology = false;
  uint64_t minimum_io_size = 0;  ///< blkid_topology_get_minimum_io_size
  uint64_t optimal_io_size = 0;  ///< blkid_topology_get_optimal_io_size
  uint64_t alignment_offset = 0;
  /// dev->bios_geom: a block device gets 1 + logical/512 sectors per track and 255 heads
  /// (_device_probe_geometry, libparted/arch/linux.c), an image file 32 and 4 (init_file). The
  /// msdos label keeps one track at the start of the disk and of the extended partition.
  int64_t bios_sectors = 2;
  int64_t bios_heads = 255;
};

/// parted's view of a disk at one version: the two alignments and why.
struct PartedModel {
  PartedDevice device;
  ToolVersion version;
  ToolEra era;
  SectorAlignment minimum;
  SectorAlignment optimum;
  std::vector<std::string> device_reasons;
  std::vector<std::string> minimum_reasons;
  std::vector<std::string> optimum_reasons;

  const SectorAlignment& For(PartedMode mode) const {
    return mode == PartedMode::kOptimal ? optimum : minimum;
  }
  const std::vector<std::string>& ReasonsFor(PartedMode mode) const {
    return mode == PartedMode::kOptimal ? optimum_reasons : minimum_reasons;
  }
};

/// Builds parted's view of `topology` (an image file when origin is kDefault, otherwise a
/// block device reporting these values). Fails for versions before 2.2 and for topologies that
/// give a zero grain (an I/O size below the sector size: libparted would divide by zero).
Result<PartedModel> MakePartedModel(const Topology& topology, const ToolVersion& version);

/// A position typed on parted's command line ("0%", "1MiB", "1MB", "2048s", "-1s"): the target
/// sector and the range parted accepts around it (ped_unit_parse_custom).
struct PartedPosition {
  int64_t sector = 0;
  int64_t range_start = 0;
  int64_t range_end = 0;
  bool iec = false;  ///< KiB/MiB/GiB/TiB
};

/// Parses `text` as parted `version` does on `device` (ped_unit_parse_custom); mkpart applies
/// the IEC end adjustment of parted >= 3.1 (`_adjust_end_if_iec`) itself (parted_disk.h).
Result<PartedPosition> ParsePartedPosition(const PartedModel& model, std::string_view text);

/// What `parted DEV align-check TYPE N` answers for partition N starting at `start_sector`.
struct AlignCheckOutcome {
  bool aligned = false;
  /// Interactive output: "1 aligned" or "1 not aligned: 2048s % 65535s != 0s" (the arithmetic
  /// since parted 3.3). In script mode (-s) parted prints nothing and exits 0 or 1.
  std::string output;
  int script_exit_status = 0;
};

AlignCheckOutcome PredictAlignCheck(const PartedModel& model, PartedMode mode, int partition,
                                    int64_t start_sector);

/// libparted's ped_alignment_align_up/down/nearest() inside the sectors [first, last]
/// (cs/natmath.c): the aligned sector at or after / at or before / nearest `sector` (a tie goes
/// to the lower one), moved by whole grains into the range; nullopt when none lies in it.
/// blivet (pyparted) places partitions with these.
std::optional<int64_t> PedAlignUp(const SectorAlignment& align, int64_t first, int64_t last,
                                  int64_t sector);
std::optional<int64_t> PedAlignDown(const SectorAlignment& align, int64_t first, int64_t last,
                                    int64_t sector);
std::optional<int64_t> PedAlignNearest(const SectorAlignment& align, int64_t first, int64_t last,
                                       int64_t sector);

/// ped_alignment_is_aligned() with a geometry: `sector` lies in [first, last] and
/// (sector - offset) % grain == 0.
bool PedIsAligned(const SectorAlignment& align, int64_t first, int64_t last, int64_t sector);

/// The free region of a fresh label, as ped_disk_get_free_space_regions lists it: GPT after the
/// entry array up to the backup array, msdos after the first track (1 + logical/512 sectors on a
/// block device, 32 on an image file: _device_probe_geometry, init_file). These and the Ped*
/// functions above live in parted_disk.cc, beside the partition list they share code with.
struct PartedRegion {
  int64_t first = 0;
  int64_t last = -1;
};
PartedRegion PartedFreshFreeRegion(const PartedModel& model, LabelType label);

/// parted's name for a label: "gpt", "msdos".
std::string_view PartedLabelName(LabelType label);

}  // namespace partalign
