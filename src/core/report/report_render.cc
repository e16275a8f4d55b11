// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/report/report_render.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "partalign/bench/bench_render.h"
#include "partalign/layout/plan_render.h"
#include "partalign/layout/planner.h"
#include "partalign/tools/installers/installer_report.h"
#include "partalign/topology/probe_report.h"
#include "partalign/util/html.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// --- the SVG disk map ------------------------------------------------------------------------

// A partition narrower than this is still drawn this wide (GParted's minimum width), so that a
// small partition on a large disk stays visible.
constexpr double kMinBoxPx = 2;
// Ticks closer than this are not drawn: they would merge into a grey band.
constexpr double kMinTickPx = 4;
// The overview draws at most this many grain boundaries (every 2^k-th one).
constexpr uint64_t kMaxOverviewTicks = 64;
// Labels of grain boundaries are at least this far apart.
constexpr double kMinLabelPx = 64;
// A close-up spans this many physical sectors around a start.
constexpr uint64_t kCloseUpSectors = 16;
// Partition names are cut to this many bytes in the picture (the tables have them whole).
constexpr size_t kMaxNameBytes = 24;
// An estimate of a character's width at the labels' font size, to decide whether a label fits.
constexpr double kCharPx = 6.6;

// Geometry of the SVG, pixels.
constexpr double kLeft = 70;
constexpr double kRight = 10;
constexpr double kLegendHeight = 40;
constexpr double kStripHeight = 150;
constexpr double kCaptionY = 14;
constexpr double kBeforeY = 24;
constexpr double kAfterY = 90;
constexpr double kBarHeight = 26;
constexpr double kTickTop = 20;
constexpr double kTickBottom = 120;
constexpr double kTickLabelY = 134;
constexpr double kPhysicalTickPx = 7;
constexpr double kLogicalTickPx = 4;

// A tick label centred on its tick unless that puts it past an edge of the picture: the last
// ones end at their tick, the first ones begin there (every label inside the viewBox).
const char* TickLabelAnchor(double x, const std::string& label) {
  const double half = static_cast<double>(label.size()) * kCharPx / 2;
  if (kLeft + x + half > kLeft + kMapBarWidth + kRight) return "end";
  if (kLeft + x - half < 0) return "start";
  return "middle";
}

// Names from the disk are cut on a UTF-8 character boundary.
std::string ShortName(const std::string& name) {
  if (name.size() <= kMaxNameBytes) return name;
  size_t cut = kMaxNameBytes;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;
  return name.substr(0, cut) + "...";
}

struct StripContext {
  const Plan& plan;
  const PartitionTable& table;
  const MapViews& views;
  std::map<uint32_t, std::string> names_before;
  std::map<uint32_t, std::string> names_after;
};

double Px(uint64_t bytes, uint64_t from, uint64_t to) {
  return static_cast<double>(bytes - from) / static_cast<double>(to - from) * kMapBarWidth;
}

std::vector<MapBox> Boxes(const StripContext& c, const std::vector<MapExtent>& extents,
                          const std::map<uint32_t, std::string>& names, uint64_t from,
                          uint64_t to) {
  const uint64_t ss = c.plan.disk.logical_sector_size;
  std::vector<MapBox> boxes;
  for (const MapExtent& e : extents) {
    const uint64_t start = e.start * ss;
    const uint64_t end = (e.end + 1) * ss;
    if (end <= from || start >= to) continue;
    MapBox box;
    box.partition = e.number;
    box.container = e.container;
    box.aligned = c.plan.alignment.IsAligned(start);
    box.x = Px(std::max(start, from), from, to);
    box.width = std::max(Px(std::min(end, to), from, to) - box.x, kMinBoxPx);
    box.x = std::min(box.x, kMapBarWidth - box.width);
    if (auto it = names.find(e.number); it != names.end()) box.name = it->second;
    box.title =
        fmt::format("partition {}{}: sectors {}-{}, start {} ({})", e.number,
                    box.name.empty() ? "" : fmt::format(" '{}'", box.name), e.start, e.end, e.start,
                    e.container   ? "extended partition"
                    : box.aligned ? "aligned"
                                  : "misaligned");
    boxes.push_back(std::move(box));
  }
  return boxes;
}

