// SPDX-License-Identifier: GPL-3.0-or-later
// `explain --layout SPEC`: where every tool of ToolViews() would put each partition of a layout,
// beside partalign's own placement (what `plan --layout SPEC` makes), with the gaps each leaves
// and what each prints. The JSON key `layout_predictions` and the human table (docs/explain.md,
// docs/output.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "partalign/layout/layout_spec.h"
#include "partalign/layout/partition_table.h"
#include "partalign/tools/layout_prediction.h"
#include "partalign/topology/topology.h"

namespace partalign {

/// The request the tools are asked: the spec's label and sizes (a size in sectors counted in
/// `sector_size`-byte sectors).
LayoutRequest RequestOf(const LayoutSpec& spec, uint64_t sector_size);

/// The request that remakes `table` on a fresh label: its label and each partition's size in
/// the order of their starts (a DOS extended partition left out: the tools add their own);
/// nullopt for a table with no partition or a label the tools do not write.
std::optional<LayoutRequest> RequestOfTable(const PartitionTable& table);

/// partalign's placement of `spec` on `topology` (MakeLayout on RecommendAlignment()), as a
/// prediction of the tool "partalign".
LayoutPrediction PartalignPlacement(const LayoutSpec& spec, const Topology& topology);

struct LayoutPreview {
  LayoutRequest request;
  Topology topology;
  /// The tools of ToolViews(), then partalign.
  std::vector<LayoutPrediction> predictions;
};

LayoutPreview PreviewLayout(const LayoutSpec& spec, const Topology& topology,
                            const ToolVersions& versions);

/// partalign's own command in `preview` names `target` (as a shell word) where every tool's
/// command says DEV: it only prints a plan, so it is advice to paste, while the tools' commands
/// write the disk and stay descriptions.
void NameTarget(LayoutPreview& preview, const std::string& target);

/// The tools of ToolViews() alone (the partitioners, then the installers), for a request (the
/// planner adds its own placement).
LayoutPreview PreviewRequest(const LayoutRequest& request, const Topology& topology,
                             const ToolVersions& versions);

/// A free run of sectors a prediction leaves, before a partition or after the last one.
struct LayoutGap {
  uint64_t start_sector = 0;
  uint64_t end_sector = 0;  ///< inclusive
  bool operator==(const LayoutGap&) const = default;
};

/// The unused runs of at least one sector between the label's first usable sector (the
/// partalign/tools values for GPT: 34 or 6; DOS: 1) and each partition, between consecutive
/// partitions at the same level (inside the extended partition: after its first sector, the
/// EBR), and after the last partition up to the end of the usable area.
std::vector<LayoutGap> GapsOf(const LayoutPrediction& prediction, const LayoutRequest& request,
                              const Topology& topology);

/// What is wrong with a layout a prediction shows: one line per partition that overlaps another
/// of its level, lies outside the label's usable area, or (logical) outside the extended one.
/// No model makes such a layout (layout_preview_property_test.cc); should one ever, the views
/// say so under the table ("makes a broken table: ...") instead of showing it silently.
std::vector<std::string> LayoutFaults(const LayoutPrediction& prediction,
                                      const LayoutRequest& request, const Topology& topology);

/// `layout_predictions`: a list of {tool, command, partitions: [{number, kind, start_sector,
/// end_sector, size_bytes, aligned}], gaps: [{start_sector, end_sector}], omitted: [{number,
/// modelled, reason}], faults (LayoutFaults), warnings, error, reasons}. `aligned` is partalign's
/// verdict (RecommendAlignment) on the start; `omitted` the partitions of the layout an installer
/// skips or that its model does not place (empty for the partitioners).
nlohmann::json LayoutPredictionsJson(const LayoutPreview& preview);

/// Rows of the human table: TOOL, NR, KIND, START, END, SIZE, GAP-BEFORE, ALIGNED; a tool that
/// places nothing gets one row saying why, an omitted partition a row that says "skipped" or
/// "not modelled" instead of numbers.
std::vector<std::string> LayoutPreviewColumns();
std::vector<std::vector<std::string>> LayoutPreviewRows(const LayoutPreview& preview);

/// The lines under the table: each tool's command and input, warnings, omitted partitions and
/// error.
std::vector<std::string> LayoutPreviewLines(const LayoutPreview& preview);

}  // namespace partalign
