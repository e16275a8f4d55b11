// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/interactive/planner_render.h"

#include <algorithm>

#include <fmt/format.h>

#include "partalign/layout/layout_preview.h"
#include "partalign/layout/layout_spec.h"
#include "partalign/layout/plan_render.h"
#include "partalign/topology/topology_check.h"
#include "partalign/util/text_wrap.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// The 1 MiB tick view: this many MiB either side of the selected start, at this many cells
// per MiB (64 KiB a cell).
constexpr uint64_t kTickSpanMiB = 2;
constexpr uint64_t kCellsPerMiB = 16;
constexpr size_t kMaxWarnings = 2;
constexpr size_t kMapIndent = 6;
// Help lines: the description starts after the key column.
constexpr size_t kHelpIndent = 11;
// Page lines that wrap continue this much further in than they start.
constexpr size_t kPageHanging = 4;
// What ends a footer line that holds less than its text (x shows the selected row in full).
constexpr std::string_view kMoreMarker = " ... (x: all)";
// The columns of the partition list a narrow terminal drops first, in this order.
constexpr size_t kMinListRows = 3;

// Text never reaches the terminal's last column: what is drawn there would be a cut word (and
// curses cannot write the last cell of the last line). A line longer than that is a bug the
// tests see (tests/cli/interactive/planner_screens_tmux_test.cc).
size_t TextWidth(size_t width) { return width > 1 ? width - 1 : 1; }

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
  const size_t cells = TextWidth(width) > kMapIndent + 2 ? TextWidth(width) - kMapIndent - 2 : 1;
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
  const uint64_t lbs = s.shown_topology().logical_sector_size;
  const std::string where = fmt::format(" sector {} = {} + {} bytes", Sector(at, lbs),
                                        FormatSize(at / kMiB * kMiB), at % kMiB);
  // The ticks begin up to kTickSpanMiB whole MiB before the start, fewer when the caret and
  // the words after it would not fit the width otherwise (a start far into a large disk has a
  // long sector number): the caret line is never cut (docs/interactive.md).
  uint64_t span = kTickSpanMiB;
  while (span > 0 &&
         kMapIndent + (at - std::min(at, span * kMiB) / kMiB * kMiB) / cell + 1 + where.size() >
             TextWidth(width)) {
    --span;
  }
  const uint64_t from = at > span * kMiB ? (at - span * kMiB) / kMiB * kMiB : 0;
  const uint64_t to = std::min(disk, at + kTickSpanMiB * kMiB);
  std::string ticks, mark;
  for (uint64_t b = from; b < to && ticks.size() + kMapIndent < TextWidth(width); b += cell) {
    ticks += b % kMiB == 0 ? '|' : SymbolAt(m.layout(), b);
    mark += at >= b && at < b + cell ? '^' : ' ';
  }
  lines.push_back(fmt::format("{:<{}}{}", "1MiB", kMapIndent, ticks));
  lines.push_back(fmt::format("{:<{}}{}{}", "", kMapIndent,
                              mark.substr(0, mark.find_last_not_of(' ') + 1), where));
  return lines;
}

std::vector<std::string> VerdictNames() {
  std::vector<std::string> names;
  for (const ToolView& v : ToolViews()) {
    if (v.verdict) names.push_back(v.name);
  }
  return names;
}

// The partition list as cells: one column per field, one per tool with a verdict; laid out
// for the terminal's width by ListLines.
struct ListColumn {
  std::string head;
  bool right = false;
  enum class Role { kKeep, kEnd, kKind, kTool, kTools } role = Role::kKeep;
};

struct ListTable {
  std::vector<ListColumn> columns;
  std::vector<std::vector<std::string>> rows;  ///< one per PlannerRow, cells per column
};

