// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/interactive/planner_screen.h"

#include <gtest/gtest.h>

#include "core/interactive/planner_test_disks.h"
#include "partalign/interactive/planner_render.h"
#include "partalign/layout/plan.h"
#include "partalign/util/units.h"
#include "support/case359_table.h"
#include "support/xp_table.h"

namespace partalign {
namespace {

PlannerScreen Screen(PlannerDisk disk) {
  Result<PlannerModel> m = PlannerModel::Make(std::move(disk), LabelType::kGpt);
  EXPECT_TRUE(m) << m.error().message;
  Result<std::vector<TopologyProfile>> profiles = ParseProfiles(
      "sata-512e log=512,phys=4096,min-io=4096,opt-io=0,align-offset=0 512e disk\n"
      "usb-jmicron-0xffff log=512,phys=4096,min-io=4096,opt-io=33553920,align-offset=0 bridge\n"
      "4kn log=4096,phys=4096,min-io=4096,opt-io=0,align-offset=0 4Kn disk\n");
  EXPECT_TRUE(profiles) << profiles.error().message;
  return PlannerScreen(std::move(*m), *profiles, NewestKnownVersions());
}

// Types `keys`: each character is a key, '\n' Enter, '\b' Backspace, '\x1b' Escape, '^' Up,
// 'v' Down. Returns the last effect that was not kNone.
PlannerEffect Type(PlannerScreen& s, std::string_view keys) {
  PlannerEffect last;
  for (char c : keys) {
    Key k = c == '\n'                                    ? Key::Of(KeyCode::kEnter)
            : c == '\b'                                  ? Key::Of(KeyCode::kBackspace)
            : c == '\x1b'                                ? Key::Of(KeyCode::kEscape)
            : c == '^'                                   ? Key::Of(KeyCode::kUp)
            : c == 'v' && s.mode() == PlannerMode::kList ? Key::Of(KeyCode::kDown)
                                                         : Key::Char(c);
    PlannerEffect e = s.Handle(k);
    if (e.kind != PlannerEffect::Kind::kNone) last = std::move(e);
  }
  return last;
}

// The issue's "Done when": n, 256M, Enter, Enter, n, Enter, Enter, e, a path ending in .json,
// Enter, q on an empty 2 GiB disk gives a plan file with 2 partitions, 1 MiB-aligned, that
// apply accepts (parses, with a layout).
TEST(PlannerScreenTest, DoneWhenSequenceExportsATwoPartitionPlan) {
  PlannerScreen s = Screen(test::EmptyDisk());
  EXPECT_EQ(Type(s, "n256M\n\nn\n\n").kind, PlannerEffect::Kind::kNone);
  EXPECT_EQ(s.model().layout().partitions.size(), 2u) << s.message();
  PlannerEffect e = Type(s, "eplan.json\n");
  ASSERT_EQ(e.kind, PlannerEffect::Kind::kWriteFile) << s.message();
  EXPECT_EQ(e.path, "plan.json");
  Result<Plan> plan = PlanFromJson(e.content);
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_TRUE(plan->layout);
  ASSERT_EQ(plan->layout->partitions.size(), 2u);
  for (const LayoutPartition& p : plan->layout->partitions) {
    EXPECT_EQ(p.start_sector * 512 % kMiB, 0u) << p.partition;
    EXPECT_EQ((p.end_sector + 1) * 512 % kMiB, 0u) << p.partition;
  }
  EXPECT_EQ(plan->layout->partitions[0].end_sector - plan->layout->partitions[0].start_sector + 1,
            256u * 2048);
  s.MarkExported();  // the session, once the file is written
  EXPECT_EQ(Type(s, "q").kind, PlannerEffect::Kind::kQuit);
}

TEST(PlannerScreenTest, ExportFormatsByExtension) {
  PlannerScreen s = Screen(test::EmptyDisk());
  Type(s, "n100M\nswap\n");
  PlannerEffect sf = Type(s, "ea.sfdisk\n");
  ASSERT_EQ(sf.kind, PlannerEffect::Kind::kWriteFile) << s.message();
  EXPECT_NE(sf.content.find("label: gpt"), std::string::npos) << sf.content;
  EXPECT_NE(sf.content.find("1 : start=2048, size=204800, type="), std::string::npos) << sf.content;
  EXPECT_NE(sf.content.find("0657FD6D-A4AB-43C4-84E5-0933C84B4F4F"), std::string::npos);
  PlannerEffect md = Type(s, "ea.md\n");
  ASSERT_EQ(md.kind, PlannerEffect::Kind::kWriteFile);
  EXPECT_EQ(md.content.rfind("#", 0), 0u) << md.content;
  EXPECT_EQ(Type(s, "ea.txt\n").kind, PlannerEffect::Kind::kNone);
  EXPECT_NE(s.message().find("must end in .json, .sfdisk or .md"), std::string::npos);
}

TEST(PlannerScreenTest, PromptsEditAndCancel) {
  PlannerScreen s = Screen(test::EmptyDisk());
  Type(s, "n12X\b\bM");
  EXPECT_EQ(s.mode(), PlannerMode::kPrompt);
  EXPECT_EQ(s.input(), "1M");
  EXPECT_NE(s.PromptText().find("Enter = all 2.00 GiB free"), std::string::npos) << s.PromptText();
  Type(s, "\x1b");
  EXPECT_EQ(s.mode(), PlannerMode::kList);
  EXPECT_TRUE(s.model().layout().partitions.empty());
  // A bad size is said before the type is asked.
  Type(s, "n5T\n");
  EXPECT_EQ(s.mode(), PlannerMode::kList);
  EXPECT_NE(s.message().find("does not fit"), std::string::npos) << s.message();
}

TEST(PlannerScreenTest, UndoDeleteResizeAndType) {
  PlannerScreen s = Screen(test::EmptyDisk());
  Type(s, "n100M\n\n");
  Type(s, "^");  // back to partition 1
  Type(s, "r300M\n");
  EXPECT_EQ(s.model().layout().partitions[0].size_bytes, 300 * kMiB) << s.message();
  Type(s, "tswap\n");
  EXPECT_EQ(s.model().layout().partitions[0].type, "0657FD6D-A4AB-43C4-84E5-0933C84B4F4F");
  Type(s, "u");
  EXPECT_EQ(s.model().layout().partitions[0].type, "0FC63DAF-8483-4772-8E79-3D69D8477DE4");
  Type(s, "d");
  EXPECT_TRUE(s.model().layout().partitions.empty());
  Type(s, "uu");
  EXPECT_EQ(s.model().layout().partitions[0].size_bytes, 100 * kMiB);
  Type(s, "uu");
  EXPECT_TRUE(s.model().layout().partitions.empty());
  EXPECT_EQ(s.message(), "nothing to undo");
}

TEST(PlannerScreenTest, WriteNeedsYes) {
  PlannerScreen s = Screen(test::EmptyDisk());
  Type(s, "n\n\n");
  EXPECT_EQ(Type(s, "wno\n").kind, PlannerEffect::Kind::kNone);
  EXPECT_EQ(s.message(), "not confirmed: nothing was written");
  PlannerEffect e = Type(s, "wyes\n");
  ASSERT_EQ(e.kind, PlannerEffect::Kind::kApply);
  ASSERT_TRUE(e.plan);
  ASSERT_TRUE(e.plan->layout);
  EXPECT_EQ(e.plan->layout->partitions.size(), 1u);
  EXPECT_NE(s.PromptText().find("Type yes to write this table to 'disk.img'"), std::string::npos);
}

TEST(PlannerScreenTest, TopologyCycleChangesVerdictsNotThePlan) {
  PlannerScreen s = Screen(test::MisalignedDisk());
  EXPECT_TRUE(s.profile_name().empty());
  Type(s, "aa");
  EXPECT_EQ(s.profile_name(), "usb-jmicron-0xffff");
  EXPECT_EQ(s.shown_topology().optimal_io_size, 33553920u);
  EXPECT_EQ(s.shown_topology().size_bytes, s.model().disk().device.topology.size_bytes);
  Type(s, "aa");
  EXPECT_TRUE(s.profile_name().empty());
  EXPECT_EQ(s.shown_topology(), s.model().disk().device.topology);
}

TEST(PlannerScreenTest, ExistingTableResizeShowsTheMove) {
  PlannerScreen s = Screen(test::MisalignedDisk());
  Type(s, "r\n");   // partition 1: up to 1 MiB
  Type(s, "vr\n");  // partition 2: down to 100 MiB, 200 MiB of ext4 to move
  EXPECT_NE(s.model().ChangeSummary().find("moving 200 MiB of data"), std::string::npos)
      << s.model().ChangeSummary() << " / " << s.message();
  PlannerEffect e = Type(s, "ealigned.json\n");
  ASSERT_EQ(e.kind, PlannerEffect::Kind::kWriteFile) << s.message();
  Result<Plan> plan = PlanFromJson(e.content);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->actions.at(1).kind, ActionKind::kMoveData);
}

// Issue #30 item 1 on the screen: m with a typed start, m with Enter, A, and x saying why.
TEST(PlannerScreenTest, MoveAndAlignAllKeys) {
  PlannerScreen s = Screen(test::LegacyDosDisk());
  Type(s, "vm");  // partition 2
  EXPECT_EQ(s.mode(), PlannerMode::kPrompt);
  EXPECT_NE(s.PromptText().find("New start (50M, N sectors; Enter = the nearest aligned start"),
            std::string::npos)
      << s.PromptText();
  Type(s, "50M\n");
  EXPECT_EQ(s.model().layout().partitions[1].start_bytes, 50 * kMiB) << s.message();
  EXPECT_NE(s.message().find("partition 2: "), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("move 39.06 MiB"), std::string::npos) << s.message();
  Type(s, "^^^m\n");  // partition 1 (a free MiB lies between them now): the nearest start with room
  EXPECT_EQ(s.model().layout().partitions[0].start_bytes, kMiB) << s.message();
  Type(s, "x");
  EXPECT_EQ(s.mode(), PlannerMode::kExplain);
  Type(s, "\n");
  EXPECT_EQ(s.mode(), PlannerMode::kList);
  Type(s, "uu");
  EXPECT_EQ(s.model().layout().partitions[0].start_bytes, 63u * 512);
  Type(s, "A");
  EXPECT_EQ(s.model().layout().partitions[0].start_bytes, kMiB);
  EXPECT_EQ(s.model().layout().partitions[1].start_bytes, 50 * kMiB);
  EXPECT_NE(s.message().find("every partition where partalign plan puts it: 2 moving"),
            std::string::npos)
      << s.message();
  PlannerEffect e = Type(s, "wyes\n");
  ASSERT_EQ(e.kind, PlannerEffect::Kind::kApply) << s.message();
  EXPECT_EQ(e.plan->actions.size(), 2u);
}

// Issue #30 item 6: q and Ctrl-C ask before edits are lost; y (or a second Ctrl-C) quits and
// says what was dropped; any other key stays.
TEST(PlannerScreenTest, QuitAsksWhenEditsAreNotWritten) {
  PlannerScreen s = Screen(test::EmptyDisk());
  EXPECT_EQ(Type(s, "q").kind, PlannerEffect::Kind::kQuit);  // nothing to lose
  Type(s, "n\n\n");
  EXPECT_TRUE(s.HasUnsavedEdits());
  EXPECT_EQ(Type(s, "q").kind, PlannerEffect::Kind::kNone);
  EXPECT_EQ(s.prompt(), PromptKind::kConfirmQuit);
  EXPECT_NE(s.PromptText().find("Quit? 1 new not written to 'disk.img'. y quits"),
            std::string::npos)
      << s.PromptText();
  EXPECT_EQ(Type(s, "n").kind, PlannerEffect::Kind::kNone);
  EXPECT_EQ(s.mode(), PlannerMode::kList);
  EXPECT_EQ(s.message(), "not quit: the layout is as it was");
  Type(s, "q");
  PlannerEffect quit = Type(s, "y");
  ASSERT_EQ(quit.kind, PlannerEffect::Kind::kQuit);
  EXPECT_EQ(quit.content, "q");
  EXPECT_EQ(quit.dropped, "1 new");
  // Ctrl-C: the same question, and a second Ctrl-C quits.
  EXPECT_EQ(s.Handle(Key::Of(KeyCode::kInterrupt)).kind, PlannerEffect::Kind::kNone);
  PlannerEffect ctrl_c = s.Handle(Key::Of(KeyCode::kInterrupt));
  ASSERT_EQ(ctrl_c.kind, PlannerEffect::Kind::kQuit);
  EXPECT_EQ(ctrl_c.content, "Ctrl-C");
  // Exported: nothing is lost by quitting.
  PlannerEffect exported = Type(s, "ea.json\n");
  ASSERT_EQ(exported.kind, PlannerEffect::Kind::kWriteFile);
  s.MarkExported();
  EXPECT_FALSE(s.HasUnsavedEdits());
  EXPECT_EQ(Type(s, "q").kind, PlannerEffect::Kind::kQuit);
}

// Issue #30 item 6: the type prompt says what Enter does and what the type is now, and does
// it; t on a partition holding data refuses at once.
TEST(PlannerScreenTest, TypePromptDoesWhatItSays) {
  PlannerScreen s = Screen(test::EmptyDisk());
  Type(s, "n100M\nswap\n^t");
  EXPECT_NE(s.PromptText().find("Enter = linux; now swap"), std::string::npos) << s.PromptText();
  Type(s, "\n");
  EXPECT_EQ(s.model().layout().partitions[0].type, "0FC63DAF-8483-4772-8E79-3D69D8477DE4");
  EXPECT_EQ(s.message(), "partition 1: type linux");
  PlannerScreen data = Screen(test::LegacyDosDisk());
  Type(data, "t");
  EXPECT_EQ(data.mode(), PlannerMode::kList);
  EXPECT_NE(data.message().find("partition 1 holds ext4"), std::string::npos) << data.message();
}

// Issue #30 item 6: in a DOS extended partition's free space, the hint and n agree: no new
// logical partitions.
TEST(PlannerScreenTest, FreeSpaceInsideTheExtendedPartitionSaysNIsNotForIt) {
  PlannerDisk d = test::EmptyDisk(256ull << 20);
  d.table.label = LabelType::kDos;
  d.table.first_usable_lba = 2048;
  d.table.last_usable_lba = (256ull << 20) / 512 - 1;
  auto add = [&](uint32_t n, PartitionKind kind, uint64_t start, uint64_t sectors) {
    Partition p;
    p.number = n;
    p.kind = kind;
    p.start_sector = start;
    p.size_sectors = sectors;
    p.type_code = kind == PartitionKind::kExtended ? "0x05" : "0x83";
    p.contents.proof = ContentProof::kZeros;
    d.table.partitions.push_back(p);
  };
  add(1, PartitionKind::kPrimary, 2048, 204800);
  add(2, PartitionKind::kExtended, 206848, 313344);
  add(5, PartitionKind::kLogical, 208896, 20480);
  PlannerScreen s = Screen(d);
  std::vector<PlannerRow> rows = s.rows();
  size_t inside = rows.size();
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].free && rows[i].inside_extended) inside = i;
  }
  ASSERT_LT(inside, rows.size());
  while (s.selected() < inside) s.Handle(Key::Of(KeyCode::kDown));
  PlannerFrame f = DrawPlanner(s, 120, 40);
  // The words of the screen, whatever the wrapping.
  std::string all;
  for (const std::string& l : f.lines) {
    const size_t begin = l.find_first_not_of(' ');
    if (begin != std::string::npos)
      all += l.substr(begin, l.find_last_not_of(' ') + 1 - begin) + " ";
  }
  EXPECT_EQ(all.find("n makes a partition here"), std::string::npos) << all;
  EXPECT_NE(all.find("partalign does not plan new logical partitions"), std::string::npos) << all;
  Type(s, "n");
  EXPECT_EQ(s.mode(), PlannerMode::kList);
  EXPECT_NE(s.message().find("partalign does not plan new logical partitions"), std::string::npos);
}

