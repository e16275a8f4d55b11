// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/interactive/planner_render.h"

#include <algorithm>

#include <fmt/format.h>

#include "partalign/layout/layout_preview.h"
#include "partalign/layout/layout_spec.h"
#include "partalign/layout/plan_render.h"
#include "partalign/topology/topology_check.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// The 1 MiB tick view: this many MiB either side of the selected start, at this many cells
// per MiB (64 KiB a cell).
constexpr uint64_t kTickSpanMiB = 2;
constexpr uint64_t kCellsPerMiB = 16;
constexpr size_t kMaxWarnings = 2;
constexpr size_t kMapIndent = 6;

std::string Fit(std::string s, size_t width) {
  if (s.size() > width) s.resize(width);
  s.append(width - s.size(), ' ');
  return s;
}

std::string TopologyText(const Topology& t) {
  return fmt::format("{}/{}/{}/{}/{}", t.logical_sector_size, t.physical_sector_size,
                     t.minimum_io_size, t.optimal_io_size, t.alignment_offset);
}

std::string Sector(uint64_t bytes, uint64_t lbs) {
  return bytes % lbs == 0 ? std::to_string(bytes / lbs) : fmt::format("~{}", bytes / lbs);
}

// The last sector of an extent ending (exclusive) at `end_bytes`.
std::string EndSector(uint64_t end_bytes, uint64_t lbs) {
  return end_bytes % lbs == 0 ? std::to_string(end_bytes / lbs - 1)
                              : fmt::format("~{}", end_bytes / lbs);
}

// The character of the byte `at`: the partition holding it, '-' an extended partition's
// space no logical one uses, '.' free.
char SymbolAt(const PlannerLayout& l, uint64_t at) {
  char c = '.';
  for (const PlannedPartition& p : l.partitions) {
    if (at < p.start_bytes || at >= p.end_bytes()) continue;
    if (p.kind == PartitionKind::kExtended) {
      if (c == '.') c = '-';
    } else {
      c = PartitionSymbol(p.number);
    }
  }
  return c;
}

std::vector<std::string> MapLines(const PlannerScreen& s, size_t width) {
  const PlannerModel& m = s.model();
  const uint64_t disk = m.disk_bytes();
  const size_t cells = width > kMapIndent + 2 ? width - kMapIndent - 2 : 1;
  std::string bar;
  for (size_t c = 0; c < cells; ++c) {
    uint64_t mid = static_cast<uint64_t>((static_cast<long double>(c) + 0.5L) * disk / cells);
    bar += SymbolAt(m.layout(), mid);
  }
  std::vector<std::string> lines{fmt::format("{:<{}}[{}]", "map", kMapIndent, bar)};
  // The selected row's start against 1 MiB boundaries.
  std::vector<PlannerRow> rows = s.rows();
  if (rows.empty()) return {lines[0], "", ""};
  const PlannerRow& row = rows[std::min(s.selected(), rows.size() - 1)];
  const uint64_t at = row.start_bytes;
  const uint64_t cell = kMiB / kCellsPerMiB;
  const uint64_t from = at > kTickSpanMiB * kMiB ? (at - kTickSpanMiB * kMiB) / kMiB * kMiB : 0;
  const uint64_t to = std::min(disk, at + kTickSpanMiB * kMiB);
  std::string ticks, mark;
  for (uint64_t b = from; b < to && ticks.size() + kMapIndent < width; b += cell) {
    ticks += b % kMiB == 0 ? '|' : SymbolAt(m.layout(), b);
    mark += at >= b && at < b + cell ? '^' : ' ';
  }
  const uint64_t lbs = s.shown_topology().logical_sector_size;
  lines.push_back(fmt::format("{:<{}}{}", "1MiB", kMapIndent, ticks));
  lines.push_back(fmt::format("{:<{}}{} sector {} = {} + {} bytes", "", kMapIndent,
                              mark.substr(0, mark.find_last_not_of(' ') + 1), Sector(at, lbs),
                              FormatSize(at / kMiB * kMiB), at % kMiB));
  return lines;
}

std::vector<std::string> VerdictNames() {
  std::vector<std::string> names;
  for (const ToolView& v : ToolViews()) {
    if (v.verdict) names.push_back(v.name);
  }
  return names;
}