ListTable MakeListTable(const PlannerScreen& s, const std::vector<PlannerRow>& rows) {
  using Role = ListColumn::Role;
  ListTable t;
  t.columns = {{"NR", true},    {"KIND", false, Role::kKind},
               {"START", true}, {"END", true, Role::kEnd},
               {"SIZE", true},  {"TYPE"},
               {"CHANGE"},      {"ALIGNED"}};
  const std::vector<std::string> names = VerdictNames();
  for (const std::string& n : names) t.columns.push_back({n, false, Role::kTool});
  t.columns.push_back({"TOOLS", false, Role::kTools});
  const PlannerModel& m = s.model();
  const Topology& topo = s.shown_topology();
  const uint64_t lbs = topo.logical_sector_size;
  const Alignment shown = RecommendAlignment(topo).alignment;
  for (const PlannerRow& row : rows) {
    std::vector<std::string> cells(t.columns.size());
    if (row.free) {
      cells[1] = "free";
      cells[2] = Sector(row.start_bytes, lbs);
      cells[3] = EndSector(row.end_bytes, lbs);
      cells[4] = FormatSize(row.end_bytes - row.start_bytes);
      t.rows.push_back(std::move(cells));
      continue;
    }
    const PlannedPartition& p = m.layout().partitions.at(row.index);
    cells[0] = std::to_string(p.number);
    cells[1] = std::string(ToString(p.kind));
    cells[2] = Sector(p.start_bytes, lbs);
    cells[3] = EndSector(p.end_bytes(), lbs);
    cells[4] = FormatSize(p.size_bytes);
    cells[5] = PartitionTypeName(m.layout().label, p.type).substr(0, 8);
    cells[6] = m.ChangeOf(p).text;
    if (p.kind == PartitionKind::kExtended) {
      // A container of the logical partitions' table entries, no data: nothing to align
      // (plan leaves its start where it is), so never NO or WARN.
      for (size_t c = 7; c < cells.size(); ++c) cells[c] = "-";
      t.rows.push_back(std::move(cells));
      continue;
    }
    cells[7] = shown.IsAligned(p.start_bytes) ? "yes" : "NO";
    const std::vector<ToolVerdict> verdicts = m.Verdicts(row.index, topo);
    size_t warnings = 0;
    for (size_t i = 0; i < verdicts.size() && i < names.size(); ++i) {
      cells[8 + i] = verdicts[i].ok ? "ok" : "WARN";
      warnings += !verdicts[i].ok;
    }
    cells.back() = warnings == 0 ? "ok" : fmt::format("{} WARN", warnings);
    t.rows.push_back(std::move(cells));
  }
  return t;
}

// The header and the rows of `t`, each at most `width` characters: every tool's column when
// they fit, else one TOOLS column counting the warnings, then without END, then without KIND.
std::vector<std::string> ListLines(const ListTable& t, size_t width) {
  using Role = ListColumn::Role;
  std::vector<size_t> widths(t.columns.size());
  for (size_t c = 0; c < t.columns.size(); ++c) {
    widths[c] = t.columns[c].head.size();
    for (const auto& r : t.rows) widths[c] = std::max(widths[c], r[c].size());
  }
  auto total = [&](const std::vector<bool>& shown) {
    size_t sum = 0, n = 0;
    for (size_t c = 0; c < widths.size(); ++c) {
      if (shown[c]) sum += widths[c], ++n;
    }
    return sum + (n > 0 ? n - 1 : 0);
  };
  std::vector<bool> shown(t.columns.size(), true);
  for (size_t c = 0; c < t.columns.size(); ++c) shown[c] = t.columns[c].role != Role::kTools;
  for (Role drop : {Role::kTool, Role::kEnd, Role::kKind}) {
    if (total(shown) <= width) break;
    for (size_t c = 0; c < t.columns.size(); ++c) {
      if (t.columns[c].role == drop) shown[c] = false;
      if (drop == Role::kTool && t.columns[c].role == Role::kTools) shown[c] = true;
    }
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t c = 0; c < cells.size(); ++c) {
      if (!shown[c]) continue;
      if (!out.empty()) out += ' ';
      out += t.columns[c].right ? fmt::format("{:>{}}", cells[c], widths[c])
                                : fmt::format("{:<{}}", cells[c], widths[c]);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
  };
  std::vector<std::string> head;
  for (const ListColumn& c : t.columns) head.push_back(c.head);
  std::vector<std::string> out{line(head)};
  for (const auto& r : t.rows) out.push_back(line(r));
  return out;
}

const PlannerRow* SelectedRowOf(const PlannerScreen& s, const std::vector<PlannerRow>& rows) {
  return rows.empty() ? nullptr : &rows[std::min(s.selected(), rows.size() - 1)];
}