// Issue #30 item 4: the planner's own advice works. Its Markdown says to export the same plan
// as .json and apply that (no `partalign plan -o`, which would plan something else); a layout
// w refuses names undo and an .sfdisk export for review, and both do what they say.
TEST(PlannerScreenTest, ExportAdviceAndReviewScripts) {
  PlannerScreen s = Screen(test::MisalignedDisk());
  Type(s, "r\n");
  PlannerEffect md = Type(s, "ea.md\n");
  ASSERT_EQ(md.kind, PlannerEffect::Kind::kWriteFile) << s.message();
  EXPECT_NE(md.content.find("Export the same plan from the planner as a plan file (`e`, then a "
                            "name ending in `.json`, such as `plan.json`), then apply it with "
                            "`partalign apply plan.json`"),
            std::string::npos)
      << md.content;
  EXPECT_EQ(md.content.find("partalign plan -o"), std::string::npos) << md.content;
  PlannerEffect json = Type(s, "eplan.json\n");
  ASSERT_EQ(json.kind, PlannerEffect::Kind::kWriteFile);
  EXPECT_TRUE(PlanFromJson(json.content));

  Type(s, "vvvn\n\n");  // a new partition: a fresh table, which would lose partition 2's ext4
  Type(s, "w");
  EXPECT_NE(s.message().find("cannot write: "), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("(undo those edits, or export .sfdisk to review)"), std::string::npos)
      << s.message();
  PlannerEffect review = Type(s, "ereview.sfdisk\n");
  ASSERT_EQ(review.kind, PlannerEffect::Kind::kWriteFile) << s.message();
  EXPECT_EQ(review.content.rfind("# For review only: partalign apply refuses this layout", 0), 0u)
      << review.content;
  EXPECT_NE(review.content.find("label: gpt"), std::string::npos) << review.content;
  EXPECT_EQ(Type(s, "e.json\n").kind, PlannerEffect::Kind::kNone);  // a plan file: not that
  Type(s, "u");
  EXPECT_EQ(Type(s, "wyes\n").kind, PlannerEffect::Kind::kApply) << s.message();
}

