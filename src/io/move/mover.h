// SPDX-License-Identifier: GPL-3.0-or-later
// The journaled data mover, for real devices and image files: what `partalign move`,
// `partalign resume` and `partalign apply` call. It moves a byte range to a new offset on the
// same device, crash-safe at every instant, and then writes the caller's partition-table bytes,
// as one journaled operation: after a crash, ResumeMove() either completes both or rolls both
// back. Design and proof: docs/mover.md.
//
// How apply uses it (a plan whose actions include a data move):
//   1. Target t = OpenTarget(disk, {.write = true, .exclusive = true});
//   2. CheckMoveAllowed(t, journal_path)            -> refuse (exit 3) on error
//   3. compute the table sectors before/after with libfdisk on a scratch copy, as TableUpdates
//      {offset, old_bytes, new_bytes} (MBR/GPT headers and entry arrays, EBRs)
//   4. StartMove(t, {{source, dest, length}, updates, journal_path}, hooks)
//      - Error: nothing was written; kStopped: tell the user to run `partalign resume JOURNAL`;
//        kCompleted: data moved and verified, new table on disk.
//   5. tell the kernel (BLKPG) about the new partition start; the mover does not.
// Before any other write to a disk, apply calls FindUnfinishedJournals(DescribeMoveDevice(t))
// and refuses if there is one.
#pragma once

#include <cerrno>
#include <optional>
#include <string>
#include <vector>

#include "io/device/target.h"
#include "io/move/journal_registry.h"
#include "io/move/move_engine.h"
#include "partalign/move/journal_format.h"
#include "partalign/move/journal_recovery.h"
#include "partalign/move/move_plan.h"
#include "partalign/util/byte_extent.h"
#include "partalign/util/result.h"

