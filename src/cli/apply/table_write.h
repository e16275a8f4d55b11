// SPDX-License-Identifier: GPL-3.0-or-later
// What the commands that write a partition table (apply, restore) share: their options
// (--yes, --dry-run, --backup-dir, --target, --assume, --sector-size), the confirmation, the
// in-use checks and exclusive lock, the backup, the ordered write, and telling the kernel.
// docs/apply.md describes the sequence; each step prints what it did.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/cli11_fwd.h"

#include "cli/commands.h"
#include "io/device/device_probe.h"
#include "io/device/in_use.h"
#include "io/device/target.h"
#include "io/table/backup_file.h"
#include "io/table/table_writer.h"
#include "partalign/layout/partition_table.h"
#include "partalign/table/table_backup.h"
#include "partalign/table/table_transition.h"

namespace partalign {

struct TableWriteOptions {
  std::string target;  ///< --target: the disk, when not the one the plan or backup names
  std::string assume;
  std::optional<std::string> sector_size;
  bool yes = false;
  bool dry_run = false;
  std::string backup_dir = DefaultBackupDir();
  /// apply --at-next-boot: every check of a dry run, with the partitions the write changes
  /// allowed to be in use now (the running system's: they are changed at the next boot, before
  /// anything mounts them; docs/at-boot.md).
  bool at_next_boot = false;
};

/// The time now, UTC, as strftime(3) `format` puts it.
std::string UtcTime(const char* format);

/// Prints the failure of a table write that had started, and the way back: the restore
/// command for `backup`. Returns kFailure.
ExitCode FailedAfterWrite(Streams io, const std::string& message, const std::string& backup);

/// Registers --target, --assume, --sector-size, --yes, --dry-run and --backup-dir.
void AddTableWriteOptions(CLI::App* command, TableWriteOptions* options);

/// --assume and --sector-size as ProbeOptions; errors name the option.
Result<ProbeOptions> MakeProbeOptions(const TableWriteOptions& options);

/// True to go ahead. With --yes, true. On a terminal, asks `question` (" [y/N] " appended)
/// and reads the answer from standard input. Without a terminal and without --yes, prints why
/// it refuses and returns false (the caller exits with kRefused: nothing written).
bool Confirm(Streams io, const std::string& question, bool yes);

/// The partitions whose place the kernel must change from `before` to `after` (moved, resized,
/// deleted, added or renumbered), and every byte of the table sectors `ranges` that change:
/// what a table write of that transition changes (a type or name change touches no kernel
/// partition). Other partitions may stay in use (issue #29).
WriteScope TableWriteScope(const PartitionTable& before, const PartitionTable& after,
                           const std::vector<TableRange>& ranges);

/// After a refusal because partitions in `scope` are in use: when one of them is (a mount, an
/// active swap, not a user of the whole disk), says on io.err that `apply --at-next-boot` moves
/// it before anything mounts it. Nothing otherwise.
void SayNextBootWay(Streams io, const std::string& path, const WriteScope& scope);

/// Before the confirmation (and in the dry run): who uses the disk, and whether the write may
/// go ahead. Users outside `scope` are listed on `io.out` as staying ("In use, left alone:
/// partition 1 ('/dev/sda1') is mounted on '/'"); a user inside it is an error and false
/// (`*code` = kRefused; nothing was written). With `at_next_boot` (TableWriteOptions), a user
/// of a partition inside it is listed as waiting for the next boot instead.
bool ShowDiskUsers(Streams io, const std::string& path, const WriteScope& scope, ExitCode* code,
                   bool at_next_boot = false);

/// The end of a dry run: "Dry run: nothing was written.", or for --at-next-boot that every
/// check passed and nothing is written now.
void SayDryRunDone(Streams io, const TableWriteOptions& write);

/// The disk, checked and held for writing: nobody uses it or its partitions (each user is
/// printed), then opened with O_EXCL and flock'ed. nullopt after printing the refusal
/// (`*code` = kRefused) or the error (`*code` = kFailure).
/// Unfinished moves are looked for in the registry, the journal directory and `journal_dirs`
/// (found: `*code` = kUnfinished).
/// `scope`: what the write changes (WriteScope); partitions outside it may stay in use, and are
/// named on `io.err` as staying ("partition 1 ('/dev/sda1') is mounted on '/': it stays in use;
/// this write neither reads nor writes it"). The claims on the changed partitions are in the
/// returned target (Target::claims).
std::optional<Target> AcquireForWrite(Streams io, const std::string& path, ExitCode* code,
                                      const std::vector<std::string>& journal_dirs = {},
                                      const WriteScope& scope = WriteScope::WholeDisk());

/// What a backup file needs at most: the table sectors (base64), their context digests and the
/// sfdisk dump of a 128-partition GPT fit in far less.
inline constexpr uint64_t kBackupFileBytes = 1024 * 1024;

/// Before the confirmation: `dir` (`what`: "the backup directory") can take `bytes` of files
/// now - it is a directory, or can be made (its nearest existing ancestor is one), on a file
/// system mounted read-write and writable, with that much space free. With `create`, it is
/// made. The error names the directory and what is wrong.
Status CheckDirectoryFor(const std::string& dir, const std::string& what, uint64_t bytes,
                         bool create);

/// Refuses (false, after printing why; `*code` kUnfinished, the one status of an unfinished
/// move) a disk with an unfinished move: the registry's, or a journal for it in the journal
/// directory or `journal_dirs`. Read-only: for the checks before the confirmation. A target that
/// cannot be opened, or is a partition, passes: the command reports it.
bool NoUnfinishedMove(Streams io, const std::string& path,
                      const std::vector<std::string>& journal_dirs, ExitCode* code);

/// The test-only hooks (PARTALIGN_TEST_KILL_AFTER_SECTORS, PARTALIGN_TEST_SLOW_WRITES_US).
TableWriteHooks HooksFromEnvironment();

/// The backup's record of the disk.
BackupDevice BackupDeviceOf(const DeviceInfo& device, const Target& target);

/// The sectors the table on the disk uses that `chain` (apply's steps, in order, from `first`
/// to `last`) leaves in a gap (AbandonedTableRanges) and that hold exactly what an earlier apply
/// of partalign wrote there (an EBR an interrupted apply left in a gap): the step that abandons
/// each gets, as its new bytes, what the sector held before partalign's first table there
/// (BytesBeforeOwnTables over the disk's backups in `backup_dir`), so that the gap ends as it
/// began across applies (docs/apply.md). Others are left as they are. Reads only.
Status RestoreAbandonedGaps(const DeviceInfo& device, const Target& disk,
                            const std::string& backup_dir,
                            const std::vector<TableTransition*>& chain, const PartitionTable& first,
                            const PartitionTable& last);

/// A backup of the ranges of `transition` (their old bytes) with everything else filled in,
/// the context (the bytes around the ranges) read from `target`, outside the partitions of
/// `tables` (the table before and after the write; null entries are skipped).
TableBackup MakeBackup(const std::string& command, const DeviceInfo& device, const Target& target,
                       const TableTransition& transition, const std::string& table_fingerprint,
                       const std::string& applied_table_fingerprint, const std::string& sfdisk_dump,
                       const std::vector<const PartitionTable*>& tables);

/// Writes `backup` durably into `dir` and prints its path. nullopt after printing the error,
/// followed by `then` (what the disk is left with).
std::optional<std::string> SaveBackup(Streams io, const std::string& dir, const TableBackup& backup,
                                      const std::string& then = "nothing was written");

/// Prints the ranges of `transition` (changed ones, or all with `all`) as a table: step, area,
/// first sector, sectors, byte offset, bytes.
void PrintRanges(std::ostream& out, const TableTransition& transition, bool all);

/// Brings the kernel's partitions of the block device `target` in line with `table` (BLKPG)
/// and prints what it did and what the kernel now sees. Image files: nothing to do. False
/// after printing why, and what to do, when the kernel could not be updated.
bool UpdateKernel(Streams io, Target& target, const PartitionTable& table);

}  // namespace partalign