TEST(PlannerScreenTest, HelpAndPlacementReturnOnAnyKey) {
  PlannerScreen s = Screen(test::EmptyDisk());
  Type(s, "?");
  EXPECT_EQ(s.mode(), PlannerMode::kHelp);
  Type(s, "x");
  EXPECT_EQ(s.mode(), PlannerMode::kList);
  Type(s, "n\n\np");
  EXPECT_EQ(s.mode(), PlannerMode::kPlacement);
  // Up and Down scroll the page instead of returning.
  s.Handle(Key::Of(KeyCode::kDown));
  s.Handle(Key::Of(KeyCode::kDown));
  s.Handle(Key::Of(KeyCode::kUp));
  EXPECT_EQ(s.mode(), PlannerMode::kPlacement);
  EXPECT_EQ(s.page_line(), 1u);
  Type(s, "\n");
  EXPECT_EQ(s.mode(), PlannerMode::kList);
  Type(s, "z");
  EXPECT_NE(s.message().find("'z' is not a key here"), std::string::npos);
  Type(s, "x");
  EXPECT_EQ(s.mode(), PlannerMode::kExplain);
  Type(s, "z");
  EXPECT_EQ(s.mode(), PlannerMode::kList);
}

// The disk of issue 38 (support/xp_table.h) in the planner, with each partition's limit as
// ReadShrinkLimit gives it: `swap_reason` empty, the swap may shrink to 1 MiB; else it cannot,
// for that reason. The filesystems may not give a MiB (their limit is their size).
PlannerDisk XpPlannerDisk(const std::string& swap_reason = "") {
  PlannerDisk d = test::EmptyDisk();
  d.table = test::XpDiskTable();
  d.table.fingerprint = "xxh64:0000000000000000";
  for (const Partition& p : d.table.partitions) {
    if (p.kind == PartitionKind::kExtended) continue;
    if (p.contents.fs_type == "swap" && swap_reason.empty()) {
      d.shrink_offers.push_back({p.number, ShrinkTool::kMkswap, "", kMiB, 64 * kKiB});
    } else if (p.contents.fs_type == "swap") {
      d.shrink_offers.push_back({p.number, std::nullopt, swap_reason, p.size_sectors * 512, 0});
    } else {
      d.shrink_offers.push_back({p.number, ShrinkWayFor(p.contents.fs_type).tool, "",
                                 p.size_sectors * 512, p.size_sectors * 512});
    }
  }
  return d;
}

