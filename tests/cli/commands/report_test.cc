// SPDX-License-Identifier: GPL-3.0-or-later
// partalign report end to end: the HTML and Markdown pages of the two-era disk (the demo's
// scenario: a 63-sector partition and starts on multiples of 65535 behind a USB bridge) as an
// image file and as a loop device, with a saved and a fresh benchmark and a snapshot; hostile
// partition names; the refusals (a block device or the target as the output, untrusted
// --bench-json files); and the page rendered by a real headless Chromium, offline: the
// screenshot shows the disk map's colours and the browser's log has no blocked load.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <sstream>

#include "partalign/report/report_render.h"
#include "support/device_test.h"
#include "support/html_checks.h"
#include "support/loop_device.h"
#include "support/run_command.h"
#include "support/sfdisk.h"
#include "support/temp_dir.h"
#include "support/two_era_disk.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;
using test::CommandResult;
using test::RunCommand;
using test::RunPartalign;

constexpr const char* kBridge = "usb-jmicron-0xffff";
constexpr const char* kChromium = "/usr/bin/chromium";
const std::string kPngColours = std::string(PARTALIGN_SOURCE_DIR) + "/tests/support/png_colours.py";

using test::CountOf;

// Runs `report` and returns the page it wrote.
std::string Report(const std::vector<std::string>& args, const std::string& output) {
  std::vector<std::string> argv{"report"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"-o", output});
  CommandResult r = RunPartalign(argv);
  EXPECT_EQ(r.exit_code, 0) << test::Describe(argv, r);
  EXPECT_NE(r.out.find("report written to '" + output + "'"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(output + ".tmp"));
  return fs::exists(output) ? test::ReadFile(output) : "";
}

class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override { test::MakeTwoEraDisk(image); }

  test::TempDir dir;
  const std::string image = dir.File("two-era.img");
};

TEST_F(ReportTest, HtmlOfTheTwoEraDiskHasEverySectionAndTheMapAndLoadsNothing) {
  const std::string html = Report({"--assume", kBridge, image}, dir.File("report.html"));
  test::ExpectSelfContainedHtml(html);
  for (const char* id : {"map", "probe", "explain", "audit", "plan"}) {
    EXPECT_EQ(CountOf(html, std::string("<section id=\"") + id + "\">"), 1u) << id;
  }
  // probe's warning about the bridge's optimal I/O size, explain's sentence about parted.
  EXPECT_NE(html.find("33553920"), std::string::npos);
  EXPECT_NE(html.find("parted will want 65535-sector alignment"), std::string::npos);
  EXPECT_NE(html.find("4 of 4 partitions"), std::string::npos);
  EXPECT_NE(html.find("move-data"), std::string::npos);
  // The map: partitions 1-4 misaligned before, each aligned after (overview and details).
  EXPECT_EQ(CountOf(html, "<svg "), 1u);
  for (int p = 1; p <= 4; ++p) {
    const std::string part = "data-part=\"" + std::to_string(p) + "\"";
    EXPECT_GE(CountOf(html, part + " data-row=\"before\" data-state=\"misaligned\""), 1u) << p;
    EXPECT_GE(CountOf(html, part + " data-row=\"after\" data-state=\"aligned\""), 1u) << p;
    EXPECT_EQ(CountOf(html, part + " data-row=\"after\" data-state=\"misaligned\""), 0u) << p;
    EXPECT_GE(CountOf(html, "data-move=\"" + std::to_string(p) + "\""), 1u) << p;
  }
  EXPECT_NE(html.find("partition 1 &#39;legacy&#39;: sectors 63-65534"), std::string::npos);
  EXPECT_EQ(html.find("<section id=\"bench\">"), std::string::npos);
  // The same disk gives the same page.
  EXPECT_EQ(Report({"--assume", kBridge, image}, dir.File("again.html")), html);
}

