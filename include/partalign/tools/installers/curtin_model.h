// SPDX-License-Identifier: GPL-3.0-or-later
// What Ubuntu's installer back end, curtin, does with a storage config: partition 1 at 1 MiB in
// logical sectors, then (config v1) each partition right after the previous one, or (config v2,
// curtin >= 22.1) each default start rounded up to 1 MiB in an sfdisk script; logical
// partitions 1 MiB after the previous one. It never reads the topology beyond the logical
// sector size. Restated from curtin/commands/block_meta.py (partition_handler) and
// block_meta_v2.py (GPTPartTable, DOSPartTable) of canonical/curtin; no upstream code is copied.
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

/// One `type: partition` action of a storage config, in config order.
struct CurtinPartitionAction {
  uint32_t number = 0;
  uint64_t size_bytes = 0;
  std::optional<uint64_t> offset_bytes;  ///< v2 only; v1 ignores it
  bool extended = false;                 ///< flag: extended
  bool logical = false;                  ///< flag: logical
};

struct CurtinPlaced {
  uint32_t number = 0;
  uint64_t start_sector = 0;
  uint64_t size_sectors = 0;
  bool operator==(const CurtinPlaced&) const = default;
};

struct CurtinLayout {
  std::vector<CurtinPlaced> partitions;
  /// v2 GPT: the `first-lba:` header written when a start lies below 2048.
  std::optional<uint64_t> first_lba;
  /// The commands (v1) or script lines (v2) curtin issues, for the reasons.
  std::vector<std::string> commands;
};

/// Places the partitions of one disk as curtin `storage_version` 1 or 2 does.
Result<CurtinLayout> PlaceCurtin(int storage_version, LabelType label, uint64_t logical_sector_size,
                                 const std::vector<CurtinPartitionAction>& actions);

/// Ubuntu's installer (subiquity sends storage config v1 unless the kernel command line says
/// subiquity-storage-version=2 or the install is core-boot) on a fresh disk.
struct CurtinPrediction {
  ToolVersion version;
  ToolEra era;
  uint64_t grain_sectors = 0;
  uint64_t first_start = 0;
  uint64_t second_start = 0;
  std::vector<std::string> reasons;
  std::string key_reason;
};

Result<CurtinPrediction> PredictCurtin(const Topology& topology, const ToolVersion& version,
                                       uint64_t first_size_bytes);

/// Ubuntu's installer with these sizes on a fresh disk: subiquity's storage config v1, placed by
/// PlaceCurtin() (partition 1 at 1 MiB, each next one right after the previous one, sizes exact
/// in whole sectors). "The rest" is subiquity's v1 gap (gaps.py find_disk_gaps_v1): from
/// 1 MiB plus each earlier size rounded up to 1 MiB, to the disk's end less 1 MiB on GPT, rounded
/// down to 1 MiB. curtin never checks a size against the disk: a partition past the last usable
/// sector makes `sgdisk --new` (GPT) or `parted mkpart` (msdos) fail, and the partitions before it
/// stay. A DOS layout of four or more partitions: subiquity makes logical ones from the fourth,
/// which is not modelled.
LayoutPrediction CurtinLayoutPrediction(const Topology& topology, const ToolVersion& version,
                                        const LayoutRequest& request);

}  // namespace partalign
