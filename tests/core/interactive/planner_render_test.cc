// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/interactive/planner_render.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/interactive/planner_test_disks.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

PlannerScreen Screen(PlannerDisk disk) {
  Result<PlannerModel> m = PlannerModel::Make(std::move(disk), LabelType::kGpt);
  EXPECT_TRUE(m) << m.error().message;
  return PlannerScreen(std::move(*m), BuiltinProfiles(), NewestKnownVersions());
}

std::string Find(const PlannerFrame& f, std::string_view needle) {
  for (const std::string& l : f.lines) {
    if (l.find(needle) != std::string::npos) return l;
  }
  return "";
}

TEST(PlannerRenderTest, FrameIsExactlyTheTerminal) {
  PlannerScreen s = Screen(test::EmptyDisk());
  PlannerFrame f = DrawPlanner(s, 80, 24);
  ASSERT_EQ(f.lines.size(), 24u);
  for (const std::string& l : f.lines) EXPECT_EQ(l.size(), 80u) << l;
  EXPECT_EQ(f.lines[0].rfind("new GPT table: disk.img, 2 GiB (4194304 sectors of 512 bytes)", 0),
            0u)
      << f.lines[0];
  // The keys wrap over the last lines, between words.
  EXPECT_EQ(f.lines[22].rfind(PlannerKeysLine().substr(0, 40), 0), 0u) << f.lines[22];
  EXPECT_NE(f.lines.back().find("q quit  ? help"), std::string::npos) << f.lines.back();
  ASSERT_GE(f.highlight, 0);
  EXPECT_NE(f.lines[f.highlight].find("free"), std::string::npos) << f.lines[f.highlight];
}

TEST(PlannerRenderTest, ListMapAndTicks) {
  PlannerScreen s = Screen(test::MisalignedDisk());
  PlannerFrame f = DrawPlanner(s, 100, 30);
  std::string map = Find(f, "map ");
  EXPECT_NE(map.find("[1"), std::string::npos) << map;  // partition 1 at the start
  EXPECT_NE(map.find('2'), std::string::npos) << map;
  EXPECT_NE(map.find('.'), std::string::npos) << map;  // free space after partition 3
  // Partition 1 starts at 63: the tick line shows the MiB boundary after its start.
  std::string ticks = Find(f, "1MiB ");
  EXPECT_NE(ticks.find('|'), std::string::npos) << ticks;
  EXPECT_NE(Find(f, "^ sector 63 = 0 B + 32256 bytes"), "") << [&] {
    std::string all;
    for (auto& l : f.lines) all += l + "\n";
    return all;
  }();
  std::string header = Find(f, "NR KIND");
  EXPECT_NE(header.find("ALIGNED parted fdisk gdisk calamares"), std::string::npos) << header;
  std::string row1 = f.lines.at(f.highlight);
  EXPECT_NE(row1.find("63"), std::string::npos) << row1;
  EXPECT_NE(row1.find("unchanged"), std::string::npos) << row1;
  EXPECT_NE(row1.find("NO"), std::string::npos) << row1;
  EXPECT_NE(Find(f, "1: parted: 1 not aligned: 63s % 2048s != 0s;"), "");
  EXPECT_NE(Find(f, "changes: no changes; w moves and resizes the existing partitions"), "");
}

TEST(PlannerRenderTest, PromptPutsTheCursorAtTheEnd) {
  PlannerScreen s = Screen(test::EmptyDisk());
  s.Handle(Key::Char('n'));
  s.Handle(Key::Char('5'));
  PlannerFrame f = DrawPlanner(s, 80, 24);
  EXPECT_EQ(f.cursor_line, 23);
  EXPECT_EQ(f.lines[23].substr(0, 5), "Size ");
  EXPECT_EQ(f.lines[23][f.cursor_column - 1], '5');
  // A prompt longer than the terminal wraps; the cursor ends up after its last word.
  s.Handle(Key::Of(KeyCode::kEscape));
  s.Handle(Key::Char('n'));
  s.Handle(Key::Of(KeyCode::kEnter));
  f = DrawPlanner(s, 80, 24);
  EXPECT_EQ(f.cursor_line, 23);
  EXPECT_EQ(f.lines[22].rfind("Type (linux, swap", 0), 0u) << f.lines[22];
  EXPECT_EQ(f.lines[23].substr(0, 12), "  linux):   ") << f.lines[23];
  EXPECT_EQ(f.cursor_column, 10);
}

