// SPDX-License-Identifier: GPL-3.0-or-later
// explain's section on the tools that place data inside a partition: where `pvcreate` puts a
// PV's data area and `cryptsetup luksFormat` a LUKS payload (LUKS2 and LUKS1) on this topology,
// on the whole disk and inside a partition at partalign's first aligned start, and whether that
// lands aligned (the stack checks' rule: 4 KiB, the physical sector, the I/O sizes). The models
// are partalign/tools/pvcreate_model.h and luks_format_model.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "partalign/tools/stack_tool_version.h"
#include "partalign/topology/topology.h"

namespace partalign {

struct StackToolPrediction {
  std::string tool;  ///< "pvcreate", "cryptsetup-luks2", "cryptsetup-luks1"
  StackTool project = StackTool::kLvm2;
  ToolVersion version;
  VersionSource version_source = VersionSource::kNewestKnown;
  std::string era;
  /// Where the data starts when the tool formats the whole disk.
  std::optional<uint64_t> whole_disk_data_offset_bytes;
  std::optional<bool> whole_disk_aligned;
  /// The partition the second prediction is for: partalign's first start.
  uint64_t partition_start_bytes = 0;
  /// Where the data starts, from the disk's start, when the tool formats that partition (it
  /// sees the partition's own alignment offset).
  std::optional<uint64_t> partition_data_offset_bytes;
  std::optional<bool> partition_aligned;
  std::vector<std::string> reasons;  ///< for the whole disk
  std::string key_reason;
  std::string error;
};

/// pvcreate and cryptsetup (LUKS2, then LUKS1) at `versions` on `topology`.
std::vector<StackToolPrediction> PredictStackTools(const Topology& topology,
                                                   const StackToolVersions& versions);

/// The `stack_predictions` array of explain --json (docs/output.md).
nlohmann::json StackPredictionsJson(const std::vector<StackToolPrediction>& predictions);

/// Rows for the human table: TOOL, VERSION, DISK-DATA, ALIGNED, IN-PARTITION, ALIGNED.
std::vector<std::vector<std::string>> StackPredictionRows(
    const std::vector<StackToolPrediction>& predictions);

/// One sentence per prediction that lands misaligned ("pvcreate will put the PV's data at byte
/// 33553920 of the disk, 3584 bytes past a 4 KiB boundary: ..."), then each tool's reasons.
std::vector<std::string> StackPredictionLines(const std::vector<StackToolPrediction>& predictions);

}  // namespace partalign
