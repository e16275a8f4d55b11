// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/bench/bench_render.h"

#include <gtest/gtest.h>

#include "support/html_checks.h"

namespace partalign {
namespace {

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

BenchReport GridReport(double slow_factor) {
  BenchReport r;
  r.target = {"/dev/<loop>", "disk", 1 << 30, 512, 0, 1 << 30};
  r.settings = {"grid", 10, 1, "io_uring", 8, 0.01};
  for (const BenchCell& c : DefaultCells(BenchOp::kRead)) {
    CellSummary s;
    s.cell = c;
    double iops = 10000;
    if (c.in_grid && c.block_size == 4096 && c.offset_align == 512) iops *= slow_factor;
    for (int i = 0; i < 8; ++i) s.trial_iops.push_back(iops * (1 + 0.001 * i));
    s.iops = iops;
    s.trials = 8;
    r.cells.push_back(s);
  }
  AddAlignmentAnalysis(r);
  return r;
}

TEST(HeatmapTest, GridOfBlockSizesByAlignments) {
  BenchReport r = GridReport(0.5);
  std::optional<Heatmap> h = AlignmentHeatmap(r, "title");
  ASSERT_TRUE(h);
  ASSERT_EQ(h->rows.size(), 8u);
  ASSERT_EQ(h->columns.size(), 8u);
  EXPECT_EQ(h->rows.front(), "512");
  EXPECT_EQ(h->columns.back(), "4096");
  const HeatCell& slow = h->cells[7][0];  // 4096-byte blocks at 512-byte alignment
  EXPECT_TRUE(slow.marked);
  EXPECT_NEAR(*slow.shade, 0.0, 1e-3);  // half the reference: fully red
  EXPECT_EQ(slow.lines[1], "-50.0% *");
  ASSERT_EQ(slow.lines.size(), 3u);  // IOPS, change, its interval
  EXPECT_NE(slow.lines[2].find(".."), std::string::npos) << slow.lines[2];
  EXPECT_EQ(slow.lines[2].back(), '%');
  EXPECT_EQ(h->cells[7][7].lines[1], "reference");
  EXPECT_FALSE(h->cells[0][0].marked);
  EXPECT_TRUE(h->cells[0][0].faded);  // not significant: drawn pale
  EXPECT_FALSE(slow.faded);
}

TEST(HeatmapTest, SvgHasOneRectPerCellAndEscapesText) {
  BenchReport r = GridReport(0.5);
  std::string svg = HeatmapSvg(*AlignmentHeatmap(r, "a <b> & 'c'"));
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_EQ(Count(svg, "<rect "), 64u + 1u);  // the cells and the background
  EXPECT_EQ(Count(svg, "stroke-width=\"3\""), 1u);
  EXPECT_EQ(Count(svg, "fill-opacity=\"0.35\""), 56u - 1u);
  EXPECT_NE(svg.find("a &lt;b&gt; &amp; &#39;c&#39;"), std::string::npos);
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
}

TEST(HeatmapTest, NoGridNoHeatmapAndMissingCellsAreGrey) {
  BenchReport r = GridReport(1.0);
  BenchReport single = r;
  single.cells.erase(single.cells.begin(), single.cells.begin() + 64);
  EXPECT_FALSE(AlignmentHeatmap(single, "t"));
  r.cells.erase(r.cells.begin());  // 512 x 512 missing
  std::optional<Heatmap> h = AlignmentHeatmap(r, "t");
  ASSERT_TRUE(h);
  EXPECT_FALSE(h->cells[0][0].shade);
  EXPECT_EQ(h->cells[0][0].lines[0], "n/a");
  EXPECT_NE(HeatmapSvg(*h).find("#d9d9d9"), std::string::npos);
}

TEST(HtmlTest, ReportEmbedsTheHeatmapAndTheTable) {
  BenchReport r = GridReport(0.5);
  std::string html = BenchHtml(r);
  test::ExpectSelfContainedHtml(html);  // the page shell shared with `partalign report`
  EXPECT_EQ(Count(html, "<svg "), 1u);
  EXPECT_EQ(Count(html, "<tr>"), 66u + 1u);
  EXPECT_NE(html.find(XmlEscape(r.summary)), std::string::npos);
  EXPECT_NE(html.find("/dev/&lt;loop&gt;"), std::string::npos);
}

TEST(HtmlTest, ComparisonShowsBeforeAfterAndChange) {
  BenchComparison c = *CompareReports(GridReport(1.0), GridReport(0.5), "a.json", "b.json");
  std::string html = ComparisonHtml(c);
  test::ExpectSelfContainedHtml(html);
  EXPECT_EQ(Count(html, "<svg "), 3u);  // before, after, change
  EXPECT_EQ(Count(html, "<tr>"), 66u + 1u);
  std::optional<Heatmap> change = ChangeHeatmap(c);
  ASSERT_TRUE(change);
  EXPECT_TRUE(change->cells[7][0].marked);
  EXPECT_EQ(change->cells[7][0].lines[0], "-50.0% *");
  EXPECT_NE(change->cells[7][0].lines[1].find(".."), std::string::npos);
  EXPECT_NEAR(*change->cells[7][0].shade, 0.0, 1e-9);  // saturated red
  EXPECT_NEAR(*change->cells[0][0].shade, 0.5, 1e-9);  // no change: the neutral middle
}

}  // namespace
}  // namespace partalign