TEST_F(ReportTest, MarkdownHasTheSameSectionsAndTheTextMap) {
  const std::string md =
      Report({"--format", "markdown", "--assume", kBridge, image}, dir.File("report.md"));
  EXPECT_EQ(md.rfind("# partalign report: " + image + "\n", 0), 0u) << md.substr(0, 200);
  for (const char* heading :
       {"\n## Probe: ", "\n## Explain: ", "\n## Audit: ", "\n## Plan: ", "\n#### Disk map\n"}) {
    EXPECT_NE(md.find(heading), std::string::npos) << heading;
  }
  EXPECT_NE(md.find("```text\nwhole disk"), std::string::npos);
  EXPECT_NE(md.find("  before |1"), std::string::npos);
  EXPECT_EQ(md.find("<svg"), std::string::npos);
  // What plan --format markdown prints is in it, one heading level deeper.
  CommandResult plan = RunPartalign({"plan", "--format", "markdown", "--assume", kBridge, image});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const std::string map = plan.out.substr(plan.out.find("```text"));
  EXPECT_NE(md.find(map.substr(0, map.find("```\n", 7) + 4)), std::string::npos) << map;
}

TEST_F(ReportTest, HostilePartitionNamesAreEscaped) {
  const std::string disk = dir.File("hostile.img");
  test::CreateSparseFile(disk, 64ull << 20);
  CommandResult w = test::WriteWithSfdisk(disk,
                                          "label: gpt\nfirst-lba: 34\nstart=63, size=4096, "
                                          "name=\"<script>alert(1)</script>&<img src=x>\"\n");
  ASSERT_EQ(w.exit_code, 0) << w.err;
  const std::string html = Report({disk}, dir.File("hostile.html"));
  test::ExpectSelfContainedHtml(html);
  // GPT names hold 36 characters: sfdisk keeps "<script>alert(1)</script>&<img src=x".
  EXPECT_NE(html.find("&#39;&lt;script&gt;alert(1)&lt;/script&gt;&amp;&lt;img src=x&#39;"),
            std::string::npos);
  const std::string md = Report({"--format", "markdown", disk}, dir.File("hostile.md"));
  EXPECT_EQ(md.find("<script"), std::string::npos);
  EXPECT_EQ(md.find("<img"), std::string::npos);
}

TEST_F(ReportTest, SavedBenchmarkAndSnapshotBecomeSections) {
  const std::string bench_json = dir.File("bench.json");
  CommandResult bench =
      RunPartalign({"bench", "--budget", "1", "--block-sizes", "512,4096", "--offset-aligns",
                    "512,4096", "--no-report", "--output", bench_json, image});
  ASSERT_EQ(bench.exit_code, 0) << bench.err;
  const std::string snapshot = dir.File("disk.partalign-snapshot");
  CommandResult snap = RunPartalign({"snapshot", image, "-o", snapshot});
  ASSERT_EQ(snap.exit_code, 0) << snap.out << snap.err;
  const std::string html =
      Report({"--bench-json", bench_json, "--against", snapshot, "--assume", kBridge, image},
             dir.File("report.html"));
  test::ExpectSelfContainedHtml(html);
  EXPECT_NE(html.find("<section id=\"bench\">"), std::string::npos);
  EXPECT_NE(html.find("median IOPS by block size and offset"), std::string::npos);
  EXPECT_NE(html.find("From &#39;" + bench_json + "&#39;"), std::string::npos);
  EXPECT_EQ(CountOf(html, "<svg "), 2u);  // the disk map and the heatmap
  // The snapshot was taken without --assume: same disk, and the bridge's topology is a change.
  EXPECT_NE(html.find("<section id=\"verify\">"), std::string::npos);
  EXPECT_NE(html.find("Same disk: yes"), std::string::npos) << html.substr(html.find("verify"));
  EXPECT_NE(html.find("<td>optimal_io_size</td>"), std::string::npos);
  const std::string md =
      Report({"--format", "markdown", "--bench-json", bench_json, "--against", snapshot, image},
             dir.File("report.md"));
  EXPECT_NE(md.find("\n## Benchmark\n"), std::string::npos);
  EXPECT_NE(md.find("\n## Against the snapshot\n"), std::string::npos);
  EXPECT_NE(md.find("**Same disk: yes"), std::string::npos);
}

