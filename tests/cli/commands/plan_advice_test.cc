// SPDX-License-Identifier: GPL-3.0-or-later
// Issue #30 item 4: every command plan, report, snapshot, explain and the planner print as
// advice is run here, word for word (RunAdvice: through sh, as a person pastes it), in the
// situation that printed it, and does what the advice says. Image files only: no root needed.
// The advice of verify and translate is run in migrate_advice_test.cc.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <regex>

#include <fmt/format.h>

#include "support/advice.h"
#include "support/ext4_image.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/sfdisk.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::AdviceIn;
using test::CommandResult;
using test::RunAdvice;
using test::RunPartalign;

constexpr uint64_t kImageBytes = 128ull << 20;

CommandResult Expect(const std::vector<std::string>& args, int expected = 0) {
  CommandResult r = RunPartalign(args);
  EXPECT_EQ(r.exit_code, expected) << test::Describe(args, r);
  return r;
}

nlohmann::json Json(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << text;
  return j;
}

// A 128 MiB image, DOS, partitions at 63 and 100100 (the second holding ext4 with files).
std::string LegacyImage(const test::TempDir& dir) {
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kImageBytes);
  EXPECT_EQ(test::WriteWithSfdisk(
                image, "label: dos\nstart=63, size=100000, type=83\nstart=100100, size=80000\n")
                .exit_code,
            0);
  test::MakeExt4At(image, 100100, 80000, test::MakeFiles("advice"), dir, "root");
  return image;
}

void ApplyHere(const std::string& command, const test::TempDir& dir) {
  // The advice's apply, with --yes and a backup directory of the test's own.
  CommandResult r = RunAdvice(command + " --yes --backup-dir backups", dir.path());
  ASSERT_EQ(r.exit_code, 0) << command << "\n" << r.out << r.err;
  EXPECT_NE(r.out.find("Verified: the table on"), std::string::npos) << r.out;
}

// plan --format markdown names the command that writes this very plan (with the options that
// shaped it) and the apply that takes it; both run.
TEST(PlanAdviceTest, MarkdownSaysTheCommandThatWritesThisPlan) {
  test::TempDir dir;
  const std::string image = LegacyImage(dir);
  const std::string md = Expect({"plan", "--grain", "2M", "--format", "markdown", image}).out;
  const std::string save = AdviceIn(md, "Save the plan with `([^`]+)`");
  EXPECT_EQ(save, fmt::format("partalign plan --grain 2M -o plan.json {}", image));
  const std::string apply = AdviceIn(md, "then apply it with `([^`]+)`");
  EXPECT_EQ(apply, "partalign apply plan.json");
  CommandResult saved = RunAdvice(save, dir.path());
  ASSERT_EQ(saved.exit_code, 0) << saved.out << saved.err;
  const nlohmann::json written = Json(test::ReadFile(dir.File("plan.json")));
  const nlohmann::json shown = Json(Expect({"plan", "--grain", "2M", "--json", image}).out);
  EXPECT_EQ(written["actions"], shown["actions"]);
  EXPECT_EQ(written["grain_bytes"], shown["grain_bytes"]);
  EXPECT_EQ(written["offset_bytes"], shown["offset_bytes"]);
  EXPECT_EQ(written["grain_bytes"], 2 << 20);
  ApplyHere(apply, dir);
  nlohmann::json table = test::SfdiskJson(image);
  EXPECT_EQ(table["partitions"][0]["start"], 4096);  // 2 MiB: the --grain the advice kept
}

// Issue 40: a plan made with --assume is refused by an apply without it ("the plan was made
// with an assumed topology"); the Markdown's apply carries the same --assume and runs as printed.
TEST(PlanAdviceTest, MarkdownOfAnAssumedTopologyAppliesWithTheSameAssumption) {
  test::TempDir dir;
  const std::string image = LegacyImage(dir);
  const std::string md =
      Expect({"plan", "--assume", "usb-jmicron-0xffff", "--format", "markdown", image}).out;
  const std::string save = AdviceIn(md, "Save the plan with `([^`]+)`");
  EXPECT_EQ(save, fmt::format("partalign plan --assume usb-jmicron-0xffff -o plan.json {}", image));
  const std::string apply = AdviceIn(md, "then apply it with `([^`]+)`");
  EXPECT_EQ(apply, "partalign apply --assume usb-jmicron-0xffff plan.json");
  ASSERT_EQ(RunAdvice(save, dir.path()).exit_code, 0);
  // Without the assumption the same plan is refused: the check above is the one that matters.
  CommandResult bare = RunAdvice("partalign apply plan.json --dry-run", dir.path());
  EXPECT_NE(bare.exit_code, 0) << bare.out << bare.err;
  ApplyHere(apply, dir);
  EXPECT_EQ(test::SfdiskJson(image)["partitions"][0]["start"], 2048);
}