std::string FreeText(const PlannerRow& row) {
  if (row.inside_extended) {
    return fmt::format("free space: {} from {}; {}", FormatSize(row.end_bytes - row.start_bytes),
                       FormatSize(row.start_bytes), kInsideExtendedText);
  }
  return fmt::format("free space: {} from {} (n makes a partition here)",
                     FormatSize(row.end_bytes - row.start_bytes), FormatSize(row.start_bytes));
}

// What the row of a DOS extended partition says instead of verdicts.
std::string ExtendedText(const PlannedPartition& p) {
  return fmt::format(
      "{}: the extended partition: a container of the logical partitions' table entries, with "
      "no data of its own; its start is not aligned or checked (the logical partitions are)",
      p.number);
}

// The verdict messages of the selected partition, on one line.
std::string DetailText(const PlannerScreen& s) {
  std::vector<PlannerRow> rows = s.rows();
  const PlannerRow* row = SelectedRowOf(s, rows);
  if (row == nullptr) return "";
  if (row->free) return FreeText(*row);
  const PlannedPartition& p = s.model().layout().partitions.at(row->index);
  if (p.kind == PartitionKind::kExtended) return ExtendedText(p);
  std::vector<ToolVerdict> verdicts = s.model().Verdicts(row->index, s.shown_topology());
  std::vector<std::string> names = VerdictNames();
  std::string text = fmt::format("{}:", p.number);
  for (size_t i = 0; i < verdicts.size(); ++i) {
    text += fmt::format(" {}: {};", names[i],
                        verdicts[i].ok && verdicts[i].message.empty() ? "ok" : verdicts[i].message);
  }
  return text;
}

struct HelpKey {
  std::string_view key;
  std::string_view text;
};