// The boundaries base + k * step (k >= 0, and below base those at base % step) inside
// [from, to].
std::vector<uint64_t> Boundaries(uint64_t base, uint64_t step, uint64_t from, uint64_t to) {
  std::vector<uint64_t> out;
  if (step == 0) return out;
  const uint64_t first = base % step;
  for (uint64_t b = from <= first ? first : first + AlignUp(from - first, step); b <= to;
       b += step) {
    out.push_back(b);
  }
  return out;
}

std::vector<double> Ticks(uint64_t base, uint64_t step, uint64_t from, uint64_t to) {
  std::vector<double> ticks;
  for (uint64_t b : Boundaries(base, step, from, to)) ticks.push_back(Px(b, from, to));
  return ticks;
}

MapStrip Strip(const StripContext& c, std::string caption, uint64_t from, uint64_t to,
               uint64_t grain_step, bool logical_ticks) {
  MapStrip s;
  s.caption = std::move(caption);
  s.from_bytes = from;
  s.to_bytes = to;
  s.before = Boxes(c, c.views.before, c.names_before, from, to);
  s.after = Boxes(c, c.views.after, c.names_after, from, to);
  for (const MapBox& b : s.before) {
    if (b.container) continue;
    auto a = std::find_if(s.after.begin(), s.after.end(),
                          [&](const MapBox& x) { return x.partition == b.partition; });
    if (a == s.after.end()) continue;
    const MapExtent* old_place = nullptr;
    const MapExtent* new_place = nullptr;
    for (const MapExtent& e : c.views.before) old_place = e.number == b.partition ? &e : old_place;
    for (const MapExtent& e : c.views.after) new_place = e.number == b.partition ? &e : new_place;
    if (!old_place || !new_place || old_place->start == new_place->start) continue;
    // Only where the strip shows a start: a partition passing through a window says nothing
    // about its move there.
    const uint64_t ss = c.plan.disk.logical_sector_size;
    auto shown = [&](uint64_t sector) { return sector * ss >= from && sector * ss < to; };
    if (!shown(old_place->start) && !shown(new_place->start)) continue;
    s.moves.push_back({b.partition, b.x, a->x, b.width, a->width});
  }
  double last_label = -kMinLabelPx;
  for (uint64_t b : Boundaries(c.plan.alignment.offset_bytes, grain_step, from, to)) {
    const double x = Px(b, from, to);
    std::string label;
    if (x - last_label >= kMinLabelPx) {
      label = MapBoundaryLabel(b);
      last_label = x;
    }
    s.grain_ticks.emplace_back(x, std::move(label));
  }
  const Topology& t = c.plan.topology;
  const uint64_t logical = c.plan.disk.logical_sector_size;
  const uint64_t physical = std::max(t.physical_sector_size, logical);
  auto fine_enough = [&](uint64_t step) { return Px(from + step, from, to) >= kMinTickPx; };
  if (fine_enough(physical)) {
    s.physical_ticks = Ticks(t.alignment_offset % physical, physical, from, to);
  }
  if (logical_ticks && physical > logical && fine_enough(logical)) {
    s.logical_ticks = Ticks(0, logical, from, to);
  }
  return s;
}

std::string Num(double v) { return fmt::format("{:.1f}", v); }