// On a blank disk the same advice carries --layout: it writes the layout, not an empty plan.
TEST(PlanAdviceTest, MarkdownOfALayoutSaysTheLayoutToo) {
  test::TempDir dir;
  const std::string image = dir.File("blank.img");
  test::CreateSparseFile(image, kImageBytes);
  // 1.5G is a size (as sfdisk reads it); it does not fit a 128 MiB disk.
  CommandResult big = Expect(
      {"plan", "--layout", "size=20M,type=swap; size=1.5G", "--format", "markdown", image}, 1);
  EXPECT_NE(big.err.find("more than the whole disk"), std::string::npos) << big.err;
  const std::string fits =
      Expect({"plan", "--layout", "size=20M,type=swap;size=40960", "--format", "markdown", image})
          .out;
  const std::string save = AdviceIn(fits, "Save the plan with `([^`]+)`");
  EXPECT_EQ(save, fmt::format("partalign plan --layout 'size=20M,type=swap;size=40960' -o "
                              "plan.json {}",
                              image));
  ASSERT_EQ(RunAdvice(save, dir.path()).exit_code, 0);
  const nlohmann::json written = Json(test::ReadFile(dir.File("plan.json")));
  ASSERT_TRUE(written.contains("layout")) << written.dump(1);
  ASSERT_EQ(written["layout"]["partitions"].size(), 2u);
  ApplyHere(AdviceIn(fits, "then apply it with `([^`]+)`"), dir);
  nlohmann::json table = test::SfdiskJson(image);
  ASSERT_EQ(table["partitions"].size(), 2u);
  // 40960 sectors, as sfdisk reads a bare number: 20 MiB.
  EXPECT_EQ(table["partitions"][1]["size"], 40960);
}

// report's Markdown says the same command, with the report's own options.
TEST(PlanAdviceTest, ReportMarkdownSaysTheCommandThatWritesItsPlan) {
  test::TempDir dir;
  const std::string image = LegacyImage(dir);
  Expect({"report", image, "--grain", "4M", "--format", "markdown", "-o", dir.File("r.md")});
  const std::string md = test::ReadFile(dir.File("r.md"));
  const std::string save = AdviceIn(md, "Save the plan with `([^`]+)`");
  EXPECT_EQ(save, fmt::format("partalign plan --grain 4M -o plan.json {}", image));
  ASSERT_EQ(RunAdvice(save, dir.path()).exit_code, 0);
  ApplyHere(AdviceIn(md, "then apply it with `([^`]+)`"), dir);
  EXPECT_EQ(test::SfdiskJson(image)["partitions"][0]["start"], 8192);
}

// plan's sfdisk script warns that the table alone would point at sectors without the data, and
// names the apply that moves it first: it does.
TEST(PlanAdviceTest, SfdiskScriptWarningNamesTheApplyThatMovesTheData) {
  test::TempDir dir;
  const std::string image = LegacyImage(dir);
  const std::string script = Expect({"plan", "--format", "sfdisk", image}).out;
  EXPECT_NE(script.find("# moved. 'partalign apply' on this plan's file (partalign plan -o) moves "
                        "it first"),
            std::string::npos)
      << script;
  ASSERT_EQ(RunAdvice(fmt::format("partalign plan -o plan.json {}", image), dir.path()).exit_code,
            0);
  ApplyHere("partalign apply plan.json", dir);
  // The table is the script's, and the data moved with it.
  std::smatch m;
  std::regex line(R"(start= *(\d+), size= *(\d+))");
  std::vector<uint64_t> starts;
  for (std::sregex_iterator it(script.begin(), script.end(), line), end; it != end; ++it) {
    starts.push_back(std::stoull((*it)[1]));
  }
  ASSERT_EQ(starts.size(), 2u);
  nlohmann::json table = test::SfdiskJson(image);
  EXPECT_EQ(table["partitions"][0]["start"], starts[0]);
  EXPECT_EQ(table["partitions"][1]["start"], starts[1]);
  EXPECT_EQ(test::CheckExt4At(image, starts[1], 80000, test::MakeFiles("advice"), dir), "");
}