std::vector<std::string> HelpLines(const PlannerModel& m) {
  static constexpr HelpKey kKeys[] = {
      {"Up/Down", "select a partition or free space"},
      {"n",
       "new partition in the selected free space: size (512M, 1.5G, 25%, or a number of "
       "sectors as sfdisk reads it; Enter = all), then type (Enter = linux)"},
      {"d",
       "delete the selected partition; on a disk whose partitions hold data, d on one of them "
       "gives up its contents instead (as plan --discard N): it stays, empty, and A may use its "
       "space"},
      {"r", "resize it; a start off the grain moves to the grain (data moves are counted)"},
      {"m",
       "move it, its size kept: to a start you type (50M, or a number of sectors) or, with "
       "Enter, to the nearest aligned start with room for it; a partition that may hold "
       "data moves whole, with its data"},
      {"A",
       "align everything: every partition where partalign plan puts it, with plan's data "
       "moves and reasons"},
      {"M",
       "make room as plan --make-room: which partition gives how many MiB, with what tool and "
       "why; y takes it and aligns everything"},
      {"t", "set its type (Enter = linux); refused at once for a partition that holds data"},
      {"x",
       "explain the selected line in full: its place, its change and plan's reason, every "
       "tool's verdict, what w would do"},
      {"a",
       "cycle the assumed topology through the profiles (what if this disk sat behind the "
       "JMicron bridge, on SATA, was 4Kn...): the verdicts follow, the plan does not"},
      {"p",
       "where each partitioner and installer (YaST, Anaconda, Calamares, Ubuntu's) would put "
       "this layout, every partition; Up/Down scroll long pages"},
      {"u", "undo the last edit"},
      {"e",
       "export: a path ending in .json (a plan file for partalign apply), .sfdisk (an sfdisk "
       "script) or .md (a Markdown report)"},
      {"w",
       "apply: type yes; apply's safety contract holds (backup, in-use refusal, "
       "verification, the kernel told)"},
      {"q",
       "quit without writing (asks first when the layout has changes not written or "
       "exported); Ctrl-C too"},
      {"?", "this help"},
  };
  std::vector<std::string> lines{"partalign plan --interactive: keys", ""};
  // What plan cannot align, and the way through, first (x on the partition says the same).
  const std::vector<std::string> ways = m.WayThroughLines();
  if (!ways.empty()) {
    lines.insert(lines.end(), ways.begin(), ways.end());
    lines.push_back("");
  }
  for (const HelpKey& k : kKeys) {
    lines.push_back(fmt::format("  {:<{}}{}", k.key, kHelpIndent - 2, k.text));
  }
  lines.push_back("");
  lines.push_back(
      "Every start and size snaps to partalign's grain. ALIGNED is partalign's verdict, the "
      "other columns each tool's (parted align-check opt, fdisk -l, sgdisk -v, Calamares' "
      "KPMcore isAligned) on the topology shown; on a narrow terminal one TOOLS column counts "
      "their warnings, and x shows them.");
  return lines;
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

// What `w` would do with the layout, or why it cannot.
std::string WriteText(const PlannerModel& m) {
  Result<Plan> plan = m.MakePlan();
  if (!plan) return "not applicable: " + plan.error().message;
  if (plan->layout) {
    return fmt::format("w writes a new {} table",
                       plan->layout->label == LabelType::kGpt ? "GPT" : "DOS");
  }
  for (const PlanAction& a : plan->actions) {
    if (a.shrink) {
      return fmt::format(
          "w shrinks partition {} first (as apply --make-room), then moves and resizes the "
          "existing partitions",
          a.partition);
    }
  }
  return "w moves and resizes the existing partitions";
}

std::string ChangesLine(const PlannerScreen& s) {
  return fmt::format("changes: {}; {}", s.model().ChangeSummary(), WriteText(s.model()));
}

// `x` on a partition: partalign's verdict on its start, then each tool's.
void VerdictLines(const PlannerScreen& s, const PlannerRow& row, std::vector<std::string>* out) {
  const PlannerModel& m = s.model();
  const Topology& topo = s.shown_topology();
  const PlannedPartition& p = m.layout().partitions.at(row.index);
  std::vector<std::string>& lines = *out;
  const Alignment grain = RecommendAlignment(topo).alignment;
  const uint64_t past = p.start_bytes >= grain.offset_bytes
                            ? (p.start_bytes - grain.offset_bytes) % grain.grain_bytes
                            : p.start_bytes;
  lines.push_back(fmt::format(
      "aligned (partalign, grain {}{}): {}: the start is byte {}, {} bytes past a boundary",
      FormatSize(grain.grain_bytes),
      grain.offset_bytes ? fmt::format(", offset {} bytes", grain.offset_bytes) : "",
      grain.IsAligned(p.start_bytes) ? "yes" : "NO", p.start_bytes, past));
  lines.push_back(fmt::format("each tool's verdict on {}{}:", TopologyText(topo),
                              s.profile_name().empty() ? "" : " (" + s.profile_name() + ")"));
  const std::vector<std::string> names = VerdictNames();
  const std::vector<ToolVerdict> verdicts = m.Verdicts(row.index, topo);
  for (size_t i = 0; i < verdicts.size() && i < names.size(); ++i) {
    lines.push_back(fmt::format("  {}: {}", names[i],
                                verdicts[i].ok && verdicts[i].message.empty()
                                    ? "ok"
                                    : (verdicts[i].ok ? "ok: " : "WARN: ") + verdicts[i].message));
  }
}

// `x`: the selected line in full, each item a line the page wraps.
std::vector<std::string> ExplainLines(const PlannerScreen& s) {
  const PlannerModel& m = s.model();
  const Topology& topo = s.shown_topology();
  const uint64_t lbs = topo.logical_sector_size;
  std::vector<PlannerRow> rows = s.rows();
  const PlannerRow* row = SelectedRowOf(s, rows);
  std::vector<std::string> lines;
  if (row == nullptr) {
    lines.push_back("No usable space on this disk.");
  } else if (row->free) {
    lines.push_back(fmt::format("Free space, sectors {}-{}", Sector(row->start_bytes, lbs),
                                EndSector(row->end_bytes, lbs)));
    lines.push_back("");
    lines.push_back(FreeText(*row));
  } else {
    const PlannedPartition& p = m.layout().partitions.at(row->index);
    const Partition* e = p.existing ? m.disk().table.Find(*p.existing) : nullptr;
    lines.push_back(fmt::format("Partition {} ({}, type {})", p.number, ToString(p.kind),
                                PartitionTypeName(m.layout().label, p.type)));
    lines.push_back("");
    lines.push_back(fmt::format("in this layout: sectors {}-{} of {} bytes, {}",
                                Sector(p.start_bytes, lbs), EndSector(p.end_bytes(), lbs), lbs,
                                FormatSize(p.size_bytes)));
    if (e != nullptr) {
      const uint64_t ss = m.disk().table.sector_size;
      lines.push_back(fmt::format("on the disk now: sectors {}-{} of {} bytes, {}; it {}",
                                  e->start_sector, e->end_sector(), ss,
                                  FormatSize(e->size_sectors * ss), MayHoldDataText(e->contents)));
    } else {
      lines.push_back("on the disk now: not there (a new partition)");
    }
    const PartitionChange c = m.ChangeOf(p);
    lines.push_back(fmt::format("change: {}{}", c.text, c.reason.empty() ? "" : ": " + c.reason));
    if (e != nullptr && m.plan_actions()) {
      for (const PlanAction& a : *m.plan_actions()) {
        if (a.partition != e->number) continue;
        lines.push_back(fmt::format("partalign plan: {}: sectors {}-{}: {}", ToString(a.kind),
                                    a.new_start_sector, a.new_end_sector, a.reason));
        if (a.kind != ActionKind::kImpossible) continue;
        const std::vector<std::string> ways = m.WayThroughLines();
        lines.insert(lines.end(), ways.begin(), ways.end());
        if (ways.empty()) lines.push_back("way through: none that partalign can offer here");
      }
    }
    if (p.kind == PartitionKind::kExtended) {
      lines.push_back(ExtendedText(p));
    } else {
      VerdictLines(s, *row, &lines);
    }
  }
  lines.push_back("");
  lines.push_back(fmt::format("changes: {}", m.ChangeSummary()));
  lines.push_back(WriteText(m));
  if (!s.message().empty()) lines.push_back("last message: " + s.message());
  return lines;
}

// A page's lines wrapped to `width`: help lines continue under the description, the others
// further in than they start.
std::vector<std::string> WrapPage(const std::vector<std::string>& lines, size_t width, bool help) {
  std::vector<std::string> out;
  for (const std::string& l : lines) {
    const size_t lead = std::min(l.find_first_not_of(' '), l.size());
    const size_t indent = help && lead == 2 ? kHelpIndent : lead + kPageHanging;
    for (std::string& w : WrapWords(l, width, indent)) out.push_back(std::move(w));
  }
  return out;
}

}  // namespace

