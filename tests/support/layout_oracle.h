// SPDX-License-Identifier: GPL-3.0-or-later
// The real partitioners on a whole layout: runs what a LayoutPrediction says each tool is asked
// (parted's and sgdisk's command lines, sfdisk's script, systemd-repart's definitions) on a loop
// device under the topology simulator (topology_shim.c) and reads back every partition (sfdisk
// -J) and what the tool says about alignment (parted's warnings, fdisk -l, sgdisk -v). Used by
// the layout sweep (tests/tools/layout_sweep.cc) and the explain --layout device tests.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "partalign/tools/layout_prediction.h"
#include "partalign/topology/topology.h"

namespace partalign::test {

struct ToolLayout {
  /// The tool exited 0.
  bool ok = false;
  /// What the disk holds afterwards, in order of their starts.
  std::vector<PlacedPartition> partitions;
  std::vector<std::string> warnings;
  /// The tool's last error line when it failed.
  std::string error;
};

/// Wipes `device`, runs `prediction.tool` as the prediction says, reads back. `scratch` is a
/// directory for systemd-repart's definitions.
ToolLayout RunToolLayout(const std::string& device, const Topology& topology,
                         const LayoutRequest& request, const LayoutPrediction& prediction,
                         const std::string& scratch);

/// One element of explain's `layout_predictions` (docs/output.md) read back, its partitions in
/// order of their starts.
LayoutPrediction LayoutPredictionFromJson(const nlohmann::json& j);

/// An installer's row (yast, anaconda, calamares, ubuntu): no real tool of the layout sweep
/// runs it (the installer sweep checks the ones whose libraries run here).
bool IsInstallerTool(const std::string& tool);

/// The partitions of `device` as sfdisk -J lists them (GPT: all primary; DOS: number 4 with an
/// extended type is the extended partition, 5 and up are logical).
std::vector<PlacedPartition> ReadPlacedPartitions(const std::string& device);

}  // namespace partalign::test