TEST(PlannerRenderTest, HelpAndPlacementScreens) {
  PlannerScreen s = Screen(test::EmptyDisk());
  s.Handle(Key::Char('n'));
  s.Handle(Key::Of(KeyCode::kEnter));
  s.Handle(Key::Of(KeyCode::kEnter));
  s.Handle(Key::Char('p'));
  PlannerFrame p = DrawPlanner(s, 120, 40);
  EXPECT_NE(Find(p, "Where each tool would put this layout"), "");
  EXPECT_NE(Find(p, "parted-mib"), "");
  EXPECT_NE(Find(p, "sfdisk"), "");
  EXPECT_NE(Find(p, "planner"), "");
  // The installers come from the same list of tools (ToolViews()).
  for (const char* installer : {"yast", "anaconda", "calamares", "ubuntu"}) {
    EXPECT_NE(Find(p, installer), "") << installer;
  }
  // On a 24-line terminal the page scrolls down to its last line, the planner's command.
  const std::string last = "planner: this layout, as partalign would write it";
  PlannerFrame small = DrawPlanner(s, 120, 24);
  EXPECT_EQ(Find(small, last), "");
  EXPECT_EQ(small.lines.back().rfind("Lines 1-23 of ", 0), 0u) << small.lines.back();
  for (int i = 0; i < 100; ++i) s.Handle(Key::Of(KeyCode::kDown));
  small = DrawPlanner(s, 120, 24);
  EXPECT_NE(Find(small, last), "");
  EXPECT_NE(small.lines.back().find("Up/Down scroll"), std::string::npos);
  s.Handle(Key::Char('x'));
  s.Handle(Key::Char('?'));
  PlannerFrame h = DrawPlanner(s, 80, 24);
  EXPECT_NE(Find(h, "cycle the assumed topology"), "");
  // Longer than 23 lines at 80 columns: it scrolls to its last line.
  EXPECT_EQ(h.lines.back().rfind("Lines 1-23 of ", 0), 0u) << h.lines.back();
  for (int i = 0; i < 100; ++i) s.Handle(Key::Of(KeyCode::kDown));
  h = DrawPlanner(s, 80, 24);
  EXPECT_NE(Find(h, "KPMcore isAligned) on the topology shown"), "");
}

// Issue 30: a 64 MiB disk, partitions of 1 MiB and 60 MiB, the bridge profile: the YaST row
// showed partition 1 only, with no "fails:" line. Every tool's rows show every partition, or the
// page says why not (the tool fails, or the partition is skipped or not modelled).
TEST(PlannerRenderTest, PlacementShowsEveryPartitionOrWhyNot) {
  PlannerScreen s = Screen(test::EmptyDisk(64ull << 20));
  for (const char* size : {"1M", "60M"}) {
    while (s.rows().size() > 1 && s.selected() + 1 < s.rows().size()) {
      s.Handle(Key::Of(KeyCode::kDown));
    }
    s.Handle(Key::Char('n'));
    for (char c : std::string_view(size)) s.Handle(Key::Char(c));
    s.Handle(Key::Of(KeyCode::kEnter));
    s.Handle(Key::Of(KeyCode::kEnter));
  }
  ASSERT_EQ(s.model().layout().partitions.size(), 2u) << s.message();
  while (s.profile_name() != "usb-jmicron-0xffff") s.Handle(Key::Char('a'));
  s.Handle(Key::Char('p'));
  PlannerFrame f = DrawPlanner(s, 200, 400);
  std::string page;
  for (const std::string& l : f.lines) page += l + "\n";
  int tools = 0;
  for (const ToolView& view : ToolViews()) {
    for (const std::string& tool : view.id == "parted"
                                       ? std::vector<std::string>{"parted-mib", "parted-percent"}
                                   : view.id == "fdisk" ? std::vector<std::string>{"sfdisk"}
                                   : view.id == "gdisk" ? std::vector<std::string>{"sgdisk"}
                                                        : std::vector<std::string>{view.id}) {
      ++tools;
      // The lines under the table: "TOOL: command", then its indented lines.
      std::string notes;
      bool in = false;
      for (const std::string& l : f.lines) {
        if (l.rfind(tool + ": ", 0) == 0) {
          in = true;
        } else if (in && l.rfind("  ", 0) != 0) {
          in = false;
        }
        if (in) notes += l + "\n";
      }
      ASSERT_FALSE(notes.empty()) << tool << "\n" << page;
      const bool fails = notes.find("  fails: ") != std::string::npos;
      for (int nr : {1, 2}) {
        bool row = false;
        for (const std::string& l : f.lines) {
          std::istringstream in_row(l);
          std::string name, number;
          in_row >> name >> number;
          row |= name == tool && number == std::to_string(nr);
        }
        const bool omitted =
            notes.find(fmt::format("  partition {} skipped: ", nr)) != std::string::npos ||
            notes.find(fmt::format("  partition {} not modelled: ", nr)) != std::string::npos;
        EXPECT_TRUE(row || fails || omitted)
            << tool << " shows no partition " << nr << " and does not say why:\n"
            << page;
      }
    }
  }
  EXPECT_EQ(tools, 9);
  // YaST's Partitioner takes no custom size below its optimal grain (65535 sectors here).
  EXPECT_NE(page.find("yast: YaST"), std::string::npos) << page;
  EXPECT_NE(page.find("fails: partition 1: YaST's Partitioner takes a custom size from 32.00 MiB"),
            std::string::npos)
      << page;
}

