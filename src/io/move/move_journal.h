// SPDX-License-Identifier: GPL-3.0-or-later
// A move journal on a BlockIo: the journal file in production, a simulated disk in the crash
// tests. Reads and writes each region of the format in partalign/move/journal_format.h; every write
// that the recovery argument depends on is followed by a flush before it returns.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "io/block/block_io.h"
#include "partalign/move/journal_format.h"
#include "partalign/move/move_plan.h"
#include "partalign/util/hasher.h"
#include "partalign/util/result.h"

namespace partalign {

class MoveJournal {
 public:
  /// Writes a new journal: header, the old and new table bytes, the copy map, and two empty state
  /// blocks (so that "no valid state" means "the device was never written"). Flushes. `io` must
  /// be at least header.layout.file_bytes long; the header must be complete
  /// (CompleteJournalHeader).
  static Result<MoveJournal> Initialize(BlockIo& io, const JournalHeader& header,
                                        std::span<const TableUpdate> table, const Hasher& hasher);
  /// Reads and checks the header, the copy map, and the latest state.
  static Result<MoveJournal> Load(BlockIo& io, const Hasher& hasher);

  MoveJournal(MoveJournal&& other) noexcept;

  const JournalHeader& header() const { return header_; }
  const MoveGeometry& move() const { return header_.move; }
  BlockIo& io() { return *io_; }
  const Hasher& hasher() const { return *hasher_; }

  /// The latest durable state, as read at Load() or last written.
  const std::optional<JournalState>& state() const { return state_; }
  /// Writes `state` with the next sequence number into the other state block and flushes: when
  /// it returns, the new state is durable and a torn write could only have hit the other block.
  Status WriteState(JournalState state);

  /// Version 1: writes the pre-scan digests and flushes. They are trusted only once a state that
  /// carries their checksum is written.
  Status WriteDigests(std::span<const Digest128> digests);
  /// The digest table, by copied chunk. The entries of the first KnownDigestSteps() forward
  /// steps are checked against the state's checksum (version 1: the whole table's; version 2:
  /// the digest chain); the others are whatever the file holds and are never trusted.
  Result<std::vector<Digest128>> ReadDigests();
  /// Forward steps whose digests the current state vouches for: none before the first state,
  /// every one in version 1, digests_known in version 2.
  uint64_t KnownDigestSteps() const;

  Result<std::vector<TableUpdate>> ReadTableUpdates();

  /// Journal offset of the ring slot of step `index` of a segment.
  uint64_t SlotOffset(uint64_t index) const;

 private:
  MoveJournal(BlockIo& io, JournalHeader header, const Hasher& hasher)
      : io_(&io), header_(std::move(header)), hasher_(&hasher) {}

  BlockIo* io_;
  JournalHeader header_;
  const Hasher* hasher_;
  std::mutex state_mutex_;
  std::optional<JournalState> state_;
};

}  // namespace partalign
