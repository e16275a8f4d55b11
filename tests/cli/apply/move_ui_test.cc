// SPDX-License-Identifier: GPL-3.0-or-later
// What apply, move and resume print when the mover stops: the command that finishes the move,
// and none when the journal lost the only copy of a chunk (resume would stop at it again).
#include "cli/apply/move_ui.h"

#include <gtest/gtest.h>

#include <sstream>

namespace partalign {
namespace {

const MoveGeometry kMove{63 * 512, 2048 * 512, 64ull << 20, 4 << 20, 4, 8};

TEST(ReportOutcomeTest, AStoppedMoveNamesTheResumeAndTheRollback) {
  std::ostringstream out, err;
  MoveOutcome outcome;
  outcome.message = "interrupted";
  EXPECT_EQ(ReportOutcome({out, err}, outcome, kMove, 1, "/j/p1.partalign-journal", "/dev/loop3"),
            ExitCode::kUnfinished);
  EXPECT_EQ(err.str(),
            "partalign: interrupted\n"
            "partalign: the move is unfinished and '/dev/loop3' is part-way; run 'partalign "
            "resume /j/p1.partalign-journal' to complete it, or 'partalign resume --rollback "
            "/j/p1.partalign-journal' to undo it\n");
}

// Issue 37: a stop because the journal is damaged said "run 'partalign resume ...'", which
// stops at the same chunk, and the mover's message blamed the disk ("the disk changed under the
// move"). It says what is damaged and names no command that cannot work.
TEST(ReportOutcomeTest, ADamagedJournalNamesNoResumeThatStopsAgain) {
  std::ostringstream out, err;
  MoveOutcome outcome;
  outcome.journal_damaged = true;
  outcome.message = "the journal is damaged: ...";
  EXPECT_EQ(ReportOutcome({out, err}, outcome, kMove, 1, "/j/p1.partalign-journal", "/dev/loop3"),
            ExitCode::kUnfinished);
  EXPECT_EQ(err.str(),
            "partalign: the journal is damaged: ...\n"
            "partalign: the move is unfinished and '/dev/loop3' is part-way, and its journal "
            "'/j/p1.partalign-journal' lost the only copy of those bytes: 'partalign resume' and "
            "'partalign resume --rollback' stop at the same chunk; nothing more was written\n");
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace partalign