// Issue 38: M shows the shrink plan --make-room takes and changes nothing until y; y puts it in
// the layout, aligns everything, and the plan w applies carries it; u takes it back.
TEST(PlannerScreenTest, MakeRoomIsShownAndTakenOnlyWithY) {
  PlannerScreen s = Screen(XpPlannerDisk());
  const PlannerLayout loaded = s.model().layout();
  Type(s, "M");
  ASSERT_EQ(s.mode(), PlannerMode::kPrompt);
  EXPECT_EQ(s.prompt(), PromptKind::kConfirmMakeRoom);
  const std::string offer = s.PromptText();
  EXPECT_NE(offer.find("make room: partition 7 (swap, 321.58 MiB) gives 2 MiB at its end, "
                       "shrunk by mkswap before any move (its contents use 64 KiB, it keeps at "
                       "least 1 MiB): the least invasive way that aligns partitions 1, 5 and 6"),
            std::string::npos)
      << offer;
  EXPECT_NE(offer.find("same UUID, label and page size"), std::string::npos) << offer;
  Type(s, "n");
  EXPECT_EQ(s.mode(), PlannerMode::kList);
  EXPECT_EQ(s.model().layout(), loaded);
  EXPECT_NE(s.message().find("no room made"), std::string::npos) << s.message();

  Type(s, "My");
  ASSERT_EQ(s.model().layout().shrinks.size(), 1u) << s.message();
  EXPECT_EQ(s.model().layout().shrinks[0].partition, 7u);
  EXPECT_EQ(s.model().layout().shrinks[0].tool, ShrinkTool::kMkswap);
  EXPECT_NE(s.model().ChangeSummary().find("partition 7 shrunk by 2 MiB first (mkswap)"),
            std::string::npos)
      << s.model().ChangeSummary();
  Result<Plan> plan = s.model().MakePlan();
  ASSERT_TRUE(plan) << plan.error().message;
  for (const PlanAction& a : plan->actions) {
    EXPECT_NE(a.kind, ActionKind::kImpossible) << a.partition << ": " << a.reason;
    EXPECT_EQ(a.shrink.has_value(), a.partition == 7) << a.partition;
  }
  Type(s, "M");
  EXPECT_EQ(s.mode(), PlannerMode::kList);
  EXPECT_NE(s.message().find("room is made already"), std::string::npos) << s.message();
  Type(s, "u");
  EXPECT_EQ(s.model().layout(), loaded);
}