std::string BoxSvg(const MapBox& b, double y, const char* row) {
  const double x = kLeft + b.x;
  if (b.container) {
    return fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\" "
        "stroke-dasharray=\"4 3\" data-part=\"{}\" data-row=\"{}\" "
        "data-state=\"container\"><title>{}</title></rect>\n",
        Num(x), Num(y - 3), Num(b.width), Num(kBarHeight + 6), b.partition, row,
        XmlEscape(b.title));
  }
  std::string svg = fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"white\" "
      "stroke-width=\"1\" data-part=\"{}\" data-row=\"{}\" data-state=\"{}\"><title>{}</title>"
      "</rect>\n",
      Num(x), Num(y), Num(b.width), Num(kBarHeight),
      b.aligned ? kMapAlignedColour : kMapMisalignedColour, b.partition, row,
      b.aligned ? "aligned" : "misaligned", XmlEscape(b.title));
  std::string label = std::to_string(b.partition);
  if (!b.name.empty()) {
    const std::string named = label + " " + ShortName(b.name);
    if (static_cast<double>(named.size()) * kCharPx + 6 <= b.width) label = named;
  }
  if (static_cast<double>(label.size()) * kCharPx + 4 <= b.width) {
    svg += fmt::format(
        "<text x=\"{}\" y=\"{}\" fill=\"white\" font-size=\"11\" "
        "text-anchor=\"middle\">{}</text>\n",
        Num(x + b.width / 2), Num(y + kBarHeight / 2 + 4), XmlEscape(label));
  }
  return svg;
}

std::string StripSvg(const MapStrip& s, double top) {
  std::string svg = fmt::format(
      "<g data-strip=\"{}-{}\">\n<text x=\"{}\" y=\"{}\" font-size=\"12\" "
      "font-weight=\"bold\">{}</text>\n",
      s.from_bytes, s.to_bytes, Num(kLeft), Num(top + kCaptionY), XmlEscape(s.caption));
  for (const auto& [row, y, boxes] :
       {std::tuple{"before", kBeforeY, &s.before}, std::tuple{"after", kAfterY, &s.after}}) {
    svg += fmt::format(
        "<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\">{}</text>\n"
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#999\"/>\n",
        Num(kLeft - 8), Num(top + y + kBarHeight / 2 + 4), row, Num(kLeft), Num(top + y),
        Num(kMapBarWidth), Num(kBarHeight), kMapFreeColour);
    for (const MapBox& b : *boxes) {
      if (!b.container) svg += BoxSvg(b, top + y, row);
    }
    for (const MapBox& b : *boxes) {
      if (b.container) svg += BoxSvg(b, top + y, row);
    }
    for (double x : s.physical_ticks) {
      svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#555\"/>\n",
                         Num(kLeft + x), Num(top + y), Num(top + y + kPhysicalTickPx));
    }
    for (double x : s.logical_ticks) {
      svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#999\"/>\n",
                         Num(kLeft + x), Num(top + y + kBarHeight - kLogicalTickPx),
                         Num(top + y + kBarHeight));
    }
  }
  for (const MapMove& m : s.moves) {
    const double y1 = top + kBeforeY + kBarHeight;
    const double y2 = top + kAfterY;
    const double bx = kLeft + m.before_x;
    const double ax = kLeft + m.after_x;
    svg += fmt::format(
        "<polygon points=\"{},{} {},{} {},{} {},{}\" fill=\"{}\" fill-opacity=\"0.3\" "
        "data-move=\"{}\"/>\n",
        Num(bx), Num(y1), Num(bx + m.before_width), Num(y1), Num(ax + m.after_width), Num(y2),
        Num(ax), Num(y2), kMapMoveColour, m.partition);
    // The start's arrow, its head a small triangle at the new start.
    svg += fmt::format(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\"/>\n"
        "<polygon points=\"{},{} {},{} {},{}\" fill=\"{}\"/>\n",
        Num(bx), Num(y1), Num(ax), Num(y2 - 6), kMapMoveColour, Num(ax), Num(y2), Num(ax - 4),
        Num(y2 - 8), Num(ax + 4), Num(y2 - 8), kMapMoveColour);
  }
  for (const auto& [x, label] : s.grain_ticks) {
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#222\" stroke-width=\"1\" "
        "stroke-dasharray=\"2 2\"/>\n",
        Num(kLeft + x), Num(top + kTickTop), Num(top + kTickBottom));
    if (!label.empty()) {
      svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"{}\">{}</text>\n",
                         Num(kLeft + x), Num(top + kTickLabelY), TickLabelAnchor(x, label),
                         XmlEscape(label));
    }
  }
  return svg + "</g>\n";
}

