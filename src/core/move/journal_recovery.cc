// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/move/journal_recovery.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace partalign {

const char* ToString(RecoveryAction action) {
  switch (action) {
    case RecoveryAction::kScanAndStart:
      return "scan-and-start";
    case RecoveryAction::kDiscard:
      return "discard";
    case RecoveryAction::kContinueForward:
      return "continue-forward";
    case RecoveryAction::kVerifyForward:
      return "verify-forward";
    case RecoveryAction::kWriteNewTable:
      return "write-new-table";
    case RecoveryAction::kBeginRollback:
      return "begin-rollback";
    case RecoveryAction::kRestoreOldTable:
      return "restore-old-table";
    case RecoveryAction::kContinueRollback:
      return "continue-rollback";
    case RecoveryAction::kVerifyRollback:
      return "verify-rollback";
    case RecoveryAction::kFinishCompleted:
      return "finish-completed";
    case RecoveryAction::kFinishRolledBack:
      return "finish-rolled-back";
  }
  return "unknown";
}

Result<RecoveryStep> NextRecoveryStep(const std::optional<JournalState>& state,
                                      uint64_t chunk_count, ResumeMode mode) {
  const bool rollback = mode == ResumeMode::kRollback;
  if (!state) {
    if (rollback) return RecoveryStep{RecoveryAction::kDiscard, ""};
    return RecoveryStep{RecoveryAction::kScanAndStart, ""};
  }
  if (state->forward_done > chunk_count || state->rollback_split > chunk_count ||
      state->rollback_done > state->rollback_split) {
    return MakeError(fmt::format(
        "the journal state is inconsistent (phase {}, {} of {} chunks moved, rollback {} of {})",
        ToString(state->phase), state->forward_done, chunk_count, state->rollback_done,
        state->rollback_split));
  }
  const std::string continuing_rollback =
      rollback ? "" : "a rollback was in progress; it is continued (a rollback cannot be undone)";
  switch (state->phase) {
    case JournalPhase::kMoving:
      if (rollback) return RecoveryStep{RecoveryAction::kBeginRollback, ""};
      if (state->forward_done < chunk_count) {
        return RecoveryStep{RecoveryAction::kContinueForward, ""};
      }
      return RecoveryStep{RecoveryAction::kVerifyForward, ""};
    case JournalPhase::kDataMoved:
    case JournalPhase::kTableWriting:
      if (rollback) return RecoveryStep{RecoveryAction::kBeginRollback, ""};
      return RecoveryStep{RecoveryAction::kWriteNewTable, ""};
    case JournalPhase::kDone:
      return RecoveryStep{
          RecoveryAction::kFinishCompleted,
          rollback ? "the move had already completed; nothing was rolled back" : ""};
    case JournalPhase::kRollbackTable:
      return RecoveryStep{RecoveryAction::kRestoreOldTable, continuing_rollback};
    case JournalPhase::kRollingBack:
      if (state->rollback_done < state->rollback_split) {
        return RecoveryStep{RecoveryAction::kContinueRollback, continuing_rollback};
      }
      return RecoveryStep{RecoveryAction::kVerifyRollback, continuing_rollback};
    case JournalPhase::kRolledBack:
      return RecoveryStep{RecoveryAction::kFinishRolledBack, continuing_rollback};
  }
  return MakeError("the journal state has an unknown phase");
}

uint64_t ForwardStepsToSettle(const MoveGeometry& move, uint64_t forward_done,
                              const std::vector<bool>& valid_copy_after_done) {
  const uint64_t total = ChunkCount(move);
  uint64_t settle = forward_done;
  for (size_t i = 0; i < valid_copy_after_done.size(); ++i) {
    if (!valid_copy_after_done[i]) continue;
    const uint64_t batch_end =
        (BatchOf(forward_done + i, move.chunks_per_batch) + 1) * move.chunks_per_batch;
    settle = std::max(settle, std::min(batch_end, total));
  }
  return settle;
}

TableBytesState ClassifyTableBytes(std::span<const uint8_t> on_device,
                                   std::span<const uint8_t> old_bytes,
                                   std::span<const uint8_t> new_bytes, uint64_t sector_size) {
  if (on_device.size() != old_bytes.size() || new_bytes.size() != old_bytes.size() ||
      sector_size == 0) {
    return TableBytesState::kForeign;
  }
  bool all_old = true;
  bool all_new = true;
  for (size_t at = 0; at < on_device.size(); at += sector_size) {
    const size_t n = std::min<size_t>(sector_size, on_device.size() - at);
    const bool is_old = std::memcmp(&on_device[at], &old_bytes[at], n) == 0;
    const bool is_new = std::memcmp(&on_device[at], &new_bytes[at], n) == 0;
    if (!is_old && !is_new) return TableBytesState::kForeign;
    all_old = all_old && is_old;
    all_new = all_new && is_new;
  }
  if (all_old) return TableBytesState::kOld;
  if (all_new) return TableBytesState::kNew;
  return TableBytesState::kMixed;
}

}  // namespace partalign
