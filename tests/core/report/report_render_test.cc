// SPDX-License-Identifier: GPL-3.0-or-later
// The report page: the SVG disk map's geometry (partitions against the grain and physical
// sectors, colours by alignment, the moves), escaping of what comes from the disk (partition
// names, paths), the page's sections and its Content-Security-Policy, and the Markdown.
#include "partalign/report/report_render.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "partalign/layout/layout_preview.h"
#include "partalign/layout/plan_render.h"
#include "partalign/layout/planner.h"
#include "partalign/util/units.h"
#include "support/html_checks.h"

namespace partalign {
namespace {

constexpr const char* kLinux = "0FC63DAF-8483-4772-8E79-3D69D8477DE4";
constexpr const char* kHostile = "<script>alert('x')</script>&\"|`";

using test::CountOf;

// 8 MiB GPT: partition 1 at sector 63 (misaligned, holds data, a hostile name), partition 2 at
// 4 MiB (aligned).
PartitionTable GptTable() {
  PartitionTable t;
  t.label = LabelType::kGpt;
  t.sector_size = 512;
  t.disk_size_sectors = 16384;
  t.first_usable_lba = 34;
  t.last_usable_lba = 16350;
  auto add = [&](uint32_t n, uint64_t start, uint64_t size) {
    Partition p;
    p.number = n;
    p.start_sector = start;
    p.size_sectors = size;
    p.type_code = kLinux;
    t.partitions.push_back(p);
  };
  add(1, 63, 4096);
  add(2, 8192, 2048);
  t.partitions[0].name = kHostile;
  t.partitions[0].contents.proof = ContentProof::kData;
  t.partitions[1].name = "home";
  return t;
}

DeviceInfo Device(const PartitionTable& t, uint64_t physical = 512) {
  DeviceInfo d;
  d.identity.path = "/images/<disk>.img";
  d.topology = DefaultTopology(t.sector_size, t.disk_size_sectors * t.sector_size);
  d.topology.physical_sector_size = physical;
  d.topology.minimum_io_size = physical;
  d.table.label = t.label;
  return d;
}

Plan PlanFor(const PartitionTable& t, const DeviceInfo& d) {
  Result<Plan> p = MakePlan(t, d, RecommendAlignment(d.topology).alignment);
  EXPECT_TRUE(p) << p.error().message;
  return *p;
}

const MapBox* Find(const std::vector<MapBox>& boxes, uint32_t number) {
  auto it = std::find_if(boxes.begin(), boxes.end(),
                         [&](const MapBox& b) { return b.partition == number; });
  return it == boxes.end() ? nullptr : &*it;
}

// "" when every tag of `xml` is closed in order (text is escaped, so '<' only starts tags);
// else what is wrong.
std::string WellFormed(const std::string& xml) {
  std::vector<std::string> open;
  for (size_t pos = xml.find('<'); pos != std::string::npos; pos = xml.find('<', pos + 1)) {
    const size_t end = xml.find('>', pos);
    if (end == std::string::npos) return "unterminated tag";
    const std::string tag = xml.substr(pos + 1, end - pos - 1);
    if (tag.empty()) return "empty tag";
    if (tag[0] == '/') {
      if (open.empty() || open.back() != tag.substr(1)) return "unexpected </" + tag.substr(1);
      open.pop_back();
    } else if (tag.back() != '/') {
      open.push_back(tag.substr(0, tag.find(' ')));
    }
  }
  return open.empty() ? "" : "unclosed <" + open.back();
}

DiskReport Report() {
  DiskReport r;
  r.table = GptTable();
  r.device = Device(r.table);
  r.target = r.device.identity.path;
  r.findings = CheckDevice(r.device);
  r.explain = BuildExplainReport(r.device, NewestKnownVersions());
  r.audit = AuditTable(r.table, r.device.topology);
  r.plan = PlanFor(r.table, r.device);
  return r;
}

TEST(DiskMapTest, OverviewDrawsPartitionsToScaleColouredByTheirStart) {
  PartitionTable t = GptTable();
  std::vector<MapStrip> strips = BuildDiskMap(PlanFor(t, Device(t)), t);
  ASSERT_GE(strips.size(), 2u);
  const MapStrip& overview = strips[0];
  EXPECT_EQ(overview.from_bytes, 0u);
  EXPECT_EQ(overview.to_bytes, 8 * kMiB);
  // 8 MiB over 920 pixels: 115 pixels a MiB. Partition 1 starts at 63 x 512 bytes.
  const MapBox* old1 = Find(overview.before, 1);
  const MapBox* new1 = Find(overview.after, 1);
  const MapBox* old2 = Find(overview.before, 2);
  ASSERT_TRUE(old1 && new1 && old2);
  EXPECT_NEAR(old1->x, 63.0 * 512 / (8 * kMiB) * 920, 1e-9);
  EXPECT_NEAR(old1->width, 4096.0 * 512 / (8 * kMiB) * 920, 1e-9);
  EXPECT_FALSE(old1->aligned);
  EXPECT_NEAR(new1->x, 115, 1e-9);
  EXPECT_TRUE(new1->aligned);
  EXPECT_NEAR(old2->x, 460, 1e-9);
  EXPECT_TRUE(old2->aligned);
  EXPECT_EQ(old1->name, kHostile);
  EXPECT_NE(old1->title.find("start 63 (misaligned)"), std::string::npos) << old1->title;
  // One move, partition 1's, from its old start to its new one; 2 stays.
  ASSERT_EQ(overview.moves.size(), 1u);
  EXPECT_EQ(overview.moves[0].partition, 1u);
  EXPECT_NEAR(overview.moves[0].before_x, old1->x, 1e-9);
  EXPECT_NEAR(overview.moves[0].after_x, 115, 1e-9);
  // The 1 MiB boundaries 0..8 MiB; labels at least 64 pixels apart fit every one.
  ASSERT_EQ(overview.grain_ticks.size(), 9u);
  for (size_t i = 0; i < 9; ++i) EXPECT_NEAR(overview.grain_ticks[i].first, 115.0 * i, 1e-9);
  EXPECT_EQ(overview.grain_ticks[2].second, "2 MiB");
  // 512-byte physical sectors are 0.06 pixels apart here: not drawn.
  EXPECT_TRUE(overview.physical_ticks.empty());
}

TEST(DiskMapTest, DetailStripIsTheTextMapsWindowWithPhysicalSectorTicks) {
  PartitionTable t = GptTable();
  Plan plan = PlanFor(t, Device(t, 4096));
  std::vector<MapStrip> strips = BuildDiskMap(plan, t);
  std::vector<MapWindow> windows = DetailWindows(plan, t);
  ASSERT_EQ(windows.size(), 1u);
  ASSERT_GE(strips.size(), 2u);
  const MapStrip& detail = strips[1];
  EXPECT_EQ(detail.from_bytes, windows[0].from);
  EXPECT_EQ(detail.to_bytes, windows[0].to);
  EXPECT_EQ(detail.from_bytes, 0u);
  EXPECT_EQ(detail.to_bytes, 3 * kMiB);
  EXPECT_NE(detail.caption.find("partition 1: start 63 -> 2048"), std::string::npos)
      << detail.caption;
  // 4096-byte physical sectors in 3 MiB over 920 pixels: 1.2 pixels apart, too close to draw;
  // so a close-up of the old start follows, 16 physical sectors around it.
  EXPECT_TRUE(detail.physical_ticks.empty());
  ASSERT_EQ(strips.size(), 3u);
  const MapStrip& close = strips[2];
  EXPECT_EQ(close.from_bytes, 0u);  // 63 x 512 = 32256 is in the 8th physical sector
  EXPECT_EQ(close.to_bytes, 16 * 4096u);
  EXPECT_NE(close.caption.find("offset 3584 in one"), std::string::npos) << close.caption;
  ASSERT_EQ(close.physical_ticks.size(), 17u);
  EXPECT_NEAR(close.physical_ticks[1], 920.0 / 16, 1e-9);
  EXPECT_EQ(close.logical_ticks.size(), 16u * 8 + 1);
  const MapBox* old1 = Find(close.before, 1);
  ASSERT_TRUE(old1);
  EXPECT_NEAR(old1->x, 32256.0 / 65536 * 920, 1e-9);
  EXPECT_FALSE(old1->aligned);
  // After the plan nothing is there: partition 1 starts at 1 MiB.
  EXPECT_EQ(Find(close.after, 1), nullptr);
}

TEST(DiskMapTest, NoCloseUpWhenPhysicalEqualsLogicalAndNothingMovesOnAnAlignedDisk) {
  PartitionTable t = GptTable();
  EXPECT_EQ(BuildDiskMap(PlanFor(t, Device(t)), t).size(), 2u);  // overview + one window
  t.partitions[0].start_sector = 2048;
  std::vector<MapStrip> strips = BuildDiskMap(PlanFor(t, Device(t, 4096)), t);
  ASSERT_EQ(strips.size(), 1u);
  EXPECT_TRUE(strips[0].moves.empty());
  for (const MapBox& b : strips[0].before) EXPECT_TRUE(b.aligned) << b.partition;
}

TEST(DiskMapTest, OverviewOfALargeDiskDrawsEveryPowerOfTwoGrainsAndKeepsTinyPartitions) {
  PartitionTable t = GptTable();
  t.disk_size_sectors = (1ull << 40) / 512;  // 1 TiB
  t.last_usable_lba = t.disk_size_sectors - 34;
  t.partitions[1].start_sector = t.disk_size_sectors / 2;
  std::vector<MapStrip> strips = BuildDiskMap(PlanFor(t, Device(t)), t);
  const MapStrip& overview = strips[0];
  EXPECT_LE(overview.grain_ticks.size(), 65u);
  EXPECT_GE(overview.grain_ticks.size(), 33u);
  EXPECT_NE(overview.caption.find("alignment boundaries"), std::string::npos) << overview.caption;
  const MapBox* tiny = Find(overview.before, 2);  // 1 MiB of 1 TiB
  ASSERT_TRUE(tiny);
  EXPECT_GE(tiny->width, 2.0);
}

TEST(DiskMapTest, SvgColoursRectsByStateAndEscapesNames) {
  PartitionTable t = GptTable();
  std::string svg = DiskMapSvg(BuildDiskMap(PlanFor(t, Device(t)), t));
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  // Overview and detail: partition 1 misaligned before (2 rects), aligned after (2), and
  // partition 2 aligned in the overview (before and after).
  EXPECT_EQ(CountOf(svg, "data-state=\"misaligned\""), 2u);
  EXPECT_EQ(CountOf(svg, "data-state=\"aligned\""), 4u + 0u) << svg;
  EXPECT_EQ(CountOf(svg, "data-part=\"1\" data-row=\"before\" data-state=\"misaligned\""), 2u);
  EXPECT_NE(svg.find(std::string("fill=\"") + kMapMisalignedColour), std::string::npos);
  EXPECT_NE(svg.find(std::string("fill=\"") + kMapAlignedColour), std::string::npos);
  EXPECT_NE(svg.find(std::string("fill=\"") + kMapFreeColour), std::string::npos);
  EXPECT_EQ(CountOf(svg, "data-move=\"1\""), 2u);
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;alert(&#39;x&#39;)"), std::string::npos);
  EXPECT_EQ(WellFormed(svg), "");
}

TEST(ReportHtmlTest, OnePageWithEverySectionAndNothingExternal) {
  std::string html = ReportHtml(Report());
  test::ExpectSelfContainedHtml(html);
  for (const char* id : {"probe", "explain", "audit", "plan"}) {
    EXPECT_NE(html.find(std::string("<section id=\"") + id + "\">"), std::string::npos) << id;
  }
  EXPECT_EQ(html.find("<section id=\"bench\">"), std::string::npos);
  EXPECT_EQ(html.find("<section id=\"verify\">"), std::string::npos);
  EXPECT_NE(html.find("1 of 2 partitions"), std::string::npos);
  EXPECT_NE(html.find("<svg "), std::string::npos);
  EXPECT_NE(html.find("/images/&lt;disk&gt;.img"), std::string::npos);
  EXPECT_EQ(html.find("<disk>"), std::string::npos);
  // The same input gives the same page: no clock.
  EXPECT_EQ(html, ReportHtml(Report()));
}

// Issue 40, item 8: the verdict, the map, the audit and the plan lead, explain's detail after,
// wrapped; every tick label of the map inside the picture; the footer names docs that exist.
TEST(ReportHtmlTest, TheVerdictLeadsLabelsStayInsideAndTheFooterNamesRealDocs) {
  const std::string html = ReportHtml(Report());
  const size_t map = html.find("<section id=\"map\">");
  const size_t audit = html.find("<section id=\"audit\">");
  const size_t plan = html.find("<section id=\"plan\">");
  const size_t probe = html.find("<section id=\"probe\">");
  const size_t explain = html.find("<section id=\"explain\">");
  ASSERT_NE(explain, std::string::npos);
  EXPECT_LT(map, audit);
  EXPECT_LT(audit, plan);
  EXPECT_LT(plan, probe);
  EXPECT_LT(probe, explain);
  EXPECT_EQ(html.find("overflow-x: auto"), std::string::npos);  // pre-formatted text wraps
  EXPECT_NE(html.find("white-space: pre-wrap"), std::string::npos);
  EXPECT_EQ(html.find("docs/alignment.md"), std::string::npos);
  EXPECT_NE(html.find("docs/audit-plan.md"), std::string::npos);
  const std::string md = ReportMarkdown(Report());
  EXPECT_LT(md.find("## Audit"), md.find("## Probe"));
  EXPECT_LT(md.find("## Plan"), md.find("## Explain"));

  // A tick label near the right edge ends at its tick, one near the left begins there: its
  // estimated extent lies inside the viewBox.
  PartitionTable t = GptTable();
  const std::string svg = DiskMapSvg(BuildDiskMap(PlanFor(t, Device(t)), t));
  const double width = std::stod(svg.substr(svg.find("width=\"") + 7));
  size_t labels = 0;
  for (size_t at = svg.find("font-size=\"10\" text-anchor="); at != std::string::npos;
       at = svg.find("font-size=\"10\" text-anchor=", at + 1)) {
    const size_t tag = svg.rfind("<text x=\"", at);
    const double x = std::stod(svg.substr(tag + 9));
    const size_t q = at + std::string("font-size=\"10\" text-anchor=\"").size();
    const std::string anchor = svg.substr(q, svg.find('"', q) - q);
    const size_t text = svg.find('>', at) + 1;
    const double chars = static_cast<double>(svg.find("</text>", text) - text);
    const double left = anchor == "end" ? x - chars * 6.6 : anchor == "start" ? x : x - chars * 3.3;
    const double right = anchor == "end"     ? x
                         : anchor == "start" ? x + chars * 6.6
                                             : x + chars * 3.3;
    EXPECT_GE(left, 0) << svg.substr(tag, 120);
    EXPECT_LE(right, width) << svg.substr(tag, 120);
    ++labels;
  }
  EXPECT_GT(labels, 0u);
}

TEST(ReportHtmlTest, BenchAndVerifySectionsWhenGiven) {
  DiskReport r = Report();
  BenchReport b;
  b.target = {"/dev/<loop>", "disk", 1 << 30, 512, 0, 1 << 30};
  b.settings = {"grid", 10, 1, "io_uring", 8, 0.01};
  for (const BenchCell& c : DefaultCells(BenchOp::kRead, {{512, 4096}, {512, 4096}})) {
    CellSummary s;
    s.cell = c;
    const double iops = c.in_grid && c.block_size == 4096 && c.offset_align == 512 ? 5000 : 10000;
    for (int i = 0; i < 8; ++i) s.trial_iops.push_back(iops * (1 + 0.001 * i));
    s.iops = iops;
    s.trials = 8;
    b.cells.push_back(s);
  }
  AddAlignmentAnalysis(b);
  r.bench = b;
  r.bench_source = "'<saved>.json'";
  VerifyReport v;
  v.same_disk = true;
  v.matched_by = "serial";
  v.changes.push_back({"physical_sector_size", 512, 4096, "parted <now> aligns to 4096"});
  v.actions = {kActionPlan};
  v.action_reasons = {"partition 1 is misaligned now"};
  r.verify = v;
  r.snapshot_path = "usb.partalign-snapshot";
  std::string html = ReportHtml(r);
  EXPECT_NE(html.find("<section id=\"bench\">"), std::string::npos);
  EXPECT_NE(html.find("median IOPS by block size and offset"), std::string::npos);
  EXPECT_NE(html.find("&#39;&lt;saved&gt;.json&#39;"), std::string::npos);
  EXPECT_EQ(CountOf(html, "<svg "), 2u);  // the disk map and the heatmap
  EXPECT_NE(html.find("<section id=\"verify\">"), std::string::npos);
  EXPECT_NE(html.find("Same disk: yes (matched by serial)."), std::string::npos);
  EXPECT_NE(html.find("<td>physical_sector_size</td><td>512</td><td>4096</td>"), std::string::npos);
  EXPECT_NE(html.find("plan: partition 1 is misaligned now"), std::string::npos);
  EXPECT_EQ(html.find("<now>"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST(ReportHtmlTest, NoPlanSaysWhy) {
  DiskReport r = Report();
  r.plan.reset();
  r.plan_error = "the table is <damaged>";
  std::string html = ReportHtml(r);
  EXPECT_NE(html.find("No plan: the table is &lt;damaged&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<svg "), std::string::npos);
}

// A plan that cannot align a partition comes with the way through (way_through.h), on both
// pages.
TEST(ReportHtmlTest, ThePlansWayThroughIsOnThePage) {
  DiskReport r = Report();
  EXPECT_EQ(ReportHtml(r).find("way through:"), std::string::npos);
  r.way_through = {
      "way through: partition 7 (swap, 8 MiB) can give the room: 'partalign plan "
      "--discard 7 -o plan.json disk.img' gives up its contents"};
  EXPECT_NE(ReportHtml(r).find("way through: partition 7 (swap, 8 MiB)"), std::string::npos);
  const std::string md = ReportMarkdown(r);
  EXPECT_NE(md.find("### Way through"), std::string::npos) << md;
  EXPECT_NE(md.find("--discard 7 -o plan.json"), std::string::npos) << md;
}

// The installers' placement is on the page too: every partitioner and installer puts the
// table's partition sizes on a fresh label, each partition or why not.
TEST(ReportHtmlTest, TheLayoutOnAFreshLabelShowsEveryTool) {
  DiskReport r = Report();
  std::optional<LayoutRequest> request = RequestOfTable(r.table);
  ASSERT_TRUE(request);
  EXPECT_EQ(request->sizes_bytes.size(), r.table.partitions.size());
  r.layouts = PreviewRequest(*request, r.device.topology, NewestKnownVersions());
  const std::string html = ReportHtml(r);
  EXPECT_NE(html.find("<h3>This layout on a fresh label</h3>"), std::string::npos);
  for (const ToolView& v : ToolViews()) {
    if (!v.installer) continue;
    EXPECT_NE(html.find("<td>" + v.id + "</td>"), std::string::npos) << v.id;
  }
  test::ExpectSelfContainedHtml(html);
  const std::string md = ReportMarkdown(r);
  EXPECT_NE(md.find("### This layout on a fresh label"), std::string::npos);
  EXPECT_NE(md.find("| calamares |"), std::string::npos);
  // Without a table to remake there is no such section.
  EXPECT_EQ(ReportHtml(Report()).find("This layout on a fresh label"), std::string::npos);
}

TEST(ReportMarkdownTest, SameSectionsTextMapAndEscapedNames) {
  DiskReport r = Report();
  r.table.partitions[0].name = kHostile;
  std::string md = ReportMarkdown(r);
  EXPECT_EQ(md.rfind("# partalign report: /images/&lt;disk&gt;.img\n", 0), 0u) << md;
  for (const char* heading :
       {"\n## Probe: ", "\n## Explain: ", "\n## Audit: ", "\n## Plan: ",
        "\n### Alignment plan for `/images/<disk>.img`", "\n#### Disk map\n"}) {
    EXPECT_NE(md.find(heading), std::string::npos) << heading;
  }
  // The plan's own Markdown, one level deeper, with the text map.
  std::vector<std::string> map = DiskMap(*r.plan, r.table);
  EXPECT_NE(md.find(map[1]), std::string::npos) << md;
  EXPECT_NE(md.find("| FIELD | VALUE |"), std::string::npos);
  EXPECT_EQ(md.find("<script"), std::string::npos);
  EXPECT_EQ(md.find("## Benchmark"), std::string::npos);
  // A table cell with '|' stays one cell.
  DiskReport v = r;
  VerifyReport verify;
  verify.changes.push_back({"partitions[1].name", "a|b", "c", "renamed <x>"});
  verify.actions = {kActionNone};
  v.verify = verify;
  md = ReportMarkdown(v);
  EXPECT_NE(md.find("| partitions[1].name | \"a\\|b\" | \"c\" | renamed &lt;x&gt; |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("Same disk: no"), std::string::npos);
}

}  // namespace
}  // namespace partalign