TEST(PlannerRenderTest, AssumedTopologyShowsItsWarning) {
  PlannerScreen s = Screen(test::MisalignedDisk());
  // Cycle to the bridge profile.
  while (s.profile_name() != "usb-jmicron-0xffff") s.Handle(Key::Char('a'));
  PlannerFrame f = DrawPlanner(s, 120, 30);
  EXPECT_NE(Find(f, "verdicts as if usb-jmicron-0xffff: 512/4096/4096/33553920/0"), "");
  EXPECT_NE(Find(f, "warning: optimal I/O size 33553920"), "");
}

// Issue #30 item 2: 64 MiB, partitions of 1M and 60M, the JMicron bridge, `p`: the YaST row
// showed partition 1 only, with no "fails:" line. Each installer's command line is followed
// by its partition 2 row or by a "fails:" line saying why not.
TEST(PlannerRenderTest, PlacementRowsShowEveryPartitionOrSayWhyNot) {
  PlannerScreen s = Screen(test::EmptyDisk(64 * kMiB));
  s.Handle(Key::Char('n'));
  for (char c : std::string("1M")) s.Handle(Key::Char(c));
  s.Handle(Key::Of(KeyCode::kEnter));
  s.Handle(Key::Of(KeyCode::kEnter));
  s.Handle(Key::Of(KeyCode::kDown));
  s.Handle(Key::Char('n'));
  for (char c : std::string("60M")) s.Handle(Key::Char(c));
  s.Handle(Key::Of(KeyCode::kEnter));
  s.Handle(Key::Of(KeyCode::kEnter));
  ASSERT_EQ(s.model().layout().partitions.size(), 2u) << s.message();
  while (s.profile_name() != "usb-jmicron-0xffff") s.Handle(Key::Char('a'));
  s.Handle(Key::Char('p'));
  PlannerFrame f = DrawPlanner(s, 200, 200);
  std::vector<std::string> lines;
  for (const std::string& l : f.lines) lines.push_back(l.substr(0, l.find_last_not_of(' ') + 1));
  for (const char* tool : {"yast", "anaconda", "calamares", "ubuntu"}) {
    size_t rows = 0;
    for (const std::string& l : lines) rows += l.rfind(std::string(tool) + " ", 0) == 0;
    if (rows >= 2) continue;
    // One row (or none): the lines under its command must say why.
    bool says_why = false;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].rfind(std::string(tool) + ": ", 0) != 0) continue;
      for (size_t j = i + 1; j < lines.size() && lines[j].rfind("  ", 0) == 0; ++j) {
        says_why |= lines[j].rfind("  fails: partition ", 0) == 0;
      }
    }
    std::string all;
    for (const std::string& l : lines) all += l + "\n";
    EXPECT_TRUE(says_why) << tool << " shows " << rows << " partition(s) and no reason:\n" << all;
  }
}

