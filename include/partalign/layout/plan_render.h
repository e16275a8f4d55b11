// SPDX-License-Identifier: GPL-3.0-or-later
// Renderings of a plan, all from the same model: rows for the human table, the disk map
// (partitions drawn against 1 MiB boundaries, before and after), Markdown, and the new table
// as an sfdisk script that sfdisk accepts as it is. The JSON rendering is the plan file
// itself (PlanToJson).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "partalign/layout/partition_table.h"
#include "partalign/layout/plan.h"
#include "partalign/util/result.h"

namespace partalign {

/// Column headings and rows of the action table (human text): one row per partition.
std::vector<std::string> PlanColumns();
std::vector<std::vector<std::string>> PlanRows(const Plan& plan);

/// One line describing the disk, the table and the alignment the plan is for.
std::string PlanHeadline(const Plan& plan);

/// A partition as the disk maps draw it. Sectors are logical sectors, ends inclusive.
struct MapExtent {
  uint32_t number = 0;
  uint64_t start = 0;
  uint64_t end = 0;
  bool container = false;  ///< a DOS extended partition, drawn around its logical ones
  bool operator==(const MapExtent&) const = default;
};

/// The partitions before and after the plan, as the text map (DiskMap) and the SVG map
/// (partalign/report/report_render.h) draw them: the table's partitions at their old places,
/// then at the places the plan gives them (or a fresh layout's partitions).
struct MapViews {
  std::vector<MapExtent> before;
  std::vector<MapExtent> after;
};
MapViews MapExtents(const Plan& plan, const PartitionTable& table);

/// A stretch of the disk the maps show in detail: [from, to) in bytes, on grain boundaries,
/// around the starts that change or cannot be aligned; `why` names them.
struct MapWindow {
  uint64_t from = 0;
  uint64_t to = 0;
  std::vector<std::string> why;
};

/// The detail windows of a plan, in disk order: one per changed (or impossible) start, or one
/// per end of a long move, merged while they overlap and span at most 4 grains.
std::vector<MapWindow> DetailWindows(const Plan& plan, const PartitionTable& table);

/// The disk map: an overview of the whole disk before and after (scaled), then, for each
/// partition whose start changes or cannot be aligned, its start drawn against the grain
/// boundaries at 32 cells per grain. `table` is the table the plan was made from. At most
/// `max_details` detail views; a last line says how many were left out.
std::vector<std::string> DiskMap(const Plan& plan, const PartitionTable& table,
                                 size_t max_details = 8);

/// How a reader of a rendered plan gets it as a file `partalign apply` accepts.
struct PlanFileAdvice {
  /// The command that writes this very plan to `file` ("partalign plan --grain 4M -o
  /// plan.json disk.img"); empty when `how` says instead how to get it.
  std::string command;
  /// What to do when no command makes it ("export it from the planner: e, then a name ending
  /// in .json").
  std::string how;
  /// The plan file the advice names for `partalign apply`.
  std::string file = "plan.json";
  /// --assume and --sector-size as the person gave them to the command that made the plan:
  /// apply needs the same (ApplyCommand falls back to the plan's own values when both are empty).
  std::string assume;
  std::optional<std::string> sector_size;
};

/// The plan as a Markdown document (headline, summary, action table, disk map, and how to
/// apply it: `advice`).
std::string RenderPlanMarkdown(const Plan& plan, const PartitionTable& table,
                               const PlanFileAdvice& advice);

/// The complete new table as an sfdisk script: label, label-id, first-lba/last-lba (GPT,
/// those of the existing header), sector size, and every partition with start, size, type,
/// uuid, name, attrs or bootable. Comments say when partitions need their data moved first
/// (by `partalign apply` on this plan's file), since writing the table alone would not move
/// it. Fails when the
/// plan does not match `table` (an action for a partition the table lacks).
Result<std::string> RenderSfdiskScript(const Plan& plan, const PartitionTable& table);

/// A boundary's label on the maps' rulers: whole MiB stay exact at any size ("1313 MiB", not
/// "1.28 GiB"), anything else as FormatSize.
std::string MapBoundaryLabel(uint64_t bytes);

/// The partition map symbol of a partition number: 1-9, then a-z, A-Z, then '#'.
char PartitionSymbol(uint32_t number);

}  // namespace partalign