std::string LegendSvg() {
  struct Item {
    const char* colour;
    const char* text;
  };
  const Item items[] = {{kMapAlignedColour, "aligned start"},
                        {kMapMisalignedColour, "misaligned start"},
                        {kMapFreeColour, "free space"},
                        {kMapMoveColour, "move (old place to new)"}};
  std::string svg;
  double x = kLeft;
  for (const Item& i : items) {
    svg += fmt::format(
        "<rect x=\"{}\" y=\"8\" width=\"14\" height=\"14\" fill=\"{}\" stroke=\"#999\"/>\n"
        "<text x=\"{}\" y=\"19\" font-size=\"12\">{}</text>\n",
        Num(x), i.colour, Num(x + 18), i.text);
    x += 40 + static_cast<double>(std::string_view(i.text).size()) * kCharPx;
  }
  svg += fmt::format(
      "<text x=\"{}\" y=\"35\" font-size=\"11\">dashed lines: alignment (grain) boundaries; "
      "short ticks: physical sectors; shorter ticks at the bottom: logical sectors</text>\n",
      Num(kLeft));
  return svg;
}

// --- the page --------------------------------------------------------------------------------

const std::vector<std::string>& PredictionColumns() {
  static const std::vector<std::string> columns = {
      "TOOL", "VERSION", "GRAIN", "OFFSET", "FIRST-GPT", "FIRST-DOS", "WARNS-AT-1MIB"};
  return columns;
}

std::vector<std::vector<std::string>> ProbeRows(const DeviceInfo& device) {
  std::vector<std::vector<std::string>> rows;
  for (const ReportField& f : ProbeFields(device)) rows.push_back({f.name, f.value});
  return rows;
}

std::vector<std::string> ProbeWarnings(const DiskReport& r) {
  std::vector<std::string> lines;
  if (!r.assumed_profile.empty()) {
    lines.push_back(fmt::format("assumed topology: profile '{}'", r.assumed_profile));
  }
  for (const TopologyFinding& f : r.findings) lines.push_back("warning: " + f.message);
  return lines;
}

std::vector<std::string> TableFindingLines(const PartitionTable& table) {
  std::vector<std::string> lines;
  for (const TableFinding& f : table.findings) {
    lines.push_back((f.severity == TableSeverity::kNote ? "note: " : "warning: ") + f.message);
  }
  return lines;
}

std::vector<std::string> PlanReasons(const Plan& plan) {
  std::vector<std::string> lines;
  for (const PlanAction& a : plan.actions) {
    lines.push_back(fmt::format("partition {}: {}: {}", a.partition, ToString(a.kind), a.reason));
  }
  return lines;
}

std::vector<std::string> VerifyChangeColumns() {
  return {"FIELD", "BEFORE", "AFTER", "CONSEQUENCE"};
}

std::vector<std::vector<std::string>> VerifyChangeRows(const VerifyReport& v) {
  std::vector<std::vector<std::string>> rows;
  for (const VerifyChange& c : v.changes) {
    rows.push_back({c.field, c.before.dump(), c.after.dump(), c.consequence});
  }
  return rows;
}

// "translate: the table was written for ..." - each action with its reason.
std::vector<std::string> VerifyActionLines(const VerifyReport& v) {
  std::vector<std::string> lines;
  for (size_t i = 0; i < v.actions.size(); ++i) {
    lines.push_back(v.actions[i] +
                    (i < v.action_reasons.size() ? ": " + v.action_reasons[i] : std::string()));
  }
  return lines;
}

std::string SameDiskSentence(const VerifyReport& v) {
  return v.same_disk ? fmt::format("Same disk: yes (matched by {}).", v.matched_by)
                     : "Same disk: no - this is not the disk of the snapshot.";
}

std::string BenchSettingsLine(const BenchReport& b) {
  return fmt::format(
      "Target {} ({}, {}, {}-byte logical sectors); engine {}; {} mode, {} rounds of {:.1f} ms "
      "trials; seed {}; {:.1f} s.",
      b.target.path, b.target.kind, FormatSize(b.target.size_bytes), b.target.logical_sector_size,
      b.settings.engine, b.settings.mode, b.settings.rounds, b.settings.trial_seconds * 1e3,
      b.settings.seed, b.elapsed_seconds);
}