// Issue #30 item 3: at 80x24, the planner's stated minimum, and at 120x40, no screen has text
// in the last column (where a cut word would show): everything wraps between words.
std::vector<std::string> CutLines(const PlannerFrame& f, size_t width) {
  std::vector<std::string> cut;
  for (const std::string& l : f.lines) {
    if (l.size() != width || l.back() != ' ') cut.push_back(l);
  }
  return cut;
}

// The words of a frame, whatever the wrapping: each line without its leading and trailing
// spaces, joined by one space. `shown` gets the frame as drawn, for failure messages.
std::string FrameWords(const PlannerFrame& f, std::string* shown = nullptr) {
  std::string words;
  for (const std::string& l : f.lines) {
    if (shown) *shown += l + "|\n";
    const size_t begin = l.find_first_not_of(' ');
    if (begin == std::string::npos) continue;
    words += (words.empty() ? "" : " ") + l.substr(begin, l.find_last_not_of(' ') + 1 - begin);
  }
  return words;
}

TEST(PlannerRenderTest, EveryScreenWrapsInsteadOfCutting) {
  for (auto [width, height] : {std::pair<size_t, size_t>{80, 24}, {120, 40}}) {
    for (bool legacy : {false, true}) {
      PlannerScreen s = Screen(legacy ? test::LegacyDosDisk() : test::MisalignedDisk());
      // Long reasons: an edit that is refused, a verdict on the bridge topology.
      while (s.profile_name() != "usb-jmicron-0xffff") s.Handle(Key::Char('a'));
      s.Handle(Key::Char('r'));
      s.Handle(Key::Of(KeyCode::kEnter));
      std::vector<std::string> screens;
      auto check = [&](const std::string& what) {
        PlannerFrame f = DrawPlanner(s, width, height);
        EXPECT_EQ(f.lines.size(), height) << what;
        std::vector<std::string> cut = CutLines(f, width);
        std::string all;
        for (const std::string& l : f.lines) all += l + "|\n";
        EXPECT_TRUE(cut.empty()) << what << " at " << width << "x" << height << ":\n" << all;
      };
      check("list after a refused resize");
      for (char key : {'?', 'p', 'x'}) {
        s.Handle(Key::Char(key));
        check(std::string("page ") + key);
        for (int i = 0; i < 60; ++i) s.Handle(Key::Of(KeyCode::kDown));
        check(std::string("page ") + key + " scrolled");
        s.Handle(Key::Of(KeyCode::kEscape));
      }
      for (char key : {'r', 'm', 'e', 'w'}) {
        s.Handle(Key::Char(key));
        check(std::string("prompt ") + key);
        s.Handle(Key::Of(KeyCode::kEscape));
      }
      s.Handle(Key::Char('A'));
      check("aligned by A");
      s.Handle(Key::Char('q'));
      check("quit question");
    }
  }
}

// Issue #30 item 3: a layout w cannot apply says why ("not applicable: ...") on the list's
// changes line wrapped between words, not cut at the terminal's edge; x says it in full.
TEST(PlannerRenderTest, ANotApplicableLayoutSaysWhyWrapped) {
  const std::string why =
      "not applicable: this layout adds, deletes or retypes partitions, but partition 2 holds "
      "ext4: apply only moves and resizes partitions that may hold data (undo those edits, or "
      "export .sfdisk to review)";
  for (auto [width, height] : {std::pair<size_t, size_t>{80, 24}, {120, 40}}) {
    PlannerScreen s = Screen(test::MisalignedDisk());
    for (int i = 0; i < 3; ++i) s.Handle(Key::Of(KeyCode::kDown));  // the free space at the end
    s.Handle(Key::Char('n'));  // a new partition: a fresh table, which would lose partition 2
    s.Handle(Key::Of(KeyCode::kEnter));
    s.Handle(Key::Of(KeyCode::kEnter));
    ASSERT_EQ(s.model().layout().partitions.size(), 4u) << s.message();
    for (bool explain : {false, true}) {
      if (explain) s.Handle(Key::Char('x'));
      PlannerFrame f = DrawPlanner(s, width, height);
      std::string all;
      const std::string words = FrameWords(f, &all);
      EXPECT_TRUE(CutLines(f, width).empty()) << width << "x" << height << ":\n" << all;
      // The list at 80x24 has two lines for the changes (x shows them all).
      const std::string said = !explain && height < 40 ? why.substr(0, 90) : why;
      EXPECT_NE(words.find(said), std::string::npos) << width << "x" << height << ":\n" << all;
    }
  }
}

