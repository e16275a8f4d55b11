// SPDX-License-Identifier: GPL-3.0-or-later
// Where each partitioner would put every partition of a whole layout (`explain --layout`, the
// planner's `p` view), and the one list of tools the views show (ToolViews()): adding a tool -
// an installer, another partitioner - is one entry there.
//
// Each tool is asked the way people ask it (the command is part of the prediction):
//   parted-mib      parted -s -a optimal DEV mklabel L mkpart primary 1MiB 257MiB ... 100%
//   parted-percent  the same with every boundary in whole percent of the disk, 0% ... 100%
//   sfdisk          label: L, then size=256MiB lines (no start), the last without a size
//   sgdisk          sgdisk -o -n 0:0:+256M ... -n 0:0:0 (GPT only)
//   systemd-repart  definitions with SizeMinBytes= = SizeMaxBytes=, the last without (GPT only)
// A DOS layout of more than four partitions gets what each tool needs for logical
// partitions: the fourth slot becomes an extended partition over the rest of the disk holding
// partitions 5 and up (sfdisk `type=Ex`; parted `mkpart extended` and `mkpart logical`, each
// logical one starting 1 MiB after the previous boundary in MiB units, for its EBR).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "partalign/tools/tool_verdicts.h"
#include "partalign/tools/tool_version.h"
#include "partalign/topology/device.h"
#include "partalign/topology/topology.h"

namespace partalign {

/// A layout as the tools are asked for it: sizes in order, the last one may be "the rest".
struct LayoutRequest {
  LabelType label = LabelType::kGpt;
  /// nullopt: the rest of the disk (only the last partition).
  std::vector<std::optional<uint64_t>> sizes_bytes;
  bool operator==(const LayoutRequest&) const = default;
};

enum class PlacedKind { kPrimary, kExtended, kLogical };

/// "primary", "extended", "logical".
std::string_view ToString(PlacedKind kind);

struct PlacedPartition {
  uint32_t number = 0;
  PlacedKind kind = PlacedKind::kPrimary;
  uint64_t start_sector = 0;
  uint64_t end_sector = 0;  ///< inclusive
  bool operator==(const PlacedPartition&) const = default;
};

/// A partition of the request that a prediction does not place, and why: the tool skips it
/// (`modelled`: the model knows the tool leaves it out), or partalign does not know where the
/// tool would put it (not modelled). Every partition of a request is either placed, omitted
/// with a reason, or after the one where the tool fails (`error`).
struct OmittedPartition {
  uint32_t number = 0;  ///< the partition's place in the request, 1-based
  bool modelled = false;
  std::string reason;
  bool operator==(const OmittedPartition&) const = default;
};

/// What one tool does with the layout.
struct LayoutPrediction {
  std::string tool;  ///< "parted-mib", "parted-percent", "sfdisk", "sgdisk", "systemd-repart"
  /// How the tool is asked: the command line, then its input (script lines, definitions).
  std::vector<std::string> command;
  /// The partitions the tool leaves on the disk, in order of their starts. sfdisk, sgdisk and
  /// systemd-repart write nothing when they fail; parted keeps those made before the failing
  /// command.
  std::vector<PlacedPartition> partitions;
  /// What the tool prints about alignment (parted's warning, fdisk -l's physical-boundary
  /// warning, sgdisk -v's cautions).
  std::vector<std::string> warnings;
  /// Why the tool fails; empty when it does not.
  std::string error;
  std::vector<std::string> reasons;
  /// Partitions of the request left out, each with its reason (installers only).
  std::vector<OmittedPartition> omitted;
};

/// What a verdict is about: one partition among all those of a table.
struct VerdictInput {
  Topology topology;
  uint64_t disk_sectors = 0;
  uint32_t number = 0;
  uint64_t start_sector = 0;
  uint64_t end_sector = 0;
  /// Every partition's start (gdisk infers its alignment from them).
  std::vector<uint64_t> all_starts;
};

/// One tool as the views list it.
struct ToolView {
  std::string id;    ///< "parted", "fdisk", "gdisk", "systemd-repart"
  std::string name;  ///< short, for a column header
  /// The tool's verdict on a partition; empty when the tool checks nothing of the kind.
  std::function<ToolVerdict(const VerdictInput&)> verdict;
  /// Where the tool would place a layout (one prediction per way of asking it); empty when
  /// there is no model.
  std::function<std::vector<LayoutPrediction>(const Topology&, const ToolVersions&,
                                              const LayoutRequest&)>
      place;
  /// An installer (installer_layout.h): its placement is a model of the installer's
  /// partitioning library, checked by the installer sweep (KPMcore, blivet) and the upstream
  /// cases rather than by the layout sweep's real tools.
  bool installer = false;
};

/// Every tool the views show, in the order they show them: the partitioners, then the
/// installers.
const std::vector<ToolView>& ToolViews();

/// The placement predictions of every tool in ToolViews() that has a model, the installers
/// included unless `with_installers` is false.
std::vector<LayoutPrediction> PredictLayouts(const Topology& topology, const ToolVersions& versions,
                                             const LayoutRequest& request,
                                             bool with_installers = true);

}  // namespace partalign
