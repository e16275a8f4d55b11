// SPDX-License-Identifier: GPL-3.0-or-later
// plan --interactive as a person uses it, under tmux (issue #30): the legacy DOS layout
// (partitions at 63 and 100100, both ext4) realigned in the planner with A, applied with w, every
// file intact and nothing else touched; every screen at exactly 80x24 (the stated minimum) and
// at 120x40 with no word cut at the right edge; a terminal too small saying which key quits;
// q and Ctrl-C saying what they leave behind. Image files only: no root needed.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "support/advice.h"
#include "support/ext4_image.h"
#include "support/moved_disk.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/sfdisk.h"
#include "support/temp_dir.h"
#include "support/tmux_session.h"

namespace partalign {
namespace {

using test::CheckExt4At;
using test::CommandResult;
using test::FileSet;
using test::MakeExt4At;
using test::TmuxSession;

constexpr uint64_t kLegacyBytes = 128ull << 20;
constexpr uint64_t kSector = 512;
// The issue's layout: partition 1 at 63-100062, partition 2 at 100100-180099.
constexpr uint64_t kStart1 = 63, kSize1 = 100000, kStart2 = 100100, kSize2 = 80000;

std::string Quote(const std::string& s) { return "'" + s + "'"; }

std::string Planner(const std::string& image, const std::string& extra = "") {
  return fmt::format("{} plan --interactive {} {}", Quote(PARTALIGN_BINARY), extra, Quote(image));
}

// Lines of a tmux capture that reach the last column (capture-pane drops trailing spaces): a
// word cut by the terminal's edge shows there.
std::vector<std::string> LinesAtTheEdge(const std::string& screen, size_t width) {
  std::vector<std::string> out;
  std::istringstream in(screen);
  for (std::string line; std::getline(in, line);) {
    if (line.size() >= width) out.push_back(line);
  }
  return out;
}

// The words of a screen on one line, whatever the wrapping.
std::string Words(const std::string& screen) {
  std::istringstream in(screen);
  std::string words;
  for (std::string w; in >> w;) words += (words.empty() ? "" : " ") + w;
  return words;
}

// Waits until the words of `needle` show on the screen in order, however the planner wrapped
// them; false after `seconds`.
bool WaitForWords(const TmuxSession& t, const std::string& needle, double seconds = 10) {
  const std::string words = Words(needle);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (Words(t.Screen()).find(words) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// The words of what the command printed once it left full-screen mode (lines the terminal
// wrapped joined again).
std::string LastWords(const TmuxSession& t) { return Words(t.ScreenJoined()); }

nlohmann::json Actions(const std::string& plan_file) {
  return nlohmann::json::parse(test::ReadFile(plan_file))["actions"];
}

// Issue #30 item 1, end to end: the layout `partalign plan` moves to 2048/102400 and the
// planner could not, realigned in the planner with A, applied with w (apply's own code path,
// the journaled mover), the same actions as `partalign plan -o`, every file intact, the bytes
// outside the partitions untouched.
// The issue's legacy layout in `dir`/legacy.img, ext4 with `files1` and `files2`.
std::string LegacyImage(const test::TempDir& dir, const FileSet& files1, const FileSet& files2) {
  const std::string image = dir.File("legacy.img");
  test::CreateSparseFile(image, kLegacyBytes);
  EXPECT_EQ(test::WriteWithSfdisk(image, fmt::format("label: dos\nstart={}, size={}, type=83\n"
                                                     "start={}, size={}, type=83\n",
                                                     kStart1, kSize1, kStart2, kSize2))
                .exit_code,
            0);
  MakeExt4At(image, kStart1, kSize1, files1, dir, "root1");
  MakeExt4At(image, kStart2, kSize2, files2, dir, "root2");
  return image;
}

TEST(PlannerScreensTmuxTest, LegacyDosLayoutRealignedInThePlannerAndApplied) {
  test::TempDir dir;
  const FileSet files1 = test::MakeFiles("legacy-1");
  const FileSet files2 = test::MakeFiles("legacy-2");
  const std::string image = LegacyImage(dir, files1, files2);
  // A boot loader's bytes in the gap after the MBR, and a tail no partition reaches.
  {
    std::fstream f(image, std::ios::in | std::ios::out | std::ios::binary);
    const std::string gap(30 * kSector, 'G');
    f.seekp(static_cast<std::streamoff>(kSector));
    f.write(gap.data(), static_cast<std::streamsize>(gap.size()));
  }
  const uint64_t tail = 200000 * kSector;
  const std::string gap_before = test::DigestBytes(image, kSector, 62 * kSector);
  const std::string tail_before = test::DigestBytes(image, tail, kLegacyBytes - tail);
  const std::string mbr_code_before = test::DigestBytes(image, 0, 440);

  const std::string planned = dir.File("plan.json");
  CommandResult plan = test::RunPartalign({"plan", image, "-o", planned});
  ASSERT_EQ(plan.exit_code, 0) << plan.out << plan.err;

  const std::string backups = dir.File("backups");
  TmuxSession t(Planner(image, "--backup-dir " + Quote(backups)), 100, 30);
  ASSERT_TRUE(WaitForWords(t, "DOS table on disk")) << t.Screen();
  t.Keys({"r", "Enter"});  // what was stuck: r cannot keep partition 1's data before partition 2
  ASSERT_TRUE(WaitForWords(t, "would cut it")) << t.Screen();
  t.Keys({"A"});
  ASSERT_TRUE(WaitForWords(t, "every partition where partalign plan puts it: 2 moving"))
      << t.Screen();
  EXPECT_NE(t.Screen().find("move 48.83 MiB"), std::string::npos) << t.Screen();
  EXPECT_NE(t.Screen().find("move 39.06 MiB"), std::string::npos) << t.Screen();
  t.Keys({"w"});
  ASSERT_TRUE(WaitForWords(t, "Type yes to write")) << t.Screen();
  t.Type("yes");
  t.Keys({"Enter"});
  ASSERT_TRUE(WaitForWords(t, "Press Enter to return to the planner", 60)) << t.Screen();
  EXPECT_NE(t.Screen().find("Verified: the table on"), std::string::npos) << t.Screen();
  t.Keys({"Enter"});
  ASSERT_TRUE(WaitForWords(t, "applied '")) << t.Screen();
  t.Keys({"q"});
  ASSERT_EQ(t.WaitForExit(), 0) << t.Screen();
  EXPECT_NE(
      LastWords(t).find(fmt::format("left the planner (q): '{}' holds what apply wrote", image)),
      std::string::npos)
      << t.Screen();

  // The plan the planner applied is `partalign plan`'s, action for action.
  std::vector<std::string> applied = test::FilesIn(backups, ".plan.json");
  ASSERT_EQ(applied.size(), 1u);
  EXPECT_EQ(Actions(applied[0]), Actions(planned));
  nlohmann::json table = test::SfdiskJson(image);
  ASSERT_EQ(table["partitions"].size(), 2u);
  const uint64_t new1 = table["partitions"][0]["start"], new2 = table["partitions"][1]["start"];
  EXPECT_EQ(new1, 2048u);
  EXPECT_EQ(new2, 102400u);
  EXPECT_EQ(CheckExt4At(image, new1, kSize1, files1, dir), "");
  EXPECT_EQ(CheckExt4At(image, new2, kSize2, files2, dir), "");
  EXPECT_EQ(test::DigestBytes(image, kSector, 62 * kSector), gap_before);
  EXPECT_EQ(test::DigestBytes(image, tail, kLegacyBytes - tail), tail_before);
  EXPECT_EQ(test::DigestBytes(image, 0, 440), mbr_code_before);
}

// The planner's Markdown export says to export the same plan as .json and apply that file
// (issue #30 item 4); both exports made in the planner, the apply it names, run word for word,
// realigns the disk with every file.
TEST(PlannerScreensTmuxTest, MarkdownExportNamesTheApplyOfTheJsonExport) {
  test::TempDir dir;
  const FileSet files1 = test::MakeFiles("export-1");
  const FileSet files2 = test::MakeFiles("export-2");
  const std::string image = LegacyImage(dir, files1, files2);
  TmuxSession t(Planner(image), 100, 30);
  ASSERT_TRUE(WaitForWords(t, "DOS table on disk")) << t.Screen();
  t.Keys({"A"});
  ASSERT_TRUE(WaitForWords(t, "every partition where partalign plan puts it")) << t.Screen();
  for (const char* name : {"plan.md", "plan.json"}) {
    t.Keys({"e"});
    ASSERT_TRUE(WaitForWords(t, "Export to")) << t.Screen();
    t.Type(dir.File(name));
    t.Keys({"Enter"});
    ASSERT_TRUE(WaitForWords(t, dir.File(name))) << t.Screen();
  }
  t.Keys({"q"});  // exported: nothing unsaved to ask about
  ASSERT_EQ(t.WaitForExit(), 0) << t.Screen();
  EXPECT_NE(LastWords(t).find("nothing was written"), std::string::npos) << t.Screen();

  const std::string apply =
      test::AdviceIn(test::ReadFile(dir.File("plan.md")), "then apply it with `([^`]+)`");
  EXPECT_EQ(apply, "partalign apply plan.json");
  const CommandResult applied = test::RunAdvice(apply + " --yes --backup-dir backups", dir.path());
  ASSERT_EQ(applied.exit_code, 0) << applied.out << applied.err;
  const nlohmann::json table = test::SfdiskJson(image);
  ASSERT_EQ(table["partitions"].size(), 2u);
  EXPECT_EQ(table["partitions"][0]["start"], 2048u);
  EXPECT_EQ(table["partitions"][1]["start"], 102400u);
  EXPECT_EQ(CheckExt4At(image, 2048, kSize1, files1, dir), "");
  EXPECT_EQ(CheckExt4At(image, 102400, kSize2, files2, dir), "");
}

// The screens of one session on `image` at `width` x `height`, each waited for by a text of
// its own, checked for text in the last column.
void CheckEveryScreen(const std::string& image, int width, int height, bool existing) {
  TmuxSession t(Planner(image, "--assume usb-jmicron-0xffff"), width, height);
  auto screen = [&](const std::string& what, const std::string& needle) {
    ASSERT_TRUE(WaitForWords(t, needle)) << what << ":\n" << t.Screen();
    const std::string s = t.Screen();
    EXPECT_TRUE(LinesAtTheEdge(s, static_cast<size_t>(width)).empty())
        << what << " at " << width << "x" << height << " reaches the last column:\n"
        << s;
  };
  // A page longer than the terminal (help, placement, explain): every page of it, scrolled a
  // page at a time ("Lines A-B of N") down to its last line, which must be `last`.
  auto pages = [&](const std::string& what, const std::string& needle, const std::string& last) {
    screen(what, needle);
    const std::regex lines_re("Lines (\\d+)-(\\d+) of (\\d+)");
    for (int page = 1;; ++page) {
      ASSERT_LT(page, 40) << what << ": no last page";
      std::smatch m;
      const std::string words = Words(t.Screen());
      if (!std::regex_search(words, m, lines_re)) break;  // the page fits the terminal
      if (std::stoul(m[2]) >= std::stoul(m[3])) break;
      const std::string shown = m[0];
      for (int i = 0; i < height - 2; ++i) t.Keys({"Down"});
      // The next page: another range of lines.
      bool moved = false;
      for (int wait = 0; wait < 100 && !moved; ++wait) {
        moved = Words(t.Screen()).find(shown) == std::string::npos;
        if (!moved) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      ASSERT_TRUE(moved) << what << ": Down did not scroll\n" << t.Screen();
      screen(fmt::format("{}, page {}", what, page + 1), "Up/Down scroll");
    }
    screen(what + ", its end", last);
  };
  screen("list", existing ? "DOS table on disk" : "new GPT table");
  screen("keys", "? help");
  t.Keys({"?"});
  pages("help", "Up/Down scroll", "KPMcore isAligned) on the topology shown");
  t.Keys({"Escape", "p"});
  pages("placement", "Where each tool would put this layout",
        "planner: this layout, as partalign would write it");
  t.Keys({"Escape", "x"});
  pages("explain", "key returns", "key returns");
  t.Keys({"Escape"});
  if (existing) {
    t.Keys({"r", "Enter"});
    screen("a long refusal", "would cut it");
    t.Keys({"m"});
    screen("move prompt", "New start");
    t.Keys({"Escape", "t"});
    screen("type refused at once", "apply moves partitions but does not change their type");
    t.Keys({"A"});
    screen("aligned", "every partition where partalign plan puts it");
    t.Keys({"Down", "Down", "n"});
    screen("size prompt", "Size (512M");
    t.Keys({"Escape"});
  } else {
    t.Keys({"n"});
    screen("size prompt", "Size (512M");
    t.Type("100M");
    t.Keys({"Enter"});
    screen("type prompt", "Type (linux");
    t.Keys({"Enter", "Up", "t"});
    screen("type prompt again", "now linux");
    t.Keys({"Escape", "r"});
    screen("resize prompt", "New size");
    t.Keys({"Escape", "m"});
    screen("move prompt", "New start");
    t.Keys({"Escape"});
  }
  t.Keys({"e"});
  screen("export prompt", "Export to");
  t.Keys({"Escape", "w"});
  screen("write prompt", "Type yes to write");
  t.Keys({"Escape", "q"});
  screen("quit question", "y quits, any other key stays");
  t.Keys({"y"});
  ASSERT_EQ(t.WaitForExit(), 0) << t.Screen();
  EXPECT_NE(LastWords(t).find("nothing was written"), std::string::npos) << t.Screen();
}

std::string LegacyImage(const test::TempDir& dir) {
  const std::string image = dir.File("legacy.img");
  test::CreateSparseFile(image, kLegacyBytes);
  EXPECT_EQ(test::WriteWithSfdisk(image, fmt::format("label: dos\nstart={}, size={}, type=83\n"
                                                     "start={}, size={}, type=83\n",
                                                     kStart1, kSize1, kStart2, kSize2))
                .exit_code,
            0);
  MakeExt4At(image, kStart1, kSize1, test::MakeFiles("s1"), dir, "s1");
  MakeExt4At(image, kStart2, kSize2, test::MakeFiles("s2"), dir, "s2");
  return image;
}

// Issue #30 item 3: every screen (list, help, placement, explain, each prompt) at exactly
// 80x24 and at 120x40: no line reaches the last column, so none is cut mid-word.
TEST(PlannerScreensTmuxTest, EveryScreenAt80x24And120x40WrapsBetweenWords) {
  test::TempDir dir;
  const std::string legacy = LegacyImage(dir);
  const std::string empty = dir.File("empty.img");
  test::CreateSparseFile(empty, 2ull << 30);
  for (auto [width, height] : {std::pair<int, int>{80, 24}, {120, 40}}) {
    CheckEveryScreen(legacy, width, height, /*existing=*/true);
    CheckEveryScreen(empty, width, height, /*existing=*/false);
  }
}

// Issue 40, item 7: on a DOS disk with a logical partition 1.27 GiB in, at 80x24 and 120x40,
// the caret line under the 1 MiB ticks says the start's sector and bytes whole (it was cut at
// 80 columns), and the extended partition's row never says NO or WARN (a container without
// data: plan does not align it), before and after A aligns everything.
TEST(PlannerScreensTmuxTest, TheCaretLineIsWholeAndTheExtendedRowIsNoVerdict) {
  test::TempDir dir;
  const std::string image = dir.File("logical.img");
  test::CreateSparseFile(image, 2ull << 30);
  constexpr uint64_t kExtended = 2662400, kLogical = 2662767;
  ASSERT_EQ(test::WriteWithSfdisk(image, fmt::format("label: dos\nstart=2048, size=204800, "
                                                     "type=83\nstart={}, size=1000000, type=5\n"
                                                     "start={}, size=400000, type=83\n",
                                                     kExtended, kLogical))
                .exit_code,
            0);
  const uint64_t bytes = kLogical * kSector;
  const std::string caret =
      fmt::format("^ sector {} = 1.27 GiB + {} bytes", kLogical, bytes % (1ull << 20));
  // The extended partition's row (A moves it too: its EBR goes before the logical one's start).
  const std::regex extended_row(R"((^|\n) *2 +(extended +)?\d+ +\d+ [^\n]*)");
  for (auto [width, height] : {std::pair<int, int>{80, 24}, {120, 40}}) {
    SCOPED_TRACE(fmt::format("{}x{}", width, height));
    TmuxSession t(Planner(image), width, height);
    ASSERT_TRUE(WaitForWords(t, "DOS table on disk")) << t.Screen();
    auto check_extended = [&](const std::string& when) {
      const std::string screen = t.Screen();
      std::smatch row;
      ASSERT_TRUE(std::regex_search(screen, row, extended_row)) << when << ":\n" << screen;
      const std::string line = row[0];
      EXPECT_EQ(line.find("NO"), std::string::npos) << when << ": " << line;
      EXPECT_EQ(line.find("WARN"), std::string::npos) << when << ": " << line;
    };
    check_extended("on the disk");
    // Down to partition 5: its caret line, whole, inside the width.
    bool found = false;
    for (int i = 0; i < 8 && !found; ++i) {
      t.Keys({"Down"});
      found = t.WaitFor(fmt::format("sector {} ", kLogical), 2);
    }
    ASSERT_TRUE(found) << t.Screen();
    const std::string screen = t.Screen();
    EXPECT_NE(screen.find(caret), std::string::npos) << caret << "\n" << screen;
    EXPECT_TRUE(LinesAtTheEdge(screen, static_cast<size_t>(width)).empty()) << screen;
    t.Keys({"A"});
    ASSERT_TRUE(WaitForWords(t, "every partition where partalign plan puts it")) << t.Screen();
    check_extended("after A");
    t.Keys({"q", "y"});
    EXPECT_EQ(t.WaitForExit(), 0) << t.Screen();
  }
}

// Issue #30 item 3: at 20x8 the message names the size needed and the key that quits, whole.
TEST(PlannerScreensTmuxTest, ATerminalTooSmallSaysWhichKeyQuits) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, 64ull << 20);
  TmuxSession t(Planner(image), 20, 8);
  ASSERT_TRUE(WaitForWords(t, "quit.")) << t.Screen();
  EXPECT_TRUE(LinesAtTheEdge(t.Screen(), 20).empty()) << t.Screen();
  EXPECT_NE(Words(t.Screen())
                .find("The planner needs 80x24; this terminal is 20x8. Enlarge it, "
                      "or press q to quit."),
            std::string::npos)
      << t.Screen();
  t.Keys({"q"});
  EXPECT_EQ(t.WaitForExit(), 0) << t.Screen();
}

// Issue #30 item 6: Ctrl-C leaves with a word; with edits not written it asks first, and a
// second Ctrl-C leaves, naming them.
TEST(PlannerScreensTmuxTest, CtrlCSaysWhatItLeavesBehind) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, 256ull << 20);
  {
    TmuxSession t(Planner(image));
    ASSERT_TRUE(WaitForWords(t, "new GPT table")) << t.Screen();
    t.Keys({"C-c"});
    ASSERT_EQ(t.WaitForExit(), 0) << t.Screen();
    EXPECT_NE(LastWords(t).find(
                  fmt::format("left the planner (Ctrl-C): nothing was written to '{}'", image)),
              std::string::npos)
        << t.Screen();
  }
  TmuxSession t(Planner(image));
  ASSERT_TRUE(WaitForWords(t, "new GPT table")) << t.Screen();
  t.Keys({"n", "Enter", "Enter"});
  ASSERT_TRUE(WaitForWords(t, "changes: 1 new")) << t.Screen();
  t.Keys({"C-c"});
  ASSERT_TRUE(WaitForWords(t, "y quits, any other key stays")) << t.Screen();
  t.Keys({"C-c"});
  ASSERT_EQ(t.WaitForExit(), 0) << t.Screen();
  EXPECT_NE(LastWords(t).find("nothing was written to"), std::string::npos) << t.Screen();
  EXPECT_NE(LastWords(t).find("edits not written: 1 new"), std::string::npos) << t.Screen();
  // Nothing written: the image's first MiB is still all zeros, as a fresh sparse file's.
  const std::string zeros = dir.File("zeros.img");
  test::CreateSparseFile(zeros, 1 << 20);
  EXPECT_EQ(test::DigestBytes(image, 0, 1 << 20), test::DigestBytes(zeros, 0, 1 << 20));
}

}  // namespace
}  // namespace partalign
