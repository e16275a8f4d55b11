// SPDX-License-Identifier: GPL-3.0-or-later
// The registry of unfinished moves: one small file per journal in
// $PARTALIGN_STATE_DIR/journals (default /var/lib/partalign/journals), naming the journal and
// its device. `move` and `apply` look there to refuse a new change to a disk whose last move
// is unfinished, even when the journal itself lives elsewhere or is lost.
//
// The registry follows the journal's placement rules (mover.h, CheckRegistryPlacement): never
// on storage the move writes, never on a volatile file system.
#pragma once

#include <string>
#include <vector>

#include "partalign/move/journal_format.h"
#include "partalign/util/result.h"

namespace partalign {

/// $PARTALIGN_STATE_DIR/journals, or /var/lib/partalign/journals.
std::string JournalRegistryDir();

/// Where apply puts the journals of its moves unless --journal-dir says otherwise: the
/// registry's directory ($PARTALIGN_STATE_DIR/journals, or /var/lib/partalign/journals), where
/// `resume` and every command look for unfinished moves.
std::string DefaultJournalDir();

/// Writes the entry atomically (temporary file, fsync, rename, fsync of the directory).
Status RegisterJournal(const RegistryEntry& entry);

/// Removes the entry of journal `uuid` (no error if there is none) durably, with the temporary
/// file of a registration killed before its rename.
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