std::string HtmlList(const std::vector<std::string>& items) {
  if (items.empty()) return "";
  std::string html = "<ul>\n";
  for (const std::string& i : items) html += "<li>" + XmlEscape(i) + "</li>\n";
  return html + "</ul>\n";
}

std::string HtmlPre(const std::vector<std::string>& lines) {
  if (lines.empty()) return "";
  std::string html = "<pre>";
  for (const std::string& l : lines) html += XmlEscape(l) + "\n";
  return html + "</pre>\n";
}

std::string HtmlParagraph(const std::string& text, const char* cls = nullptr) {
  return fmt::format("<p{}>{}</p>\n", cls ? fmt::format(" class=\"{}\"", cls) : "",
                     XmlEscape(text));
}

struct Section {
  const char* id;
  const char* title;
};
constexpr Section kMap{"map", "Disk map: before and after the plan"};
constexpr Section kProbe{"probe", "Probe: topology and identity"};
constexpr Section kExplain{"explain", "Explain: what each tool will do here, and why"};
constexpr Section kAudit{"audit", "Audit: every partition's verdicts"};
constexpr Section kPlan{"plan", "Plan: the smallest change that aligns every partition"};
constexpr Section kBench{"bench", "Benchmark"};
constexpr Section kVerify{"verify", "Against the snapshot"};

std::vector<Section> SectionsOf(const DiskReport& r) {
  std::vector<Section> s;
  if (r.plan) s.push_back(kMap);
  // The verdict and what to do first; the detail (probe, explain's long text) after.
  s.insert(s.end(), {kAudit, kPlan, kProbe, kExplain});
  if (r.bench) s.push_back(kBench);
  if (r.verify) s.push_back(kVerify);
  return s;
}

std::string HtmlHeading(const Section& s) {
  return fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n", s.id, s.title);
}

constexpr const char* kReportCss =
    "section { margin-top: 2em; }\n"
    "td, th { text-align: left; }\n"
    "pre { background: #f7f7f7; padding: 0.6em; white-space: pre-wrap; font-size: 0.85em; }\n"
    "nav a { margin-right: 1em; }\n"
    "svg { max-width: 100%; height: auto; }\n";

// --- Markdown --------------------------------------------------------------------------------

// Text from the disk may hold HTML, which Markdown renderers pass through: &, < and > are
// escaped, and '|', which would end a table cell; line breaks would end the row.
std::string MdText(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else if (c == '&' || c == '<' || c == '>') {
      out += XmlEscape(std::string_view(&c, 1));
    } else {
      out += c;
    }
  }
  return out;
}

// Appends "| a | b |" and a newline: one row, each cell escaped. Piece by piece onto the
// document rather than `" " + MdText(cell) + " |"`: no temporary per cell, and GCC 12 at -O3
// reports a false -Wrestrict overlap inside operator+(const char*, std::string&&), which
// prepends to the temporary in place (GCC bug 105329).
void AppendMdRow(std::string& md, const std::vector<std::string>& cells) {
  md += '|';
  for (const std::string& cell : cells) {
    md += ' ';
    md += MdText(cell);
    md += " |";
  }
  md += '\n';
}

std::string MdTable(const std::vector<std::string>& columns,
                    const std::vector<std::vector<std::string>>& rows) {
  std::string md;
  AppendMdRow(md, columns);
  md += '|';
  for (size_t i = 0; i < columns.size(); ++i) md += "---|";
  md += '\n';
  for (const auto& row : rows) AppendMdRow(md, row);
  return md + "\n";
}

std::string MdList(const std::vector<std::string>& items) {
  std::string md;
  for (const std::string& i : items) {
    md += "- ";
    md += MdText(i);
    md += '\n';
  }
  return md.empty() ? md : md + "\n";
}

// A fenced block whose fence is longer than any run of backticks inside, so that no line can
// end it early.
std::string MdCode(const std::vector<std::string>& lines) {
  if (lines.empty()) return "";
  size_t longest = 0;
  for (const std::string& l : lines) {
    size_t run = 0;
    for (char c : l) {
      run = c == '`' ? run + 1 : 0;
      longest = std::max(longest, run);
    }
  }
  const std::string fence(std::max<size_t>(3, longest + 1), '`');
  std::string md = fence + "text\n";
  for (const std::string& l : lines) md += l + "\n";
  return md + fence + "\n\n";
}