std::string PlannerKeysLine() {
  return "n new  d delete  r resize  m move  A align all  t type  x explain  a "
         "topology  "
         "p placement  u undo  e export  w write  M make room  q quit  ? help";
}

PlannerFrame DrawPlannerTooSmall(size_t width, size_t height) {
  PlannerFrame f;
  const std::string text = fmt::format(
      "The planner needs {}x{}; this terminal is {}x{}. Enlarge it, or press q to quit.",
      kPlannerMinWidth, kPlannerMinHeight, width, height);
  for (std::string& l : WrapWords(text, TextWidth(width))) {
    if (f.lines.size() < height) f.lines.push_back(Fit(std::move(l), width));
  }
  while (f.lines.size() < height) f.lines.push_back(Fit("", width));
  return f;
}

PlannerFrame DrawPlanner(const PlannerScreen& s, size_t width, size_t height) {
  PlannerFrame f;
  const size_t text_width = TextWidth(width);
  auto push = [&](std::string line) { f.lines.push_back(Fit(std::move(line), width)); };
  auto push_wrapped = [&](std::string_view text, size_t indent = 0) {
    for (std::string& l : WrapWords(text, text_width, indent)) push(std::move(l));
  };
  if (s.mode() == PlannerMode::kHelp || s.mode() == PlannerMode::kPlacement ||
      s.mode() == PlannerMode::kExplain) {
    const std::vector<std::string> lines =
        WrapPage(s.mode() == PlannerMode::kHelp        ? HelpLines(s.model())
                 : s.mode() == PlannerMode::kPlacement ? PlacementLines(s)
                                                       : ExplainLines(s),
                 text_width, s.mode() == PlannerMode::kHelp);
    const std::string scroll_hint = "Lines 1-1 of 1: Up/Down scroll; any other key returns.";
    const size_t hint_lines = WrapWords(scroll_hint, text_width).size();
    const size_t room = height > hint_lines ? height - hint_lines : 1;
    const size_t last_first = lines.size() > room ? lines.size() - room : 0;
    const size_t first = std::min(s.page_line(), last_first);
    for (size_t i = first; i < lines.size() && i < first + room; ++i) push(lines[i]);
    const std::string hint =
        lines.size() > room
            ? fmt::format("Lines {}-{} of {}: Up/Down scroll; any other key returns.", first + 1,
                          std::min(lines.size(), first + room), lines.size())
            : "Any key returns to the list.";
    std::vector<std::string> hint_wrapped = WrapWords(hint, text_width);
    while (f.lines.size() + hint_wrapped.size() < height) push("");
    for (std::string& l : hint_wrapped) push(std::move(l));
    return f;
  }
  const PlannerModel& m = s.model();
  const DeviceInfo& dev = m.disk().device;
  const Topology& base = dev.topology;
  // What is edited first, then the path (a long one wraps).
  push_wrapped(
      fmt::format("{}{} table{}: {}, {} ({} sectors of {} bytes)",
                  m.editing_existing() ? "" : "new ",
                  m.layout().label == LabelType::kGpt ? "GPT" : "DOS",
                  m.editing_existing() ? " on disk" : "", dev.identity.path,
                  FormatSize(base.size_bytes), base.size_sectors(), base.logical_sector_size),
      2);
  std::string topo = fmt::format("topology {} ({}), grain {}", TopologyText(base),
                                 ToString(base.origin), FormatSize(m.alignment().grain_bytes));
  if (!s.profile_name().empty()) {
    topo +=
        fmt::format("; verdicts as if {}: {}", s.profile_name(), TopologyText(s.shown_topology()));
  }
  push_wrapped(topo, 2);
  DeviceInfo shown = dev;
  shown.topology = s.shown_topology();
  std::vector<TopologyFinding> findings = CheckDevice(shown);
  // On a short terminal the warnings take one line each (x and probe say them in full).
  const bool tall = height >= kPlannerMinHeight + 8;
  for (size_t i = 0; i < findings.size() && i < kMaxWarnings; ++i) {
    for (std::string& l : WrapWordsAtMost("warning: " + findings[i].message, text_width,
                                          tall ? 2 : 1, " ... (probe)", 2)) {
      push(std::move(l));
    }
  }
  for (std::string& l : MapLines(s, width)) push(std::move(l));
  push("");
  std::vector<PlannerRow> rows = s.rows();
  const std::vector<std::string> list = ListLines(MakeListTable(s, rows), text_width);
  push(list[0]);

  // The footer: the selected row's verdicts, the changes, the message, the keys or the
  // prompt, each wrapped; on a short terminal each gets fewer lines (x shows all).
  const size_t per_item = tall ? 3 : 2;
  std::vector<std::string> footer;
  auto add = [&](std::string_view text, size_t max_lines) {
    for (std::string& l : WrapWordsAtMost(text, text_width, max_lines, kMoreMarker, 2)) {
      footer.push_back(std::move(l));
    }
  };
  add(DetailText(s), per_item);
  add(ChangesLine(s), per_item);
  add(s.message(), per_item);
  std::vector<std::string> last;
  if (s.mode() == PlannerMode::kPrompt) {
    const std::string prompt = s.PromptText() + s.input();
    last = WrapWords(prompt, text_width, 2);
  } else {
    last = WrapWords(PlannerKeysLine(), text_width);
  }
  // Keep at least a few rows of the list: drop footer lines from the detail first.
  while (footer.size() + last.size() + f.lines.size() + kMinListRows > height &&
         footer.size() > 3) {
    footer.erase(footer.begin() + 1);
  }
  const size_t used = f.lines.size() + footer.size() + last.size();
  const size_t room = height > used ? height - used : 1;
  const size_t selected = rows.empty() ? 0 : std::min(s.selected(), rows.size() - 1);
  const size_t first = selected >= room ? selected - room + 1 : 0;
  for (size_t i = first; i < rows.size() && i < first + room; ++i) {
    if (i == selected) f.highlight = static_cast<int>(f.lines.size());
    push(list[i + 1]);
  }
  if (rows.empty()) push("   (no usable space)");
  while (f.lines.size() + footer.size() + last.size() < height) push("");
  for (std::string& l : footer) push(std::move(l));
  if (s.mode() == PlannerMode::kPrompt) {
    f.cursor_line = static_cast<int>(f.lines.size() + last.size() - 1);
    // After the prompt's trailing space when nothing is typed yet.
    const size_t column = last.back().size() + (s.input().empty() ? 1 : 0);
    f.cursor_column = static_cast<int>(std::min(column, text_width));
  }
  for (std::string& l : last) push(std::move(l));
  f.lines.resize(std::min(f.lines.size(), height));
  return f;
}

}  // namespace partalign
