// SPDX-License-Identifier: GPL-3.0-or-later
// Table backup files on disk: written durably before apply's (or restore's) first write, read
// back and checked (every range's xxh64) before restore writes anything. The format is the core's
// (partalign/table/table_backup.h, docs/output.md).
#pragma once

#include <string>
#include <vector>

#include "partalign/table/table_backup.h"
#include "partalign/util/result.h"

namespace partalign {

/// Where backups go unless --backup-dir says otherwise: `backups` in the state directory
/// ($PARTALIGN_STATE_DIR, by default /var/lib/partalign), beside the registry of moves.
std::string DefaultBackupDir();

/// Creates `dir` and its parents (mode 0700) where missing: the backup directory, where the
/// planner also keeps the plan files it applies.
Status MakeBackupDirectory(const std::string& dir);

/// Fills each range's xxh64 (of the saved bytes) and applied_xxh64 (of `transition`'s new
/// bytes for the same range, when the ranges correspond one to one).
void HashBackupRanges(const TableTransition& transition, TableBackup* backup);

/// Writes `backup` as `dir`/`file_name` (creating `dir`, mode 0700, if missing) so that it is
/// on stable storage when this returns: written to a temporary name, fsynced, renamed into
/// place (never replacing an existing file), and the directory fsynced. Returns the path.
Result<std::string> WriteBackupFile(const std::string& dir, const std::string& file_name,
                                    const TableBackup& backup);

/// The table `backup`'s ranges hold, read as any table is (the validation gate, then libfdisk:
/// ReadPartitionTable) from a scratch copy of the disk's size that holds those ranges and
/// zeros. An error when it cannot be read, or when its label or fingerprint is not the one the
/// backup records: the ranges do not hold the table they claim (an edited offset, a range
/// missing).
Result<PartitionTable> ReadSavedTable(const TableBackup& backup);

/// The bytes on the open disk `fd` (named `path` in errors) now at each of `backup`'s ranges,
/// in its order: what RestoreTransition takes back to the saved bytes.
Result<std::vector<std::vector<uint8_t>>> ReadBackupRangesNow(int fd, const std::string& path,
                                                              const TableBackup& backup);

/// The xxh64 ("xxh64:" + 16 hex digits) of the bytes at each of `context` on the open disk
/// `fd`, in order; an entry is empty when it cannot be read.
std::vector<std::string> HashContext(int fd, const std::string& path,
                                     const std::vector<BackupContext>& context);

/// What the disk open as `fd` holds at each of `places` now, in order: libblkid's signature
/// (type, UUID, label) and the xxh64 of the first head_bytes (empty when they are all zero or
/// cannot be read). Fills a backup's BackupIdentity::partitions, and is compared with them.
std::vector<PartitionSeen> LookAtPartitions(int fd, const std::string& path,
                                            const std::vector<BackupPartition>& places);

/// Whether `backup` was taken from the disk `now`: BackupDeviceMismatches empty, the same loop
/// backing file where the backup names one, and the same path for a disk without serial, WWN
/// or backing file (two disks of one size are told apart by their path alone).
bool IsBackupOf(const TableBackup& backup, const BackupDevice& now);

/// Every backup in `dir` (files ending in kBackupSuffix) taken from the disk `now` (IsBackupOf),
/// read and checked (ReadBackupFile); files that cannot be read are skipped. None when `dir`
/// does not exist.
std::vector<TableBackup> FindDiskBackups(const std::string& dir, const BackupDevice& now);

/// Reads a backup file and checks it: format, and every range's bytes against its xxh64.
/// Errors name the file and what is wrong ("ranges[1]: xxh64 mismatch").
Result<TableBackup> ReadBackupFile(const std::string& path);

}  // namespace partalign