// The plan's own Markdown (RenderPlanMarkdown) as a section of this document: its headings one
// level deeper.
std::string Demoted(const std::string& markdown) {
  std::string out;
  bool in_code = false;
  size_t pos = 0;
  while (pos < markdown.size()) {
    size_t end = markdown.find('\n', pos);
    if (end == std::string::npos) end = markdown.size();
    std::string line = markdown.substr(pos, end - pos);
    if (line.rfind("```", 0) == 0) in_code = !in_code;
    if (!in_code && line.rfind("#", 0) == 0) line = "##" + line;
    out += line + "\n";
    pos = end + 1;
  }
  return out;
}

}  // namespace

std::vector<MapStrip> BuildDiskMap(const Plan& plan, const PartitionTable& table) {
  const uint64_t ss = plan.disk.logical_sector_size;
  const uint64_t disk_bytes = plan.disk.size_bytes;
  const Alignment& a = plan.alignment;
  std::vector<MapStrip> strips;
  if (disk_bytes == 0 || ss == 0 || a.grain_bytes == 0) return strips;
  const MapViews views = MapExtents(plan, table);
  StripContext c{plan, table, views, {}, {}};
  for (const Partition& p : table.partitions) {
    c.names_before[p.number] = p.name;
    if (!plan.layout) c.names_after[p.number] = p.name;
  }
  if (plan.layout) {
    for (const LayoutPartition& p : plan.layout->partitions) c.names_after[p.partition] = p.name;
  }

  uint64_t step = a.grain_bytes;
  while (disk_bytes / step > kMaxOverviewTicks) step *= 2;
  strips.push_back(Strip(
      c,
      fmt::format("whole disk, {}; dashed lines every {}", FormatSize(disk_bytes),
                  step == a.grain_bytes ? fmt::format("{} (the alignment)", FormatSize(step))
                                        : fmt::format("{} ({} alignment boundaries)",
                                                      FormatSize(step), step / a.grain_bytes)),
      0, disk_bytes, step, /*logical_ticks=*/false));
  const uint64_t physical = std::max(plan.topology.physical_sector_size, ss);
  bool physical_hidden = false;
  for (const MapWindow& w : DetailWindows(plan, table)) {
    const uint64_t to = std::min(w.to, disk_bytes);
    if (to <= w.from) continue;
    strips.push_back(Strip(c,
                           fmt::format("{} ({} to {})", fmt::join(w.why, "; "),
                                       MapBoundaryLabel(w.from), MapBoundaryLabel(to)),
                           w.from, to, a.grain_bytes, /*logical_ticks=*/false));
    physical_hidden = physical_hidden || strips.back().physical_ticks.empty();
  }
  if (physical > ss && physical_hidden) {
    for (const PlanAction& x : plan.actions) {
      const bool moved = x.new_start_sector != x.old_start_sector;
      if (!moved && x.kind != ActionKind::kImpossible) continue;
      const Partition* p = table.Find(x.partition);
      if (p && p->kind == PartitionKind::kExtended) continue;
      const uint64_t start = x.old_start_sector * ss;
      const uint64_t centre = AlignDown(start, physical);
      const uint64_t half = kCloseUpSectors / 2 * physical;
      const uint64_t from = centre > half ? centre - half : 0;
      const uint64_t to = std::min(from + kCloseUpSectors * physical, disk_bytes);
      if (to <= from) continue;
      strips.push_back(Strip(
          c,
          fmt::format("partition {}: old start {} against {}-byte physical sectors (offset {} in "
                      "one)",
                      x.partition, x.old_start_sector, physical,
                      (start + physical - plan.topology.alignment_offset % physical) % physical),
          from, to, a.grain_bytes, /*logical_ticks=*/true));
    }
  }
  return strips;
}