// Every refusal is one line naming what and where, and writes nothing.
void ExpectRefused(const std::vector<std::string>& args, const std::string& what) {
  std::vector<std::string> argv{"report"};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandResult r = RunPartalign(argv);
  EXPECT_EQ(r.exit_code, 1) << test::Describe(argv, r);
  EXPECT_EQ(r.out, "") << test::Describe(argv, r);
  EXPECT_EQ(CountOf(r.err, "\n"), 1u) << r.err;
  EXPECT_NE(r.err.find(what), std::string::npos) << test::Describe(argv, r);
}

TEST_F(ReportTest, RefusesDevicesTheTargetAndBadBenchmarkFiles) {
  const std::string out = dir.File("out.html");
  ExpectRefused({image, "-o", "/dev/null"},
                "refusing to write the report to '/dev/null': it is a character device");
  ExpectRefused({image, "-o", image}, "it is '" + image + "' itself");
  ExpectRefused({image, "-o", dir.path()}, "it is a directory");
  const std::string fifo = dir.File("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ExpectRefused({image, "-o", out, "--bench-json", fifo},
                "benchmark result '" + fifo + "' is a FIFO, not a regular file");
  const std::string big = dir.File("big.json");
  test::CreateSparseFile(big, 17ull << 20);
  ExpectRefused({image, "-o", out, "--bench-json", big}, "benchmark result '" + big + "' is");
  const std::string broken = dir.File("broken.json");
  test::WriteFile(broken, "{\"schema_version\": 1, \"cells\": [");
  ExpectRefused({image, "-o", out, "--bench-json", broken}, "'" + broken + "' is not valid JSON");
  const std::string other = dir.File("other.json");
  test::WriteFile(other, "{\"format\": \"partalign-plan\"}");
  ExpectRefused({image, "-o", out, "--bench-json", other}, other);
  ExpectRefused({image, "-o", out, "--bench-json", dir.File("missing.json")},
                "cannot open benchmark result");
  ExpectRefused({image, "-o", out, "--bench", "--bench-json", other}, "give one of them");
  ExpectRefused({image, "-o", out, "--against", broken}, broken);
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(ReportTest, OnALoopDeviceWithAFreshBenchmarkAndNeverToTheDevice) {
  PARTALIGN_REQUIRE_DEVICES();
  test::LoopDevice loop(image, 512, /*direct_io=*/true);
  struct stat before {};
  ASSERT_EQ(::stat(loop.path().c_str(), &before), 0);
  ExpectRefused({image, "-o", loop.path()},
                "refusing to write the report to '" + loop.path() + "': it is a block device");
  struct stat after {};
  ASSERT_EQ(::stat(loop.path().c_str(), &after), 0);
  EXPECT_TRUE(S_ISBLK(after.st_mode));
  EXPECT_EQ(after.st_rdev, before.st_rdev);

  const std::string html = Report(
      {"--bench", "--bench-seconds", "1", "--assume", kBridge, loop.path()}, dir.File("loop.html"));
  test::ExpectSelfContainedHtml(html);
  EXPECT_NE(html.find("4 of 4 partitions"), std::string::npos);
  EXPECT_NE(html.find("<section id=\"bench\">"), std::string::npos);
  EXPECT_NE(html.find("a short run of partalign bench (1 s)"), std::string::npos);
  EXPECT_NE(html.find("median IOPS by block size and offset"), std::string::npos);
  EXPECT_EQ(CountOf(html, "<svg "), 2u);
}

// --- the page in a real browser ----------------------------------------------------------------

struct Browser {
  CommandResult result;
  std::string log;  ///< stderr: chromium's log with --enable-logging=stderr
};

// Chromium, headless and offline (a network namespace of its own when root: nothing to reach),
// with a profile of its own, taking a screenshot of `page`.
Browser Screenshot(const test::TempDir& dir, const std::string& page, const std::string& png) {
  std::vector<std::string> argv;
  if (::geteuid() == 0) argv = {"unshare", "-n"};
  argv.insert(argv.end(),
              {kChromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               "--force-color-profile=srgb", "--user-data-dir=" + dir.File("chromium-profile"),
               "--enable-logging=stderr", "--v=0", "--window-size=1200,2000", "--screenshot=" + png,
               "file://" + fs::absolute(page).string()});
  CommandResult r = RunCommand(argv);
  return {r, r.err};
}

// Lines of the browser's log that say it blocked something or refused to load it.
std::vector<std::string> BlockedLoads(const std::string& log) {
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find("Content Security Policy") != std::string::npos ||
        line.find("Refused to") != std::string::npos ||
        line.find("has been blocked") != std::string::npos ||
        line.find("ERR_BLOCKED") != std::string::npos) {
      lines.push_back(line);
    }
  }
  return lines;
}

