// SPDX-License-Identifier: GPL-3.0-or-later
// What resume does from each journal state: the executable form of docs/mover.md's case
// analysis. Every state leads, through steps that each end in a later state, to "completed" or
// "rolled back".
#include "partalign/move/journal_recovery.h"

#include <gtest/gtest.h>

namespace partalign {
namespace {

using enum RecoveryAction;

constexpr uint64_t kChunks = 10;

JournalState State(JournalPhase phase, uint64_t forward, uint64_t split = 0, uint64_t back = 0) {
  return {phase, 1, forward, split, back, 0};
}

TEST(JournalRecoveryTest, EachStateHasOneNextStep) {
  struct Case {
    std::optional<JournalState> state;
    ResumeMode mode;
    RecoveryAction expected;
    bool has_note;
  };
  using P = JournalPhase;
  const ResumeMode kC = ResumeMode::kComplete;
  const ResumeMode kR = ResumeMode::kRollback;
  const Case cases[] = {
      {std::nullopt, kC, kScanAndStart, false},
      {std::nullopt, kR, kDiscard, false},
      {State(P::kMoving, 0), kC, kContinueForward, false},
      {State(P::kMoving, 4), kC, kContinueForward, false},
      {State(P::kMoving, kChunks), kC, kVerifyForward, false},
      {State(P::kMoving, 4), kR, kBeginRollback, false},
      {State(P::kMoving, kChunks), kR, kBeginRollback, false},
      {State(P::kDataMoved, kChunks), kC, kWriteNewTable, false},
      {State(P::kDataMoved, kChunks), kR, kBeginRollback, false},
      {State(P::kTableWriting, kChunks), kC, kWriteNewTable, false},
      {State(P::kTableWriting, kChunks), kR, kBeginRollback, false},
      {State(P::kDone, kChunks), kC, kFinishCompleted, false},
      {State(P::kDone, kChunks), kR, kFinishCompleted, true},
      {State(P::kRollbackTable, 4, 4), kR, kRestoreOldTable, false},
      {State(P::kRollbackTable, 4, 4), kC, kRestoreOldTable, true},
      {State(P::kRollingBack, 4, 4, 2), kR, kContinueRollback, false},
      {State(P::kRollingBack, 4, 4, 2), kC, kContinueRollback, true},
      {State(P::kRollingBack, 4, 4, 4), kR, kVerifyRollback, false},
      {State(P::kRolledBack, 4, 4, 4), kR, kFinishRolledBack, false},
  };
  for (const Case& c : cases) {
    Result<RecoveryStep> step = NextRecoveryStep(c.state, kChunks, c.mode);
    ASSERT_TRUE(step);
    EXPECT_EQ(step->action, c.expected)
        << (c.state ? ToString(c.state->phase) : "no state") << " -> " << ToString(step->action);
    EXPECT_EQ(!step->note.empty(), c.has_note) << ToString(c.expected);
  }
}

TEST(JournalRecoveryTest, ImpossibleCountersAreRejected) {
  EXPECT_FALSE(
      NextRecoveryStep(State(JournalPhase::kMoving, kChunks + 1), kChunks, ResumeMode::kComplete));
  EXPECT_FALSE(
      NextRecoveryStep(State(JournalPhase::kRollingBack, 4, 4, 5), kChunks, ResumeMode::kRollback));
  EXPECT_FALSE(NextRecoveryStep(State(JournalPhase::kRollingBack, 4, kChunks + 1, 0), kChunks,
                                ResumeMode::kRollback));
}

TEST(JournalRecoveryTest, SettlingFinishesTheBatchesThatHoldSavedCopies) {
  const MoveGeometry move{0, 4096, 10 * 4096, 4096, 2, 3};  // 10 chunks, batches of 2
  EXPECT_EQ(ForwardStepsToSettle(move, 4, {false, false, false, false}), 4u);
  EXPECT_EQ(ForwardStepsToSettle(move, 4, {true, false}), 6u);
  EXPECT_EQ(ForwardStepsToSettle(move, 4, {false, true, false, true, false}), 8u);
  EXPECT_EQ(ForwardStepsToSettle(move, 8, {false, true}), 10u);
  const MoveGeometry odd{0, 4096, 9 * 4096, 4096, 2, 3};  // the last batch has one chunk
  EXPECT_EQ(ForwardStepsToSettle(odd, 8, {true}), 9u);
}

TEST(JournalRecoveryTest, TableBytesAreClassifiedBySector) {
  const std::vector<uint8_t> old_bytes(1024, 0xaa);
  const std::vector<uint8_t> new_bytes(1024, 0xbb);
  std::vector<uint8_t> mixed = old_bytes;
  std::fill(mixed.begin() + 512, mixed.end(), 0xbb);
  std::vector<uint8_t> foreign = old_bytes;
  foreign[700] = 0;
  EXPECT_EQ(ClassifyTableBytes(old_bytes, old_bytes, new_bytes, 512), TableBytesState::kOld);
  EXPECT_EQ(ClassifyTableBytes(new_bytes, old_bytes, new_bytes, 512), TableBytesState::kNew);
  EXPECT_EQ(ClassifyTableBytes(mixed, old_bytes, new_bytes, 512), TableBytesState::kMixed);
  EXPECT_EQ(ClassifyTableBytes(foreign, old_bytes, new_bytes, 512), TableBytesState::kForeign);
  // A sector that is neither, even if it mixes old and new bytes within itself (torn below
  // sector size) is someone else's: only whole sectors count.
  std::vector<uint8_t> torn_sector = old_bytes;
  std::fill(torn_sector.begin(), torn_sector.begin() + 100, 0xbb);
  EXPECT_EQ(ClassifyTableBytes(torn_sector, old_bytes, new_bytes, 512), TableBytesState::kForeign);
}

}  // namespace
}  // namespace partalign