namespace partalign {

struct MoveRequest {
  /// source_bytes, dest_bytes, length_bytes; chunk_bytes may be changed, the batch fields are
  /// best left at their defaults.
  MoveGeometry move;
  /// Written after the data is moved and verified (new), in this order with a flush after each
  /// range, or on rollback (old) in the reverse order. apply passes the changed ranges of its
  /// TableTransition in their crash-safe order. May be empty.
  std::vector<TableUpdate> table;
  /// Where the journal file goes: a new file, on another disk (CheckMoveAllowed).
  std::string journal_path;
  /// What the used map said (recorded in the journal, shown by resume); move.copy is what the
  /// mover copies. Empty source: no used map, every chunk.
  UsedSummary used;
  /// A step that moves no data (move.length_bytes 0, source = dest): what it does, for the
  /// journal's header and `resume` ("shrink the ext4 of partition 5 from ... to ..."); its
  /// `table` holds every change it makes (docs/mover.md, "Steps that move no data").
  std::string step;
};

/// The size of the journal file a move of `request` makes (its header, table data, copy map,
/// digest table, state blocks and ring): what its directory must have free.
uint64_t JournalFileBytes(const MoveRequest& request);

/// Copies only the chunks `map` uses: sets request.move.copy (for its chunk size) and
/// request.used. The map must be of the moved range (length_bytes).
Status UseOnlyUsedChunks(MoveRequest& request, const UsedMap& map);

/// The identity a journal records for `target` (size, sector size, serial/WWN, the backing file
/// of a loop device, the inode of an image file).
Result<JournalDevice> DescribeMoveDevice(const Target& target,
                                         const std::string& sysfs_root = "/sys");

/// Everything that makes a move refuse to start (exit status 3 in the CLI), checked before
/// anything is written: a journal location that the move could overwrite or a power failure
/// erase (docs/mover.md, "Where the journal may live"), an existing journal file, a target that
/// is a partition, anything using the disk (mounts, swap, holders, loop devices on an image),
/// an unfinished journal registered for the disk. `target` may be open read-only.
/// `writes`: the bytes of the disk the move writes (MoveWrites; empty: any byte, so that a
/// user of any partition or a journal anywhere on the disk refuses it). A journal allowed on
/// the disk itself (on a partition the move does not write) puts the line saying so in `note`.
/// `at_next_boot`: the check of a move staged for the next boot (docs/at-boot.md), which runs
/// before anything mounts the partitions: their users now do not refuse it, a user of the whole
/// disk does.
Status CheckMoveAllowed(const Target& target, const std::string& journal_path,
                        const std::vector<ByteExtent>& writes = {}, std::string* note = nullptr,
                        bool at_next_boot = false);

/// The bytes of the disk a move writes: its source (a rollback writes it back), its
/// destination and its table updates.
std::vector<ByteExtent> MoveWrites(const MoveGeometry& move,
                                   const std::vector<TableUpdateInfo>& table);
std::vector<ByteExtent> MoveWrites(const MoveRequest& request);

/// Refuses a registry (JournalRegistryDir) that a move on `target` could overwrite or a power
/// failure erase: the journal's placement rules (docs/mover.md §9), since a lost registry
/// makes an unfinished move invisible. Creates the directory.
Status CheckRegistryPlacement(const Target& target, const std::vector<ByteExtent>& writes = {});

/// "'/dev/sdb' has an unfinished move (journal 'J'); run 'partalign resume J' to complete it or
/// 'partalign resume --rollback J' to undo it first": why nothing else may write the disk.
/// When the journal recorded another name for the disk (renamed since: sdb -> sdc), the
/// commands say --device `device_path`, so that they work as printed.
std::string UnfinishedMoveMessage(const std::string& device_path, const RegisteredJournal& j);

/// The errno_value of the Error CheckMoveAllowed (and StartMove) return when the disk has an
/// unfinished move: a move is already in progress on it. The CLI exits 4 for it, as for every
/// unfinished move, whoever finds it and whenever.
inline constexpr int kUnfinishedMoveErrno = EALREADY;

/// The whole disks of this machine (`sysfs_root`/block) that are the device `recorded`
/// describes (DeviceMismatch finds nothing): where a renamed disk is now. Devices that cannot be
/// opened are skipped; image files are never searched for.
std::vector<std::string> FindJournalDevice(const JournalDevice& recorded,
                                           const std::string& sysfs_root = "/sys");

/// Whether the journal's recorded path still opens the device it recorded.
bool RecordedPathIsTheDevice(const JournalDevice& recorded);

/// "--device /dev/sdc " when the disk of journal `j` is no longer at its recorded path and is
/// found under one other name (FindJournalDevice), else "": what `partalign resume` needs to
/// find it.
std::string DeviceOptionFor(const RegisteredJournal& j);

/// The unfinished moves of this device: registered ones, and the journals found in the journal
/// directory (the registry's, DefaultJournalDir()) and in `journal_dirs` whose header names the
/// device, registered or not (a registry on storage that was lost, or a journal copied aside).
/// A journal file whose header cannot be read is not counted: by I8 its move never wrote the
/// device (docs/mover.md §3); ListUnfinishedMoves lists it with an empty device.
Result<std::vector<RegisteredJournal>> FindUnfinishedJournals(
    const JournalDevice& device, const std::vector<std::string>& journal_dirs = {});

/// Every unfinished move of the machine: the registry's entries and the journals of the
/// journal directory and `journal_dirs` (the same rules as FindUnfinishedJournals), and the
/// journal files there whose header cannot be read and that no registration names (entry_path
/// and device empty: a move interrupted while starting, or a file that is no journal).
Result<std::vector<RegisteredJournal>> ListUnfinishedMoves(
    const std::vector<std::string>& journal_dirs = {});

/// Whether another process holds the journal file's lock (a move is running with it, or is
/// creating it: CreateJournalFile locks it first), after waiting for it as RetryWhileBusy does:
/// a partalign killed with the journal's I/O in flight holds it for milliseconds after it died.
Result<bool> IsJournalLocked(const std::string& journal_path);

/// Runs a new move to its end. `target` must be open for writing (exclusively for a block
/// device); the mover takes its flock. An Error means nothing changed and no journal is left:
/// nothing was written, or the copy pass met a read error in the source and moved back what it
/// had moved. A kStopped outcome means the device is part-way and the journal (registered) holds a
/// consistent state: `partalign resume` completes or rolls back.
Result<MoveOutcome> StartMove(const Target& target, const MoveRequest& request,
                              const MoverHooks& hooks = {});

struct JournalSummary {
  std::string path;
  JournalHeader header;
  std::optional<JournalState> state;  ///< nullopt: the move never wrote the device
};

/// Whether a journal file at `journal_path` is in the registry. A journal that is unreadable
/// and not registered belongs to a move that never started: the header is flushed, then the
/// journal registered, and only then is the device written.
Result<bool> IsJournalRegistered(const std::string& journal_path);

/// Reads a journal without changing it (takes no lock).
Result<JournalSummary> InspectJournal(const std::string& journal_path);

/// Completes or rolls back the move of `journal_path` on `target` (which must be the device the
/// journal records, open for writing). Removes the journal and its registration when the move
/// is over either way.
Result<MoveOutcome> ResumeMove(const Target& target, const std::string& journal_path,
                               ResumeMode mode, const MoverHooks& hooks = {});

/// Before resume asks anything: whether the disk `target` (open, read-only is enough) holds the
/// state the journal at `journal_path` describes (ProveJournalState). nullopt when it does, else
/// what was found; writes nothing. ResumeMove checks it again once the disk is held.
Result<std::optional<std::string>> CheckResumable(const Target& target,
                                                  const std::string& journal_path);

/// `resume --forget`: removes the journal (and its registration) of a move whose disk no
/// longer holds it - restored from a copy, or finished by other means - after proving that:
/// `target` (the journal's device, held: O_EXCL and its flock) does not hold the journal's state
/// (ProveJournalState), or the move never wrote it, or it is over. Refuses when the disk holds an
/// unfinished move's state, which forgetting would make unrecoverable. Writes nothing to the
/// device. Returns what it found, for the user.
Result<std::string> ForgetJournal(const Target& target, const std::string& journal_path);

/// Test builds and scripts: how many kill points the PARTALIGN_TEST_KILL_AFTER switch counted in
/// this process (0 when it is not set).
uint64_t KillPointsCounted();

}  // namespace partalign
