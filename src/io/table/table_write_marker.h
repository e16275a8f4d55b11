// SPDX-License-Identifier: GPL-3.0-or-later
// A table write under way: translate marks its write in $PARTALIGN_STATE_DIR/table-writes (by
// default /var/lib/partalign/table-writes) with a file that names the backup it took, written
// durably after the backup and before the first sector, and removed once the write is
// verified. A marker left behind is a write that was interrupted (killed, power lost): the
// commands that read the disk afterwards find it by the disk's identity (not its path, which
// may change) and, when the table is torn, name the restore of that backup (docs/migration.md,
// "Interrupted").
#pragma once

#include <string>
#include <vector>

#include "partalign/table/table_backup.h"
#include "partalign/util/result.h"

namespace partalign {

/// $PARTALIGN_STATE_DIR/table-writes, or /var/lib/partalign/table-writes.
std::string TableWriteMarkerDir();

/// Marks a write whose backup is `backup_path` (absolute): durable when this returns. Returns
/// the marker's path.
Result<std::string> MarkTableWrite(const std::string& backup_path);

/// Removes the marker at `marker_path` (and makes that durable). A missing marker is no error.
Status UnmarkTableWrite(const std::string& marker_path);

/// A marker left behind, and the backup it names (read and checked: ReadBackupFile).
struct MarkedTableWrite {
  std::string marker_path;
  std::string backup_path;
  TableBackup backup;
};

/// Every marker whose backup was taken from the disk `now` (BackupDeviceMismatches empty; a
/// disk without serial, WWN or loop backing file must also have the backup's path), oldest
/// first. A marker that cannot be read, or whose backup is gone or corrupt, is skipped.
std::vector<MarkedTableWrite> FindMarkedTableWrites(const BackupDevice& now);

}  // namespace partalign
