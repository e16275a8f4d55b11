// The registry of unfinished moves: one small file per journal in
// $PARTALIGN_STATE_DIR/journals (default /var/lib/partalign/journals), naming the journal and
// its device. `move` and `apply` look there to refuse a new change to a disk whose last move
// is unfinished, even when the journal itself lives elsewhere or is lost.
//
// The registry is never on the disk being moved: that disk has no mounted partition during a
// move, so /var/lib cannot be on it.
#pragma once

#include <string>
#include <vector>

#include "partalign/move/journal_format.h"
#include "partalign/util/result.h"

namespace partalign {

/// $PARTALIGN_STATE_DIR/journals, or /var/lib/partalign/journals.
std::string JournalRegistryDir();

/// Writes the entry atomically (temporary file, fsync, rename, fsync of the directory).
Status RegisterJournal(const RegistryEntry& entry);

/// Removes the entry of journal `uuid` (no error if there is none) durably.
Status UnregisterJournal(const JournalUuid& uuid);

struct RegisteredJournal {
  std::string entry_path;
  RegistryEntry entry;
};

/// Every readable entry. Unreadable entries are errors: they might be a move in progress.
Result<std::vector<RegisteredJournal>> ListRegisteredJournals();

/// The registered journals whose device is `device` (DeviceMismatch finds nothing).
Result<std::vector<RegisteredJournal>> FindRegisteredJournals(const JournalDevice& device);

}  // namespace partalign
