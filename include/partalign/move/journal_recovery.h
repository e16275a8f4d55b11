// SPDX-License-Identifier: GPL-3.0-or-later
// What `partalign resume` does next, given the durable state of a move journal. The I/O edge
// (src/io/move/mover.cc) reads the state, asks NextRecoveryStep(), performs the step - which always
// ends with a durable state change or the removal of the journal - and asks again. The proof that
// every state is recoverable is in docs/mover.md; this file is its executable form.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "partalign/move/journal_format.h"
#include "partalign/move/move_plan.h"
#include "partalign/util/result.h"

namespace partalign {

enum class ResumeMode {
  kComplete,  ///< finish the move and write the new table
  kRollback,  ///< put the data back and the old table with it
};

enum class RecoveryAction {
  /// No valid state: the device was never written. Pre-scan, store the digests, start moving.
  kScanAndStart,
  /// No valid state and a rollback was asked for: nothing to undo; remove the journal.
  kDiscard,
  /// Run the forward pass from state.forward_done (saved copies in the ring are used first).
  kContinueForward,
  /// Every step is durably at its destination: read it back and compare with the pre-scan.
  kVerifyForward,
  /// Data verified: record table-writing, write the new table bytes, flush, record done.
  kWriteNewTable,
  /// Finish the forward batches that may be in flight (moving), then record the rollback split.
  kBeginRollback,
  /// Write the old table bytes back, flush, then start moving the data back.
  kRestoreOldTable,
  /// Run the rollback pass from state.rollback_done.
  kContinueRollback,
  /// The data is back: read the source range and compare with the pre-scan.
  kVerifyRollback,
  /// Done: remove the journal (and its registration). The move is complete.
  kFinishCompleted,
  /// Rolled back: remove the journal. The old layout is in place.
  kFinishRolledBack,
};

const char* ToString(RecoveryAction action);

struct RecoveryStep {
  RecoveryAction action = RecoveryAction::kScanAndStart;
  /// For the user when the step is not what they asked for ("a rollback is in progress; it is
  /// continued"), else empty.
  std::string note;
};

/// The next step. Fails on a state that cannot come from this format (counters out of range).
Result<RecoveryStep> NextRecoveryStep(const std::optional<JournalState>& state,
                                      uint64_t chunk_count, ResumeMode mode);

/// Before a rollback, the forward batches after the last commit may be half written, with their
/// sources overwritten and only the journal's saved copies left. They are finished first. Given
/// which of the steps after `forward_done` have a valid saved copy (index 0 = step
/// forward_done), returns the forward step count to run up to: the end of the last batch that
/// holds a saved copy, or forward_done when none does.
uint64_t ForwardStepsToSettle(const MoveGeometry& move, uint64_t forward_done,
                              const std::vector<bool>& valid_copy_after_done);

/// What the device holds where a table update goes, sector by sector.
enum class TableBytesState {
  kOld,      ///< every sector is the old table
  kNew,      ///< every sector is the new table
  kMixed,    ///< each sector is old or new (a torn table write)
  kForeign,  ///< some sector is neither: someone else changed the table
};

TableBytesState ClassifyTableBytes(std::span<const uint8_t> on_device,
                                   std::span<const uint8_t> old_bytes,
                                   std::span<const uint8_t> new_bytes, uint64_t sector_size);

}  // namespace partalign
