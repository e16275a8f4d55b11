// SPDX-License-Identifier: GPL-3.0-or-later
// What Calamares and its partitioning library KPMcore do: KPMcore's sector alignment (2048
// sectors; 1 MiB in logical sectors from 25.12), its isAligned() check, which logs "Partition
// ... is not properly aligned" for every partition of a scanned disk, and where Calamares'
// automatic partitioning starts (1 MiB on BIOS, 2 MiB on UEFI, 16 MiB on ARM, whatever the
// topology). Restated from src/core/partitionalignment.cpp, partitiontable.cpp and
// plugins/sfdisk/sfdiskbackend.cpp of KDE/kpmcore and
// src/modules/partition/core/PartitionActions.cpp of calamares/calamares; no upstream code is
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

/// PartitionAlignment::sectorAlignment(): 2048 sectors, divided by logical/512 from 25.12.
uint64_t KpmcoreSectorAlignment(const ToolVersion& version, uint64_t logical_sector_size);

/// One partition as KPMcore scans it.
struct KpmcorePartition {
  uint32_t number = 0;
  uint64_t first_sector = 0;
  uint64_t last_sector = 0;
  bool logical = false;
  bool extended = false;
};

/// What KPMcore's sfdisk backend decides about a scanned msdos table before 24.08
/// (PartitionTable::isSectorBased): true ("msdos_sectorbased") when no fewer partitions start on
/// a multiple of the sector alignment than on a cylinder (255 x 63 sectors); always true for
/// other labels and from 24.08.
bool KpmcoreIsSectorBased(const ToolVersion& version, LabelType label, uint64_t logical_sector_size,
                          const std::vector<KpmcorePartition>& partitions);

/// PartitionAlignment::isAligned() for one partition, with the warnings it logs.
struct KpmcoreCheck {
  bool aligned = true;
  int64_t first_delta = 0;
  int64_t last_delta = 0;
  std::vector<std::string> messages;
};

/// `sector_based` is KpmcoreIsSectorBased() for the table (before 24.08 a cylinder table
/// measures a start at the first track, 63, and logical partitions from the track).
/// `node` names the partition in the message ("/dev/sda1").
KpmcoreCheck KpmcoreIsAligned(const ToolVersion& version, uint64_t logical_sector_size,
                              LabelType label, bool sector_based, const KpmcorePartition& partition,
                              const std::string& node);

/// Calamares' firmware: the gap its automatic partitioning leaves before the first partition.
enum class CalamaresFirmware { kBios, kEfi, kArm };

/// doAutopartition(): the first sector (1 MiB on BIOS, 2 MiB on UEFI, 16 MiB on ARM, in
/// logical sectors); the partitions follow one another with sizes in bytes / logical sector.
uint64_t CalamaresFirstSector(CalamaresFirmware firmware, uint64_t logical_sector_size);

/// A partition size as Calamares' PartitionLayout gives it (PartitionSize::toSectors through
/// Calamares::bytesToSectors, utils/Units.h): the bytes rounded up to whole sectors, then up to
/// whole MiB, in sectors; no other grain (CreateLayoutsTests::testFixedSizePartition: 5 MiB
/// stays 5 MiB).
uint64_t CalamaresSizeSectors(uint64_t size_bytes, uint64_t logical_sector_size);

/// doAutopartition()'s last sector for the layout: the disk's last sector minus 66 on GPT
/// ("allowing for secondary GPT using 66 sectors"), the last sector on msdos; no swap.
uint64_t CalamaresLastSector(LabelType label, uint64_t disk_sectors);

/// Calamares' erase-disk install with a `partitionLayout` of these sizes (the rest as "100%"):
/// PartitionLayout::createPartitions() from the firmware's first free sector (UEFI for GPT, BIOS
/// for msdos) to CalamaresLastSector(), each partition right after the previous one, sizes as
/// CalamaresSizeSectors(), cut to what is left, a partition of no sectors skipped; KPMcore
/// creates each with exactly those sectors (its sfdisk backend writes `start= size=`). On UEFI
/// Calamares puts its own EFI system partition first: it is partition 1 of such a layout. A DOS
/// layout of more than four partitions: every layout partition is primary in Calamares, so
/// partitions 5 and up are not modelled.
/// On GPT the label KPMcore's sfdisk writes has libfdisk's usable area for this topology (its
/// first LBA follows a large optimal I/O), and `sfdisk --append` refuses a partition outside it.
/// On msdos the sfdisk KPMcore runs (`sfdisk --append`, util-linux `util_linux_version`) refuses a
/// new primary partition when no gap of a libfdisk grain is left before, between or after the
/// primaries (dos_add_partition(): "Impossible to create another primary partition"), whatever
/// start it is given: the row fails there.
LayoutPrediction CalamaresLayoutPrediction(const Topology& topology, const ToolVersion& version,
                                           const ToolVersion& util_linux_version,
                                           const LayoutRequest& request);

/// Calamares with KPMcore on a fresh disk: GPT on UEFI, msdos on BIOS (its defaults).
struct KpmcorePrediction {
  ToolVersion version;
  ToolEra era;
  uint64_t alignment_sectors = 0;
  uint64_t first_start_efi = 0;   ///< GPT, the EFI system partition
  uint64_t first_start_bios = 0;  ///< msdos
  uint64_t second_start_efi = 0;
  uint64_t second_start_bios = 0;
  /// KPMcore's own warning for a partition starting at 1 MiB (none when 1 MiB is aligned).
  std::optional<std::string> warning_at_1mib;
  std::vector<std::string> reasons;
  std::string key_reason;
};

Result<KpmcorePrediction> PredictKpmcore(const Topology& topology, const ToolVersion& version,
                                         uint64_t first_size_bytes);

}  // namespace partalign
