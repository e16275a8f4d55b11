// SPDX-License-Identifier: GPL-3.0-or-later
// The journal as a file: created exclusively, preallocated, its directory entry made durable
// before the device is touched; opened under an exclusive lock so that two processes never
// drive the same journal; removed (and the removal made durable) when the move is over.
#pragma once

#include <memory>
#include <string>

#include "io/block/block_io.h"
#include "partalign/util/result.h"

namespace partalign {

/// Creates `path` (it must not exist), locks it, and reserves `size_bytes` (fallocate, so that
/// the move cannot run out of journal space half-way). The file and its directory entry are
/// durable when this returns.
Result<std::unique_ptr<FdBlockIo>> CreateJournalFile(const std::string& path, uint64_t size_bytes);

/// Opens an existing journal for resuming, with an exclusive lock (fails if another partalign
/// holds it). A path that is not a regular file (a FIFO, a device) is refused at once.
Result<std::unique_ptr<FdBlockIo>> OpenJournalFile(const std::string& path);

/// Opens an existing journal read-only, without a lock (to inspect it). Like OpenJournalFile,
/// refuses anything but a regular file before reading it, and never blocks.
Result<std::unique_ptr<FdBlockIo>> OpenJournalForReading(const std::string& path);

/// Removes the journal and makes the removal durable (fsync of the directory).
Status RemoveJournalFile(const std::string& path);

/// fsync() of the directory holding `path`, so that a created, renamed or removed entry
/// survives a power failure.
Status SyncParentDirectory(const std::string& path);

/// flock(LOCK_EX | LOCK_NB) of the open journal `fd`, waiting as RetryWhileBusy
/// (io/device/in_use.h) does for a holder that is going away; EWOULDBLOCK, "in use by another
/// partalign process", after that.
Status LockJournal(int fd, const std::string& path);

/// The absolute form of `path` (the journal records where it is for the registry).
std::string AbsolutePath(const std::string& path);

}  // namespace partalign