std::string DiskMapSvg(const std::vector<MapStrip>& strips) {
  const double width = kLeft + kMapBarWidth + kRight;
  const double height = kLegendHeight + static_cast<double>(strips.size()) * kStripHeight + 10;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" role=\"img\" "
      "aria-label=\"disk map before and after the plan\">\n"
      "<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n",
      Num(width), Num(height));
  svg += LegendSvg();
  for (size_t i = 0; i < strips.size(); ++i) {
    svg += StripSvg(strips[i], kLegendHeight + static_cast<double>(i) * kStripHeight);
  }
  return svg + "</svg>\n";
}

std::string ReportHtml(const DiskReport& r) {
  std::string body;
  body += HtmlParagraph(AuditSummary(r.audit), "summary");
  if (r.plan) body += HtmlParagraph(PlanSummary(*r.plan));
  body += "<nav>";
  for (const Section& s : SectionsOf(r)) {
    body += fmt::format("<a href=\"#{}\">{}</a>", s.id, s.title);
  }
  body += "</nav>\n";

  // The picture first: what is misaligned, and where the plan puts it.
  if (r.plan) {
    body += HtmlHeading(kMap);
    body += DiskMapSvg(BuildDiskMap(*r.plan, r.table));
    body += "</section>\n";
  }

  body += HtmlHeading(kAudit);
  body += HtmlParagraph(AuditSummary(r.audit));
  if (!r.audit.partitions.empty()) body += HtmlTable(AuditColumns(), AuditRows(r.audit));
  body += HtmlPre(AuditDetails(r.audit));
  body += HtmlList(TableFindingLines(r.table));
  body += HtmlList(r.hibernation);
  body += "</section>\n";

  body += HtmlHeading(kPlan);
  if (r.plan) {
    body += HtmlParagraph(PlanHeadline(*r.plan));
    body += HtmlTable(PlanColumns(), PlanRows(*r.plan));
    body += HtmlList(r.made_room);
    body += HtmlList(PlanReasons(*r.plan));
    body += HtmlList(r.way_through);
    body += "<p>The disk map is <a href=\"#map\">at the top</a>.</p>\n";
  } else {
    body += HtmlParagraph("No plan: " + r.plan_error);
  }
  body += "</section>\n";

  body += HtmlHeading(kProbe);
  body += HtmlTable({"FIELD", "VALUE"}, ProbeRows(r.device));
  body += HtmlList(ProbeWarnings(r));
  body += "</section>\n";

  body += HtmlHeading(kExplain);
  body += HtmlParagraph(r.explain.sentence, "summary");
  body += HtmlList(r.explain.why);
  body += HtmlTable(PredictionColumns(), ExplainTableRows(r.explain));
  body += HtmlPre(ExplainDetailLines(r.explain));
  body += "<h3>Installers</h3>\n";
  body += HtmlList(InstallerSummaryLines(r.explain.installer_predictions, r.device.topology));
  body += HtmlTable(PredictionColumns(), PredictionRows(r.explain.installer_predictions));
  if (r.layouts) {
    body += "<h3>This layout on a fresh label</h3>\n";
    body += HtmlParagraph(
        "Where each partitioner and installer would put partitions of these sizes on a fresh "
        "label of this disk (explain --layout).");
    body += HtmlTable(LayoutPreviewColumns(), LayoutPreviewRows(*r.layouts));
    body += HtmlPre(LayoutPreviewLines(*r.layouts));
  }
  body += "</section>\n";

  if (r.bench) {
    body += HtmlHeading(kBench);
    body += HtmlParagraph("From " + r.bench_source + ". " + BenchSettingsLine(*r.bench));
    if (!r.bench->summary.empty()) body += HtmlParagraph(r.bench->summary, "summary");
    if (std::optional<Heatmap> h =
            AlignmentHeatmap(*r.bench, "median IOPS by block size and offset")) {
      body += HeatmapSvg(*h);
    }
    body += HtmlTable(CellColumns(), CellRows(*r.bench));
    body += HtmlList(r.bench->notes);
    body += "</section>\n";
  }

  if (r.verify) {
    body += HtmlHeading(kVerify);
    body += HtmlParagraph(fmt::format("Snapshot {}.", r.snapshot_path));
    body += HtmlParagraph(SameDiskSentence(*r.verify), "summary");
    body += HtmlList(r.verify->identity);
    if (!r.verify->changes.empty()) {
      body += "<h3>Changes</h3>\n" + HtmlTable(VerifyChangeColumns(), VerifyChangeRows(*r.verify));
    } else {
      body += HtmlParagraph("Nothing changed.");
    }
    body += "<h3>Actions</h3>\n" + HtmlList(VerifyActionLines(*r.verify));
    body += "</section>\n";
  }
  return HtmlPage("partalign report: " + r.target, body, kReportCss,
                  "Alignment rules: docs/audit-plan.md; the page: docs/report.md.");
}