// plan --interactive refuses --discard and names the plan that gives a partition's contents up.
TEST(PlanAdviceTest, InteractiveDiscardRefusalNamesThePlanThatDiscards) {
  test::TempDir dir;
  const std::string image = LegacyImage(dir);
  CommandResult refused = Expect({"plan", "--interactive", "--discard", "2", image}, 1);
  const std::string advice = AdviceIn(refused.err, "given up with '([^']+)'");
  EXPECT_EQ(advice, fmt::format("partalign plan --discard 2 -o plan.json {}", image));
  CommandResult r = RunAdvice(advice, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const nlohmann::json plan = Json(test::ReadFile(dir.File("plan.json")));
  EXPECT_EQ(plan["actions"][1]["kind"], "table-only") << plan.dump(1);
  EXPECT_EQ(plan["actions"][1]["empty"], "discarded") << plan.dump(1);
}

// plan --interactive without a terminal names plan --layout, which plans without one.
TEST(PlanAdviceTest, PlannerWithoutATerminalNamesPlanLayout) {
  test::TempDir dir;
  const std::string image = dir.File("blank.img");
  test::CreateSparseFile(image, kImageBytes);
  CommandResult refused = Expect({"plan", "--interactive", image}, 1);
  const std::string advice = AdviceIn(refused.err, "without one use '([^']+)'");
  EXPECT_EQ(advice, fmt::format("partalign plan --layout SPEC {}", image));
  CommandResult r =
      RunAdvice(std::regex_replace(advice, std::regex("SPEC"), "'size=10M;type=swap'") + " --json",
                dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(Json(r.out)["layout"]["partitions"].size(), 2u);
}

// A table written for 4096-byte sectors read as 512: plan says how to read it as it is, and
// which translate rewrites it; both work.
TEST(PlanAdviceTest, ATableForAnotherSectorSizeNamesBothWays) {
  test::TempDir dir;
  const std::string image = dir.File("4k.img");
  test::CreateSparseFile(image, kImageBytes);
  test::SfdiskImage(image, "label: gpt\nstart=256, size=5120\nstart=5376, size=5120\n", 4096);
  CommandResult refused = Expect({"plan", image}, 1);
  EXPECT_NE(refused.err.find("read it as it is with --sector-size 4096"), std::string::npos)
      << refused.err;
  const std::string translate = AdviceIn(refused.err, "for 512-byte sectors: '([^']+)'");
  EXPECT_EQ(translate, fmt::format("partalign translate {}", image));
  Expect({"plan", "--sector-size", "4096", image});
  CommandResult t = RunAdvice(translate + " --yes --backup-dir backups", dir.path());
  ASSERT_EQ(t.exit_code, 0) << t.out << t.err;
  CommandResult plan = Expect({"plan", "--json", image});
  EXPECT_EQ(Json(plan.out)["actions"][0]["old_start_sector"], 2048);
}

// snapshot of such a table says it cannot audit it and which translate makes it auditable.
TEST(PlanAdviceTest, SnapshotNamesTheTranslateThatMakesItAuditable) {
  test::TempDir dir;
  const std::string image = dir.File("4k.img");
  test::CreateSparseFile(image, kImageBytes);
  test::SfdiskImage(image, "label: gpt\nstart=256, size=5120\n", 4096);
  CommandResult snap = Expect({"snapshot", image, "-o", dir.File("a.snapshot")});
  const std::string translate = AdviceIn(snap.out, "rewrite it for them first: '([^']+)'");
  EXPECT_EQ(translate, fmt::format("partalign translate {}", image));
  ASSERT_EQ(RunAdvice(translate + " --yes --backup-dir backups", dir.path()).exit_code, 0);
  CommandResult again = Expect({"snapshot", image, "-o", dir.File("b.snapshot")});
  EXPECT_EQ(again.out.find("not audited"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("yes"), std::string::npos) << again.out;  // the ALIGNED column
}

// explain --layout shows partalign's own row as the command that makes that layout: run, it
// puts every partition where the row says.
TEST(PlanAdviceTest, ExplainLayoutRowIsTheCommandThatMakesIt) {
  test::TempDir dir;
  const std::string image = dir.File("blank.img");
  test::CreateSparseFile(image, kImageBytes);
  CommandResult e =
      Expect({"explain", "--layout", "size=20M,type=uefi;size=40M;type=linux", image});
  const std::string command = AdviceIn(e.out, "\npartalign: (partalign plan --layout [^\n]+)\n");
  EXPECT_EQ(command, "partalign plan --layout 'size=20M,type=uefi;size=40M;type=linux' " + image);
  CommandResult r = RunAdvice(command + " --json", dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const nlohmann::json layout = Json(r.out)["layout"]["partitions"];
  ASSERT_EQ(layout.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const std::string row =
        AdviceIn(e.out, fmt::format("\npartalign +{} +primary +(\\d+) ", i + 1));
    EXPECT_EQ(layout[i]["start_sector"].get<uint64_t>(), std::stoull(row)) << i;
  }
}

// explain names --tool-version for a tool that is not installed and --installer-version for the
// installers; both ask about another version.
TEST(PlanAdviceTest, ExplainVersionAdviceAsksAboutAnotherVersion) {
  test::TempDir dir;
  const std::string image = dir.File("blank.img");
  test::CreateSparseFile(image, kImageBytes);
  const std::map<std::string, std::string> no_tools{{"PATH", dir.path()}};
  CommandResult e = RunPartalign({"explain", image}, "", no_tools);
  ASSERT_EQ(e.exit_code, 0) << e.out << e.err;
  EXPECT_NE(e.out.find("(--tool-version TOOL=X.Y asks about another)"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("(--installer-version NAME=X.Y asks about another)"), std::string::npos)
      << e.out;
  // Before TARGET, as a person adds them: each takes one value.
  CommandResult old = RunPartalign(
      {"explain", "--tool-version", "parted=3.1", "--installer-version", "calamares=3.2", image},
      "", no_tools);
  ASSERT_EQ(old.exit_code, 0) << old.out << old.err;
  EXPECT_NE(old.out.find("3.1"), std::string::npos) << old.out;
  EXPECT_NE(old.out.find("3.2"), std::string::npos) << old.out;
  EXPECT_NE(old.out, e.out);
}

}  // namespace
}  // namespace partalign