// png_colours.py's counts: "WIDTHxHEIGHT distinct=N" then "#rrggbb COUNT" lines.
struct PngStats {
  std::string size;
  int distinct = 0;
  std::map<std::string, long> counts;
};

PngStats ReadPng(const std::string& png, const std::vector<std::string>& colours) {
  std::vector<std::string> argv{"python3", kPngColours, png};
  argv.insert(argv.end(), colours.begin(), colours.end());
  CommandResult r = RunCommand(argv);
  EXPECT_EQ(r.exit_code, 0) << test::Describe(argv, r);
  PngStats stats;
  std::istringstream in(r.out);
  std::string distinct;
  in >> stats.size >> distinct;
  if (distinct.rfind("distinct=", 0) == 0) stats.distinct = std::stoi(distinct.substr(9));
  for (std::string colour; in >> colour;) in >> stats.counts[colour];
  return stats;
}

TEST_F(ReportTest, HeadlessChromiumShowsTheMapsColoursAndBlocksNothing) {
  if (!fs::exists(kChromium)) {
    if (test::DeviceTestsRequired()) {
      FAIL() << kChromium << " is missing: run scripts/install-deps.sh "
             << "(and PARTALIGN_REQUIRE_DEVICE_TESTS=1 forbids skipping)";
    }
    GTEST_SKIP() << "browser test skipped: " << kChromium << " is not installed";
  }
  const std::string page = dir.File("report.html");
  const std::string html = Report({"--assume", kBridge, image}, page);
  const std::string png = dir.File("report.png");
  Browser shot = Screenshot(dir, page, png);
  ASSERT_EQ(shot.result.exit_code, 0) << shot.log;
  ASSERT_TRUE(fs::exists(png)) << shot.log;
  EXPECT_EQ(BlockedLoads(shot.log), std::vector<std::string>()) << shot.log;
  PngStats stats =
      ReadPng(png, {kMapMisalignedColour, kMapAlignedColour, kMapFreeColour, "#ffffff"});
  EXPECT_EQ(stats.size, "1200x2000");
  // Not blank: text, tables and the map in many colours, and the map's own colours exactly.
  EXPECT_GT(stats.distinct, 50);
  EXPECT_GT(stats.counts[kMapMisalignedColour], 1000) << "the misaligned partitions";
  EXPECT_GT(stats.counts[kMapAlignedColour], 1000) << "the aligned partitions";
  EXPECT_GT(stats.counts[kMapFreeColour], 1000) << "the free space";
  EXPECT_LT(stats.counts["#ffffff"], 1200L * 2000 * 95 / 100);

  // The check can fail: the same page with an external image and style sheet is blocked, and
  // the log says so.
  std::string hostile = html;
  hostile.replace(hostile.find("</body>"), 7,
                  "<img src=\"http://example.invalid/pixel.png\"><link rel=\"stylesheet\" "
                  "href=\"http://example.invalid/x.css\"></body>");
  const std::string bad = dir.File("external.html");
  test::WriteFile(bad, hostile);
  Browser blocked = Screenshot(dir, bad, dir.File("external.png"));
  EXPECT_EQ(blocked.result.exit_code, 0) << blocked.log;
  EXPECT_FALSE(BlockedLoads(blocked.log).empty()) << blocked.log;
}

}  // namespace
}  // namespace partalign
