// SPDX-License-Identifier: GPL-3.0-or-later
// `partalign report`: one self-contained page about one disk - probe and its warnings, what each
// partitioner will do there and why (explain), every partition's verdicts (audit), the plan
// with an SVG disk map before and after (partitions against the grain and physical-sector
// boundaries, the moves drawn), optionally a benchmark's heatmap and the comparison with a
// snapshot (verify). As HTML (inline CSS and SVG, a Content-Security-Policy that forbids every
// external load, no script) or Markdown (the same sections, the text disk map). Pure: the CLI
// gathers the values (src/cli/commands/report.cc), this renders them. Everything read from the
// disk (partition names, labels, paths) is untrusted and escaped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partalign/bench/bench_report.h"
#include "partalign/layout/audit.h"
#include "partalign/layout/layout_preview.h"
#include "partalign/layout/partition_table.h"
#include "partalign/layout/plan.h"
#include "partalign/layout/plan_render.h"
#include "partalign/migrate/snapshot.h"
#include "partalign/migrate/verify_report.h"
#include "partalign/tools/explain_report.h"
#include "partalign/topology/device.h"
#include "partalign/topology/topology_check.h"

namespace partalign {

/// The colours of the disk map; a test finds them in a browser's screenshot.
inline constexpr const char* kMapAlignedColour = "#2166ac";
inline constexpr const char* kMapMisalignedColour = "#e66101";
inline constexpr const char* kMapFreeColour = "#eeeeee";
inline constexpr const char* kMapMoveColour = "#7b3294";

/// A partition as one row of a strip draws it. x and width are in pixels from the left end of
/// the bar (0 .. kMapBarWidth), clipped to the strip.
struct MapBox {
  uint32_t partition = 0;
  double x = 0;
  double width = 0;
  bool container = false;  ///< a DOS extended partition: an outline around its logical ones
  bool aligned = true;     ///< its start is on the plan's alignment
  std::string name;        ///< the GPT name (untrusted; escaped when drawn)
  std::string title;       ///< the tooltip: "partition 1 'legacy': start 63 (misaligned)"
};

/// A partition whose start changes: its place in the before row and in the after row.
struct MapMove {
  uint32_t partition = 0;
  double before_x = 0;  ///< start in the before row (pixels)
  double after_x = 0;   ///< start in the after row
  double before_width = 0;
  double after_width = 0;
};

/// One strip of the map: the bytes [from, to) drawn twice, before and after the plan.
struct MapStrip {
  std::string caption;
  uint64_t from_bytes = 0;
  uint64_t to_bytes = 0;
  std::vector<MapBox> before;
  std::vector<MapBox> after;
  std::vector<MapMove> moves;
  /// Grain boundaries (1 MiB unless the topology or --grain says otherwise, shifted by the
  /// alignment offset): pixel and label ("2 MiB"). In the overview, every how many grains one is
  /// drawn is said in the caption.
  std::vector<std::pair<double, std::string>> grain_ticks;
  /// Physical-sector boundaries, drawn when they are at least a few pixels apart.
  std::vector<double> physical_ticks;
  /// Logical-sector boundaries (close-ups of disks whose physical sector is larger).
  std::vector<double> logical_ticks;
};

/// The width of a strip's bars in pixels.
inline constexpr double kMapBarWidth = 920;

/// The whole-disk overview, then one strip per detail window of the plan (the text map's,
/// DetailWindows), then, when the physical sector is larger than the logical one and too fine
/// to see in a window, a close-up of each changed start against physical and logical sectors.
std::vector<MapStrip> BuildDiskMap(const Plan& plan, const PartitionTable& table);

/// The strips as one inline SVG (with a legend): rects carry data-part, data-row and
/// data-state ("aligned", "misaligned", "container") and a <title>.
std::string DiskMapSvg(const std::vector<MapStrip>& strips);

/// What the page shows. Sections without their value are left out (bench, verify) or say why
/// (plan_error).
struct DiskReport {
  std::string target;
  DeviceInfo device;
  std::vector<TopologyFinding> findings;
  std::string assumed_profile;  ///< --assume's profile name, or empty
  PartitionTable table;
  ExplainReport explain;
  /// Where every partitioner and installer would put this table's partitions on a fresh label
  /// (RequestOfTable; explain --layout's table); nullopt for a table without partitions.
  std::optional<LayoutPreview> layouts;
  AuditReport audit;
  std::optional<Plan> plan;
  std::string plan_error;  ///< why there is no plan
  /// The command that writes the plan as a file (the Markdown page's "Applying it").
  PlanFileAdvice plan_advice;
  /// What would align the partitions the plan cannot (WayText, way_through.h); empty when it
  /// aligns every one.
  std::vector<std::string> way_through;
  /// report --make-room: what the room search took (MakeRoomLines: which partition gives how
  /// many MiB, with what tool and why, or why none can), as plan --make-room says it; empty
  /// without --make-room.
  std::vector<std::string> made_room;
  /// The partitions that hold a hibernated system, and what to do (docs/used-map.md,
  /// "Hibernation is a refusal"): one line each, in the audit's section.
  std::vector<std::string> hibernation;
  std::optional<BenchReport> bench;
  std::string bench_source;  ///< "a short run of `partalign bench`" or the --bench-json file
  std::optional<VerifyReport> verify;
  Snapshot snapshot;  ///< what verify compared with (when `verify` is set)
  std::string snapshot_path;
};

/// The HTML page (one file; nothing external).
std::string ReportHtml(const DiskReport& report);

/// The same sections as Markdown, the disk map as the text map (DiskMap).
std::string ReportMarkdown(const DiskReport& report);

}  // namespace partalign