std::string RowText(const PlannerScreen& s, const PlannerRow& row) {
  const PlannerModel& m = s.model();
  const Topology& t = s.shown_topology();
  const uint64_t lbs = t.logical_sector_size;
  if (row.free) {
    return fmt::format("{:>3} {:<8} {:>12} {:>12} {:>10}", "", "free", Sector(row.start_bytes, lbs),
                       EndSector(row.end_bytes, lbs), FormatSize(row.end_bytes - row.start_bytes));
  }
  const PlannedPartition& p = m.layout().partitions.at(row.index);
  const bool aligned = RecommendAlignment(t).alignment.IsAligned(p.start_bytes);
  std::string line = fmt::format("{:>3} {:<8} {:>12} {:>12} {:>10} {:<8} {:<13} {:<7}", p.number,
                                 std::string(ToString(p.kind)), Sector(p.start_bytes, lbs),
                                 EndSector(p.end_bytes(), lbs), FormatSize(p.size_bytes),
                                 PartitionTypeName(m.layout().label, p.type).substr(0, 8),
                                 m.ChangeOf(p).text.substr(0, 13), aligned ? "yes" : "NO");
  const std::vector<std::string> names = VerdictNames();
  const std::vector<ToolVerdict> verdicts = m.Verdicts(row.index, t);
  for (size_t i = 0; i < verdicts.size() && i < names.size(); ++i) {
    line += fmt::format(" {:<{}}", verdicts[i].ok ? "ok" : "WARN",
                        std::max<size_t>(6, names[i].size()));
  }
  return line;
}

std::string HeaderText() {
  std::string h = fmt::format("{:>3} {:<8} {:>12} {:>12} {:>10} {:<8} {:<13} {:<7}", "NR", "KIND",
                              "START", "END", "SIZE", "TYPE", "CHANGE", "ALIGNED");
  for (const std::string& n : VerdictNames()) h += fmt::format(" {:<6}", n);  // n: 6 at least
  return h;
}

// The verdict messages of the selected partition, on one line.
std::string DetailText(const PlannerScreen& s) {
  std::vector<PlannerRow> rows = s.rows();
  if (rows.empty()) return "";
  const PlannerRow& row = rows[std::min(s.selected(), rows.size() - 1)];
  if (row.free) {
    return fmt::format("free space: {} from {} (n makes a partition here)",
                       FormatSize(row.end_bytes - row.start_bytes), FormatSize(row.start_bytes));
  }
  const PlannedPartition& p = s.model().layout().partitions.at(row.index);
  std::vector<ToolVerdict> verdicts = s.model().Verdicts(row.index, s.shown_topology());
  std::vector<std::string> names = VerdictNames();
  std::string text = fmt::format("{}:", p.number);
  for (size_t i = 0; i < verdicts.size(); ++i) {
    text += fmt::format(" {}: {};", names[i],
                        verdicts[i].ok && verdicts[i].message.empty() ? "ok" : verdicts[i].message);
  }
  return text;
}

std::vector<std::string> HelpLines() {
  return {
      "partalign plan --interactive: keys",
      "",
      "  Up/Down  select a partition or free space",
      "  n        new partition in the selected free space: size (512M, 20G, 25%; Enter = all),",
      "           then type (Enter = linux)",
      "  d        delete the selected partition",
      "  r        resize it; a start off the grain moves to the grain (data moves are counted)",
      "  t        set its type",
      "  a        cycle the assumed topology through the profiles (what if this disk sat behind",
      "           the JMicron bridge, on SATA, was 4Kn...): the verdicts follow, the plan does not",
      "  p        where each partitioner and installer (YaST, Anaconda, Calamares, Ubuntu's)",
      "           would put this layout, every partition; Up/Down scroll long pages",
      "  u        undo the last edit",
      "  e        export: a path ending in .json (a plan file for partalign apply), .sfdisk (an",
      "           sfdisk script) or .md (a Markdown report)",
      "  w        apply: type yes; apply's safety contract holds (backup, in-use refusal,",
      "           verification, the kernel told)",
      "  q        quit without writing",
      "  ?        this help",
      "",
      "Every start and size snaps to partalign's grain. ALIGNED is partalign's verdict, the other",
      "columns each tool's (parted align-check opt, fdisk -l, sgdisk -v, Calamares' KPMcore",
      "isAligned) on the topology shown.",
  };
}

std::vector<std::string> Columns(const std::vector<std::string>& head,
                                 const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths(head.size());
  for (size_t i = 0; i < head.size(); ++i) widths[i] = head[i].size();
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], r[i].size());
    }
  }
  auto line = [&](const std::vector<std::string>& r) {
    std::string s;
    for (size_t i = 0; i < r.size() && i < widths.size(); ++i) {
      s += fmt::format("{:<{}} ", r[i], widths[i]);
    }
    return s;
  };
  std::vector<std::string> out{line(head)};
  for (const auto& r : rows) out.push_back(line(r));
  return out;
}