std::string ReportMarkdown(const DiskReport& r) {
  std::string md = "# partalign report: " + MdText(r.target) + "\n\n";
  md += "**" + MdText(AuditSummary(r.audit)) + "**\n\n";
  if (r.plan) md += MdText(PlanSummary(*r.plan)) + "\n\n";

  md += std::string("## ") + kAudit.title + "\n\n";
  md += MdText(AuditSummary(r.audit)) + "\n\n";
  if (!r.audit.partitions.empty()) md += MdTable(AuditColumns(), AuditRows(r.audit));
  md += MdCode(AuditDetails(r.audit));
  md += MdList(TableFindingLines(r.table));
  md += MdList(r.hibernation);

  md += std::string("## ") + kPlan.title + "\n\n";
  if (r.plan) {
    md += Demoted(RenderPlanMarkdown(*r.plan, r.table, r.plan_advice)) + "\n";
    if (!r.made_room.empty()) md += "### Make room\n\n" + MdList(r.made_room) + "\n";
    if (!r.way_through.empty()) md += "### Way through\n\n" + MdList(r.way_through) + "\n";
  } else {
    md += MdText("No plan: " + r.plan_error) + "\n\n";
  }

  md += std::string("## ") + kProbe.title + "\n\n";
  md += MdTable({"FIELD", "VALUE"}, ProbeRows(r.device));
  md += MdList(ProbeWarnings(r));

  md += std::string("## ") + kExplain.title + "\n\n";
  md += "**" + MdText(r.explain.sentence) + "**\n\n";
  md += MdList(r.explain.why);
  md += MdTable(PredictionColumns(), ExplainTableRows(r.explain));
  md += MdCode(ExplainDetailLines(r.explain));
  md += "### Installers\n\n";
  md += MdList(InstallerSummaryLines(r.explain.installer_predictions, r.device.topology));
  md += MdTable(PredictionColumns(), PredictionRows(r.explain.installer_predictions));
  if (r.layouts) {
    md += "### This layout on a fresh label\n\n";
    md += MdText(
              "Where each partitioner and installer would put partitions of these sizes on a "
              "fresh label of this disk (explain --layout).") +
          "\n\n";
    md += MdTable(LayoutPreviewColumns(), LayoutPreviewRows(*r.layouts));
    md += MdCode(LayoutPreviewLines(*r.layouts));
  }

  if (r.bench) {
    md += std::string("## ") + kBench.title + "\n\n";
    md += MdText("From " + r.bench_source + ". " + BenchSettingsLine(*r.bench)) + "\n\n";
    if (!r.bench->summary.empty()) md += "**" + MdText(r.bench->summary) + "**\n\n";
    md += MdTable(CellColumns(), CellRows(*r.bench));
    md += MdList(r.bench->notes);
  }

  if (r.verify) {
    md += std::string("## ") + kVerify.title + "\n\n";
    md += MdText(fmt::format("Snapshot {}.", r.snapshot_path)) + "\n\n";
    md += "**" + MdText(SameDiskSentence(*r.verify)) + "**\n\n";
    md += MdList(r.verify->identity);
    if (!r.verify->changes.empty()) {
      md += "### Changes\n\n" + MdTable(VerifyChangeColumns(), VerifyChangeRows(*r.verify));
    } else {
      md += "Nothing changed.\n\n";
    }
    md += "### Actions\n\n" + MdList(VerifyActionLines(*r.verify));
  }
  return md;
}

}  // namespace partalign