// Issue #30 item 3: parted's message in `p` is said in full at 80 columns, wrapped. Cut at the
// edge it lost its numbers ("... for best performance: " and no more): the cut fell on a space,
// which a check of the last column cannot see, so the words are checked.
TEST(PlannerRenderTest, PlacementSaysPartedsMessageInFullAt80Columns) {
  PlannerScreen s = Screen(test::MisalignedDisk());
  while (s.profile_name() != "usb-jmicron-0xffff") s.Handle(Key::Char('a'));
  s.Handle(Key::Char('p'));
  PlannerFrame f = DrawPlanner(s, 80, 400);  // the whole page, at 80 columns
  std::string all;
  const std::string words = FrameWords(f, &all);
  EXPECT_TRUE(CutLines(f, 80).empty()) << all;
  for (const char* start : {"2048s", "34s"}) {
    EXPECT_NE(words.find(fmt::format("prints: The resulting partition is not properly aligned for "
                                     "best performance: {} % 65535s != 0s",
                                     start)),
              std::string::npos)
        << start << ":\n"
        << all;
  }
}

TEST(PlannerRenderTest, NarrowListCountsTheWarningsInOneColumn) {
  PlannerScreen s = Screen(test::MisalignedDisk());
  while (s.profile_name() != "usb-jmicron-0xffff") s.Handle(Key::Char('a'));
  PlannerFrame narrow = DrawPlanner(s, 80, 24);
  std::string header = Find(narrow, "NR ");
  EXPECT_NE(header.find("TOOLS"), std::string::npos) << header;
  EXPECT_EQ(header.find("calamares"), std::string::npos) << header;
  EXPECT_NE(narrow.lines.at(narrow.highlight).find("4 WARN"), std::string::npos)
      << narrow.lines.at(narrow.highlight);
  PlannerFrame wide = DrawPlanner(s, 120, 40);
  EXPECT_NE(Find(wide, "NR ").find("calamares"), std::string::npos);
}

TEST(PlannerRenderTest, ATerminalTooSmallSaysWhichKeyQuits) {
  for (auto [width, height] : {std::pair<size_t, size_t>{20, 8}, {40, 5}, {79, 23}}) {
    PlannerFrame f = DrawPlannerTooSmall(width, height);
    ASSERT_EQ(f.lines.size(), height);
    EXPECT_TRUE(CutLines(f, width).empty()) << width << "x" << height;
    EXPECT_EQ(FrameWords(f),
              fmt::format("The planner needs 80x24; this terminal is {}x{}. Enlarge it, "
                          "or press q to quit.",
                          width, height));
  }
}

TEST(PlannerRenderTest, ExplainShowsTheChangeAndEveryVerdictInFull) {
  PlannerScreen s = Screen(test::LegacyDosDisk());
  s.Handle(Key::Char('A'));
  s.Handle(Key::Char('x'));
  PlannerFrame f = DrawPlanner(s, 120, 40);
  std::string all;
  for (const std::string& l : f.lines) all += l + "\n";
  EXPECT_NE(all.find("Partition 1 (primary, type linux)"), std::string::npos) << all;
  EXPECT_NE(all.find("on the disk now: sectors 63-100062 of 512 bytes, 48.83 MiB; it holds data "
                     "(ext4)"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("change: move 48.83 MiB: start 63 -> 2048 (up 1985 sectors)"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("partalign plan: move-data: sectors 2048-102399:"), std::string::npos) << all;
  EXPECT_NE(all.find("  parted: ok"), std::string::npos) << all;
  EXPECT_NE(all.find("w moves and resizes the existing partitions"), std::string::npos) << all;
}

}  // namespace
}  // namespace partalign