std::vector<std::string> PlacementLines(const PlannerScreen& s) {
  const PlannerModel& m = s.model();
  LayoutPreview preview = PreviewRequest(m.Request(), s.shown_topology(), s.versions());
  LayoutPrediction mine;
  mine.tool = "planner";
  mine.command.push_back("this layout, as partalign would write it");
  const uint64_t lbs = s.shown_topology().logical_sector_size;
  for (const PlannedPartition& p : m.layout().partitions) {
    mine.partitions.push_back({p.number,
                               p.kind == PartitionKind::kExtended  ? PlacedKind::kExtended
                               : p.kind == PartitionKind::kLogical ? PlacedKind::kLogical
                                                                   : PlacedKind::kPrimary,
                               p.start_bytes / lbs, p.end_bytes() / lbs - 1});
  }
  preview.predictions.push_back(std::move(mine));
  std::vector<std::string> lines{
      fmt::format("Where each tool would put this layout on {}{} (explain --layout):",
                  TopologyText(s.shown_topology()),
                  s.profile_name().empty() ? "" : " (" + s.profile_name() + ")"),
      ""};
  for (std::string& l : Columns(LayoutPreviewColumns(), LayoutPreviewRows(preview))) {
    lines.push_back(std::move(l));
  }
  lines.push_back("");
  for (std::string& l : LayoutPreviewLines(preview)) lines.push_back(std::move(l));
  return lines;
}

std::string ChangesLine(const PlannerScreen& s) {
  const PlannerModel& m = s.model();
  Result<Plan> plan = m.MakePlan();
  std::string what = !plan ? "not applicable: " + plan.error().message
                     : plan->layout
                         ? fmt::format("w writes a new {} table",
                                       plan->layout->label == LabelType::kGpt ? "GPT" : "DOS")
                         : "w moves and resizes the existing partitions";
  return fmt::format("changes: {}; {}", m.ChangeSummary(), what);
}

}  // namespace

std::string PlannerKeysLine() {
  return "n new d del r resize t type a topo p place u undo e export w write q quit ? help";
}

PlannerFrame DrawPlanner(const PlannerScreen& s, size_t width, size_t height) {
  PlannerFrame f;
  auto push = [&](std::string line) { f.lines.push_back(Fit(std::move(line), width)); };
  if (s.mode() == PlannerMode::kHelp || s.mode() == PlannerMode::kPlacement) {
    std::vector<std::string> lines =
        s.mode() == PlannerMode::kHelp ? HelpLines() : PlacementLines(s);
    const size_t room = height > 1 ? height - 1 : 1;
    const size_t last_first = lines.size() > room ? lines.size() - room : 0;
    const size_t first = std::min(s.page_line(), last_first);
    for (size_t i = first; i < lines.size() && i < first + room; ++i) push(lines[i]);
    while (f.lines.size() + 1 < height) push("");
    push(lines.size() > room
             ? fmt::format("Lines {}-{} of {}: Up/Down scroll; any other key returns to the list.",
                           first + 1, std::min(lines.size(), first + room), lines.size())
             : "Any key returns to the list.");
    return f;
  }
  const PlannerModel& m = s.model();
  const DeviceInfo& dev = m.disk().device;
  const Topology& base = dev.topology;
  // What is edited first: a long path is what the terminal cuts.
  push(fmt::format("{}{} table{}: {}, {} ({} sectors of {} bytes)",
                   m.editing_existing() ? "" : "new ",
                   m.layout().label == LabelType::kGpt ? "GPT" : "DOS",
                   m.editing_existing() ? " on disk" : "", dev.identity.path,
                   FormatSize(base.size_bytes), base.size_sectors(), base.logical_sector_size));
  std::string topo = fmt::format("topology {} ({}), grain {}", TopologyText(base),
                                 ToString(base.origin), FormatSize(m.alignment().grain_bytes));
  if (!s.profile_name().empty()) {
    topo +=
        fmt::format("; verdicts as if {}: {}", s.profile_name(), TopologyText(s.shown_topology()));
  }
  push(topo);
  DeviceInfo shown = dev;
  shown.topology = s.shown_topology();
  std::vector<TopologyFinding> findings = CheckDevice(shown);
  for (size_t i = 0; i < findings.size() && i < kMaxWarnings; ++i) {
    push("warning: " + findings[i].message);
  }
  for (std::string& l : MapLines(s, width)) push(std::move(l));
  push("");
  push(HeaderText());
  // Rows, scrolled so that the selected one shows.
  const size_t footer = 4;  // detail, changes, message, status
  const size_t room = height > f.lines.size() + footer ? height - f.lines.size() - footer : 1;
  std::vector<PlannerRow> rows = s.rows();
  const size_t selected = rows.empty() ? 0 : std::min(s.selected(), rows.size() - 1);
  const size_t first = selected >= room ? selected - room + 1 : 0;
  for (size_t i = first; i < rows.size() && i < first + room; ++i) {
    if (i == selected) f.highlight = static_cast<int>(f.lines.size());
    push(RowText(s, rows[i]));
  }
  if (rows.empty()) push("   (no usable space)");
  while (f.lines.size() + footer < height) push("");
  push(DetailText(s));
  push(ChangesLine(s));
  push(s.message());
  if (s.mode() == PlannerMode::kPrompt) {
    std::string prompt = s.PromptText() + s.input();
    f.cursor_line = static_cast<int>(f.lines.size());
    f.cursor_column = static_cast<int>(std::min(prompt.size(), width - 1));
    push(prompt);
  } else {
    push(PlannerKeysLine());
  }
  return f;
}

}  // namespace partalign
