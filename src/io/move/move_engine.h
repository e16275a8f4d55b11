// SPDX-License-Identifier: GPL-3.0-or-later
// The journaled data mover proper, on any pair of BlockIo: the device being changed and the
// journal. src/io/move/mover.h wraps it for real files (opening, locking, refusing dangerous
// journal locations, registering the journal); the crash tests run it on simulated disks.
//
// DriveJournal() repeats: read the durable state, ask NextRecoveryStep(), perform the step. Each
// step ends with a durable state change, so it can be interrupted at any instant and the next
// run continues from the last durable state (docs/mover.md has the argument).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "io/block/block_io.h"
#include "io/move/move_journal.h"
#include "partalign/move/journal_recovery.h"
#include "partalign/util/hasher.h"
#include "partalign/util/result.h"

namespace partalign {

struct MoveProgress {
  const char* phase = "";  ///< "scanning", "moving", "verifying", "moving back"
  uint64_t done_bytes = 0;
  uint64_t total_bytes = 0;
};

struct MoverHooks {
  /// Called from a worker thread after each batch; must be cheap and thread-safe.
  std::function<void(const MoveProgress&)> progress;
  /// Asked before each batch; when it returns true the mover finishes the batches in flight,
  /// leaves a consistent journal and returns MoveStatus::kStopped.
  std::function<bool()> stop_requested;
  /// Told each phase as it begins ("scan", "move", "verify", "table", "rollback",
  /// "rollback-table", "rollback-verify"); the test-only kill switch counts per phase.
  std::function<void(const char*)> on_phase;
};

enum class MoveStatus {
  kCompleted,       ///< data at the destination, verified; new table written
  kRolledBack,      ///< data back at the source, verified; old table in place
  kNothingWritten,  ///< a rollback of a move that never wrote the device
  kStopped,         ///< stopped part-way (error or request); the journal holds a consistent state
};

const char* ToString(MoveStatus status);

/// Where a move's time goes, one stage of its pipeline (docs/mover.md §5): the time spent
/// inside the stage (the stages run at once, each on its own thread, so their times overlap
/// and add up to more than the move's), the bytes it read or wrote, and its flushes.
struct StageProfile {
  double seconds = 0;
  uint64_t bytes = 0;
  uint64_t batches = 0;  ///< times the stage ran (a journal or commit run may cover several)
  uint64_t flushes = 0;
  double flush_seconds = 0;
};

/// The stages of the pipeline, in order: read (the source, or saved copies), journal (saved
/// copies and digests, then a flush of the journal), write (the destination), commit (a flush
/// of the device, then the state), read-back (the destination, against the digests).
enum class MoveStage { kRead, kJournal, kWrite, kCommit, kReadBack };
inline constexpr size_t kMoveStageCount = static_cast<size_t>(MoveStage::kReadBack) + 1;
/// The stage's index: in the pipeline (pipeline.h) and in MoveStats::stages.
constexpr size_t IndexOf(MoveStage stage) { return static_cast<size_t>(stage); }
const char* ToString(MoveStage stage);

struct MoveStats {
  uint64_t moved_bytes = 0;       ///< bytes this run wrote to their destination (either way)
  uint64_t saved_copy_bytes = 0;  ///< bytes of saved copies written to the journal
  double scan_seconds = 0;
  double move_seconds = 0;
  double verify_seconds = 0;
  /// The pipeline's stages, over every pass of this run (forward and rollback).
  std::array<StageProfile, kMoveStageCount> stages{};
  /// Digest of the moved data (XXH3-128 over the copied chunks' digests), once every digest is
  /// known.
  std::optional<Digest128> range_digest;
};

struct MoveOutcome {
  MoveStatus status = MoveStatus::kStopped;
  /// kStopped: why ("cannot read '/dev/sdb' at byte ...", "interrupted").
  std::string message;
  /// kStopped because the forward pass could not read the source: what was moved can be
  /// rolled back from the journal (StartMove does so at once).
  bool source_unreadable = false;
  /// kStopped because a saved copy the journal needed is damaged beyond repair and the source
  /// no longer holds that chunk: resuming again, or rolling back, stops at the same chunk.
  bool journal_damaged = false;
  /// Things the user should know that are not errors.
  std::vector<std::string> notes;
  MoveStats stats;
};

/// Runs the journal to its end in `mode`, on `device`. Fails only when the journal's own data is
/// unusable (digest table corrupt); every other failure is a kStopped outcome.
Result<MoveOutcome> DriveJournal(BlockIo& device, MoveJournal& journal, ResumeMode mode,
                                 const MoverHooks& hooks);

/// What DriveJournal checks before it writes anything (docs/mover.md §7, "What resume checks
/// first"): whether the disk holds the state the journal describes - sampled moved chunks where
/// the state says they are, by their digests; no state only when the digest table is empty
/// too. nullopt when it does, else what was found (DriveJournal refuses with it). Reads only.
Result<std::optional<std::string>> ProveJournalState(BlockIo& device, MoveJournal& journal);

/// What `device` holds where the move writes outside its source (DestinationOutsideSource), as
/// restore_only updates for the journal: a rollback puts them back once the data is back
/// (docs/mover.md §4). Refused when they exceed kMaxDestinationOutsideSourceBytes.
Result<std::vector<TableUpdate>> DestinationPreimage(BlockIo& device, const MoveGeometry& move);

}  // namespace partalign
