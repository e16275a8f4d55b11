// SPDX-License-Identifier: GPL-3.0-or-later
// A move set up on simulated disks (simulated_disk.h): a random device image, optional table
// updates at both ends of the device (and in the vacated source), the journal header - and a check
// of the device afterwards against what a completed or rolled-back move must leave. Shared by the
// crash and engine tests.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "io/move/move_engine.h"
#include "io/move/move_journal.h"
#include "io/util/xxhash_hasher.h"
#include "partalign/move/journal_format.h"
#include "support/simulated_disk.h"

namespace partalign::test {

inline constexpr uint64_t kSimSector = 512;

class SimulatedMove {
 public:
  /// `with_table`: table updates at both ends of the device. `table_in_vacated_source`: one more
  /// sector of table in the part of the source the move vacates (a DOS head EBR that moves up
  /// with its logical partition), whose old bytes are the source's data there.
  /// `version`: the journal format (kJournalVersionV1 for a journal written before the copy
  /// map, whose move copies every chunk).
  /// `patches`: that many more updates of 1 to 16 sectors spread over the middle of the device,
  /// disjoint: the changes of a step that moves no data (a shrink, move.length_bytes 0).
  SimulatedMove(uint64_t device_bytes, const MoveGeometry& move, bool with_table, uint64_t seed,
                bool table_in_vacated_source = false, uint32_t version = kJournalVersion,
                uint64_t patches = 0);

  const std::vector<uint8_t>& original() const { return original_; }
  const JournalHeader& header() const { return header_; }
  const std::vector<TableUpdate>& table() const { return table_; }
  const Hasher& hasher() const { return hasher_; }
  std::mt19937_64& rng() { return rng_; }

  /// A device holding the original image, and an empty journal of the right size.
  SimulatedDisk NewDevice(CrashClock* clock = nullptr) const;
  SimulatedDisk NewJournalDisk(CrashClock* clock = nullptr) const;

  /// Why `image` is not what a move that ended with `status` leaves, or "": the copied chunks'
  /// data at its new (or old) place, the matching table bytes, and every other byte as it was -
  /// after a rollback the copied chunks' destinations too, except for journals of versions 1
  /// and 2 (which did not keep them). A move that copies only some chunks never writes the
  /// destination of the others.
  std::string Mismatch(MoveStatus status, const std::vector<uint8_t>& image) const;

 private:
  std::mt19937_64 rng_;
  XxHasher hasher_;
  std::vector<uint8_t> original_;
  std::vector<TableUpdate> table_;
  JournalHeader header_;
};

}  // namespace partalign::test