// M takes every shrink plan --make-room takes, not only the first: on the full GPT disk of the
// sweep's seed 45, case 359 the swap and then an ext4 (one shrink left partitions 1 and 11
// impossible), and the plan w applies aligns every partition.
TEST(PlannerScreenTest, MakeRoomTakesEveryShrinkPlanMakeRoomTakes) {
  PlannerDisk d = test::EmptyDisk();
  d.table = test::Case359();
  d.shrink_offers = test::Case359Offers(d.table);
  PlannerScreen s = Screen(d);
  Type(s, "M");
  ASSERT_EQ(s.prompt(), PromptKind::kConfirmMakeRoom) << s.message();
  const std::string offer = s.PromptText();
  EXPECT_NE(offer.find("make room: partition 7 (swap"), std::string::npos) << offer;
  EXPECT_NE(offer.find("make room: partition 10 (ext4"), std::string::npos) << offer;
  EXPECT_NE(offer.find("y shrinks them"), std::string::npos) << offer;
  Type(s, "y");
  ASSERT_EQ(s.model().layout().shrinks.size(), 2u) << s.message();
  EXPECT_EQ(s.model().layout().shrinks[0].partition, 7u);
  EXPECT_EQ(s.model().layout().shrinks[1].partition, 10u);
  Result<Plan> plan = s.model().MakePlan();
  ASSERT_TRUE(plan) << plan.error().message;
  for (const PlanAction& a : plan->actions) {
    EXPECT_NE(a.kind, ActionKind::kImpossible) << a.partition << ": " << a.reason;
    EXPECT_EQ(a.shrink.has_value(), a.partition == 7 || a.partition == 10) << a.partition;
  }
  Type(s, "M");
  EXPECT_NE(s.message().find("room is made already: partition 7 shrinks by"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find(", partition 10 shrinks by"), std::string::npos) << s.message();
}

// A swap holding a hibernation image cannot give room: M says so, with the reason of each
// partition that cannot, and opens no prompt.
TEST(PlannerScreenTest, MakeRoomSaysWhyNoPartitionCanGiveIt) {
  PlannerScreen s = Screen(XpPlannerDisk("it holds a hibernation image"));
  const PlannerLayout loaded = s.model().layout();
  Type(s, "M");
  EXPECT_EQ(s.mode(), PlannerMode::kList);
  EXPECT_EQ(s.model().layout(), loaded);
  EXPECT_NE(s.message().find("nothing is shrunk"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("partition 7 (swap) cannot give room: it holds a hibernation image"),
            std::string::npos)
      << s.message();
  // A disk plan aligns as it is has nothing to make room for.
  PlannerScreen aligned = Screen(test::MisalignedDisk());
  Type(aligned, "M");
  EXPECT_NE(aligned.message().find("nothing to make room for"), std::string::npos)
      << aligned.message();
}

}  // namespace
}  // namespace partalign
