// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/move/mover.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "io/device/in_use.h"
#include "io/device/storage_chain.h"
#include "io/device/sysfs_identity.h"
#include "io/move/journal_file.h"
#include "io/move/kill_switch.h"
#include "io/move/move_journal.h"
#include "io/util/unique_fd.h"
#include "io/util/xxhash_hasher.h"
#include "partalign/util/shell_quote.h"
#include "partalign/util/version.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;

const XxHasher kHasher;
std::atomic<uint64_t> g_kill_points_counted{0};

Status LockTarget(const Target& target) {
  return RetryWhileBusy([&] { return LockExclusive(target); });
}

Status RequireWritable(const Target& target) {
  const int flags = ::fcntl(target.fd.get(), F_GETFL);
  if (flags < 0 || (flags & O_ACCMODE) != O_RDWR) {
    return MakeError(fmt::format("'{}' is not open for writing", target.path));
  }
  return {};
}

// Refuses users of what the move writes (`writes`; empty: the whole disk). A partition whose
// bytes the move neither reads nor writes may stay in use (issue #29); with `partitions_released`
// (a move staged for the next boot) so may every partition.
Status RefuseUsers(const Target& target, const std::vector<ByteExtent>& writes,
                   bool partitions_released = false) {
  Result<std::vector<DiskUser>> users = FindDiskUsers(target.path);
  if (!users) return users.error();
  WriteScope scope;
  scope.whole_disk = writes.empty();
  scope.bytes = writes;
  std::string message;
  for (const DiskUser& u : *users) {
    if (partitions_released && u.partition != 0) continue;
    if (Blocks(u, scope)) message += (message.empty() ? "" : "; ") + Describe(u);
  }
  if (message.empty()) return {};
  return MakeError(fmt::format("'{}' is in use: {}", target.path, message));
}

Result<JournalUuid> NewUuid() {
  JournalUuid uuid{};
  if (::getrandom(uuid.data(), uuid.size(), 0) != static_cast<ssize_t>(uuid.size())) {
    return ErrnoError(errno, "cannot get random bytes for the journal id");
  }
  return uuid;
}

// The device I/O of one run: the O_DIRECT descriptor, wrapped by the test-only kill switch
// when PARTALIGN_TEST_KILL_AFTER is set.
struct RunIo {
  std::unique_ptr<FdBlockIo> device;
  std::unique_ptr<FdBlockIo> journal_file;
  std::unique_ptr<KillSwitch> kill_switch;
  std::unique_ptr<KillSwitchIo> killable_device;
  std::unique_ptr<KillSwitchIo> killable_journal;

  BlockIo& device_io() {
    if (killable_device) return *killable_device;
    return *device;
  }
  BlockIo& journal_io() {
    if (killable_journal) return *killable_journal;
    return *journal_file;
  }

  Status Arm() {
    // Counting goes on from the moves this process ran before (apply runs one per step).
    Result<std::unique_ptr<KillSwitch>> armed =
        KillSwitch::FromEnvironment(g_kill_points_counted.load());
    if (!armed) return armed.error();
    kill_switch = std::move(*armed);
    if (kill_switch) {
      killable_device = std::make_unique<KillSwitchIo>(*device, *kill_switch);
      killable_journal = std::make_unique<KillSwitchIo>(*journal_file, *kill_switch);
    }
    return {};
  }

  MoverHooks Hooks(const MoverHooks& hooks) {
    MoverHooks with = hooks;
    if (kill_switch) {
      with.on_phase = [this, inner = hooks.on_phase](const char* phase) {
        kill_switch->EnterPhase(phase);
        if (inner) inner(phase);
      };
    }
    return with;
  }

  ~RunIo() {
    if (kill_switch) g_kill_points_counted = kill_switch->counted();
  }
};

// A move that is over (either way) leaves no journal behind. The registration goes first, so
// that a registered journal always exists (I8 of docs/mover.md): a crash between the two
// leaves a finished journal nothing refers to, which resume completes. The other order left a
// registration whose journal was gone: every later move of the disk was refused, naming a
// journal that resume could not open.
void Finish(const std::string& journal_path, const JournalUuid& uuid, MoveOutcome& outcome) {
  if (Status unregistered = UnregisterJournal(uuid); !unregistered) {
    outcome.notes.push_back(fmt::format(
        "the journal registration could not be removed: {}; the journal '{}' is kept, and "
        "'partalign resume {}' removes both",
        unregistered.error().message, journal_path, ShellQuote(journal_path)));
    return;
  }
  if (Status removed = RemoveJournalFile(journal_path); !removed) {
    outcome.notes.push_back("the journal could not be removed: " + removed.error().message);
  }
}

}  // namespace

Result<JournalDevice> DescribeMoveDevice(const Target& target, const std::string& sysfs_root) {
  JournalDevice device;
  device.path = target.path;
  device.is_block_device = target.kind == TargetKind::kBlockDevice;
  device.size_bytes = target.size_bytes;
  device.logical_sector_size = target.logical_sector_size;
  struct stat st {};
  if (!device.is_block_device) {
    if (::fstat(target.fd.get(), &st) != 0) {
      return ErrnoError(errno, fmt::format("cannot stat '{}'", target.path));
    }
    device.path = AbsolutePath(target.path);
    device.file_dev = st.st_dev;
    device.file_ino = st.st_ino;
    return device;
  }
  device.major = target.major;
  device.minor = target.minor;
  Result<Identity> identity = ReadSysfsIdentity(sysfs_root, target.major, target.minor);
  if (!identity) return identity.error();
  if (identity->is_partition) {
    return MakeError(fmt::format(
        "'{}' is a partition; the mover works on whole disks (and image files), with byte "
        "offsets from the start of the disk",
        target.path));
  }
  device.serial = identity->serial;
  device.wwn = identity->wwn;
  device.backing_file = identity->backing_file;
  if (!device.backing_file.empty() && ::stat(device.backing_file.c_str(), &st) == 0) {
    device.file_dev = st.st_dev;
    device.file_ino = st.st_ino;
  }
  return device;
}

std::string UnfinishedMoveMessage(const std::string& device_path, const RegisteredJournal& j) {
  const JournalDevice& recorded = j.entry.device;
  const bool renamed = recorded.path != device_path && recorded.path != AbsolutePath(device_path);
  const std::string device = renamed ? "--device " + ShellQuote(device_path) + " " : "";
  const std::string journal = ShellQuote(j.entry.journal_path);
  return fmt::format(
      "'{}' has an unfinished move (journal '{}'); run 'partalign resume {}{}' to complete it or "
      "'partalign resume --rollback {}{}' to undo it first",
      device_path, j.entry.journal_path, device, journal, device, journal);
}

std::vector<std::string> FindJournalDevice(const JournalDevice& recorded,
                                           const std::string& sysfs_root) {
  std::vector<std::string> found;
  if (!recorded.is_block_device) return found;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(sysfs_root + "/block", ec)) {
    // The size first (sysfs, in 512-byte units): most disks are ruled out without opening them.
    std::ifstream size_file(e.path() / "size");
    uint64_t sectors = 0;
    if (!(size_file >> sectors) || sectors * 512 != recorded.size_bytes) continue;
    const std::string path = "/dev/" + e.path().filename().string();
    Result<Target> target = OpenTarget(path);
    if (!target) continue;
    Result<JournalDevice> device = DescribeMoveDevice(*target, sysfs_root);
    if (device && !DeviceMismatch(recorded, *device)) found.push_back(path);
  }
  std::sort(found.begin(), found.end());
  return found;
}

bool RecordedPathIsTheDevice(const JournalDevice& recorded) {
  Result<Target> target = OpenTarget(recorded.path);
  if (!target) return false;
  Result<JournalDevice> device = DescribeMoveDevice(*target);
  return device && !DeviceMismatch(recorded, *device);
}

std::string DeviceOptionFor(const RegisteredJournal& j) {
  if (RecordedPathIsTheDevice(j.entry.device)) return "";
  const std::vector<std::string> found = FindJournalDevice(j.entry.device);
  if (found.size() != 1) return "";
  return "--device " + ShellQuote(found.front()) + " ";
}

namespace {

// The journals in `dirs` (and the journal directory) whose header can be read, not already in
// `known`, as registry-like entries (entry_path empty: not registered).
void AddJournalsIn(const std::vector<std::string>& dirs, std::vector<RegisteredJournal>* known) {
  std::vector<std::string> all = dirs;
  all.push_back(DefaultJournalDir());
  std::vector<std::string> seen_dirs;
  for (const std::string& dir : all) {
    std::error_code ec;
    const std::string canonical = fs::weakly_canonical(dir, ec).string();
    if (ec || std::find(seen_dirs.begin(), seen_dirs.end(), canonical) != seen_dirs.end()) {
      continue;
    }
    seen_dirs.push_back(canonical);
    for (const fs::directory_entry& e : fs::directory_iterator(canonical, ec)) {
      const std::string name = e.path().filename().string();
      if (name.size() <= kJournalFileSuffix.size() ||
          name.compare(name.size() - kJournalFileSuffix.size(), std::string::npos,
                       kJournalFileSuffix) != 0) {
        continue;
      }
      const std::string path = e.path().string();
      if (std::any_of(known->begin(), known->end(),
                      [&](const RegisteredJournal& j) { return j.entry.journal_path == path; })) {
        continue;
      }
      Result<JournalSummary> summary = InspectJournal(path);
      // No valid header: its move never wrote the device (I8), and the file names no device
      // (an empty one: no device matches it). Listed so that `resume` names it and its removal.
      if (!summary) {
        known->push_back({"", {path, {}, {}}});
        continue;
      }
      known->push_back({"", {path, summary->header.uuid, summary->header.device}});
    }
  }
}

}  // namespace

Result<std::vector<RegisteredJournal>> FindUnfinishedJournals(
    const JournalDevice& device, const std::vector<std::string>& journal_dirs) {
  Result<std::vector<RegisteredJournal>> all = ListUnfinishedMoves(journal_dirs);
  if (!all) return all;
  std::vector<RegisteredJournal> matching;
  for (RegisteredJournal& journal : *all) {
    if (!DeviceMismatch(journal.entry.device, device)) matching.push_back(std::move(journal));
  }
  return matching;
}

Result<std::vector<RegisteredJournal>> ListUnfinishedMoves(
    const std::vector<std::string>& journal_dirs) {
  Result<std::vector<RegisteredJournal>> registered = ListRegisteredJournals();
  if (!registered) return registered;
  AddJournalsIn(journal_dirs, &*registered);
  return registered;
}

Result<bool> IsJournalLocked(const std::string& journal_path) {
  UniqueFd fd(::open(journal_path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) return ErrnoError(errno, fmt::format("cannot open '{}'", journal_path));
  // A partalign killed while it wrote the journal holds the lock until its I/O in flight ends
  // (LockJournal waits for that). The lock is released with the fd.
  Status lock = LockJournal(fd.get(), journal_path);
  if (lock) return false;
  if (lock.error().errno_value == EWOULDBLOCK) return true;
  return lock.error();
}

std::vector<ByteExtent> MoveWrites(const MoveGeometry& move,
                                   const std::vector<TableUpdateInfo>& table) {
  std::vector<ByteExtent> writes = {{move.source_bytes, move.length_bytes},
                                    {move.dest_bytes, move.length_bytes}};
  for (const TableUpdateInfo& t : table) writes.push_back({t.offset_bytes, t.length_bytes});
  return writes;
}

std::vector<ByteExtent> MoveWrites(const MoveRequest& request) {
  std::vector<TableUpdateInfo> table;
  for (const TableUpdate& t : request.table) {
    table.push_back({.offset_bytes = t.offset_bytes, .length_bytes = t.new_bytes.size()});
  }
  return MoveWrites(request.move, table);
}

Status CheckRegistryPlacement(const Target& target, const std::vector<ByteExtent>& writes) {
  const std::string dir = JournalRegistryDir();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return ErrnoError(ec.value(), fmt::format("cannot create '{}'", dir));
  // Writable now, not found unwritable after the confirmation and the backup: a move starts by
  // registering its journal there.
  struct statvfs info {};
  if (::statvfs(dir.c_str(), &info) != 0) {
    return ErrnoError(errno, fmt::format("the registry of unfinished moves ({})", dir));
  }
  if ((info.f_flag & ST_RDONLY) != 0 || ::access(dir.c_str(), W_OK | X_OK) != 0) {
    return MakeError(fmt::format(
        "the registry of unfinished moves ({}) is not writable ({}); set PARTALIGN_STATE_DIR to "
        "a writable directory on a disk the move does not write",
        dir, (info.f_flag & ST_RDONLY) != 0 ? "a read-only file system" : std::strerror(errno)));
  }
  if (Status placed = CheckJournalPlacement(dir + "/registry", target, writes); !placed) {
    return MakeError(
        fmt::format("the registry of unfinished moves ({}): {}", dir, placed.error().message));
  }
  return {};
}

Status CheckMoveAllowed(const Target& target, const std::string& journal_path,
                        const std::vector<ByteExtent>& writes, std::string* note,
                        bool at_next_boot) {
  // The journal's place first: it is the check whose answer does not change by unmounting.
  if (Status placement = CheckJournalPlacement(journal_path, target, writes, note); !placement) {
    return placement;
  }
  struct stat st {};
  if (::lstat(journal_path.c_str(), &st) == 0) {
    return MakeError(fmt::format(
        "the journal '{}' already exists; if it belongs to an unfinished move run 'partalign "
        "resume {}', else choose another path",
        journal_path, ShellQuote(journal_path)));
  }
  Result<JournalDevice> device = DescribeMoveDevice(target);
  if (!device) return device.error();
  if (Status users = RefuseUsers(target, writes, at_next_boot); !users) return users;
  if (Status registry = CheckRegistryPlacement(target, writes); !registry) return registry;
  const std::string dir = fs::path(AbsolutePath(journal_path)).parent_path().string();
  Result<std::vector<RegisteredJournal>> unfinished = FindUnfinishedJournals(*device, {dir});
  if (!unfinished) return unfinished.error();
  if (!unfinished->empty()) {
    return Error{UnfinishedMoveMessage(target.path, unfinished->front()), kUnfinishedMoveErrno};
  }
  return {};
}

Result<MoveOutcome> StartMove(const Target& target, const MoveRequest& request,
                              const MoverHooks& hooks) {
  if (Status w = RequireWritable(target); !w) return w.error();
  if (Status locked = LockTarget(target); !locked) return locked.error();
  if (Status allowed = CheckMoveAllowed(target, request.journal_path, MoveWrites(request));
      !allowed) {
    return allowed.error();
  }
  if (Status valid =
          ValidateMove(request.move, target.size_bytes, target.logical_sector_size, request.table);
      !valid) {
    return valid.error();
  }
  Result<JournalDevice> device = DescribeMoveDevice(target);
  if (!device) return device.error();
  Result<JournalUuid> uuid = NewUuid();
  if (!uuid) return uuid.error();

  RunIo io;
  Result<std::unique_ptr<FdBlockIo>> device_io =
      OpenDirectIo(target.path, target.size_bytes, target.fd.get());
  if (!device_io) return device_io.error();
  io.device = std::move(*device_io);
  // The bytes the move writes outside its source range, as they are now: a rollback puts them
  // back (docs/mover.md §4), so that a rolled-back disk holds every byte there as it was.
  std::vector<TableUpdate> table = request.table;
  Result<std::vector<TableUpdate>> preimage = DestinationPreimage(*io.device, request.move);
  if (!preimage) return preimage.error();
  // Moved, not copied: up to the shift, or a whole copy moved beyond its source.
  table.insert(table.end(), std::make_move_iterator(preimage->begin()),
               std::make_move_iterator(preimage->end()));
  if (Status valid =
          ValidateMove(request.move, target.size_bytes, target.logical_sector_size, table);
      !valid) {
    return valid.error();
  }

  JournalHeader header;
  header.uuid = *uuid;
  header.created_by = std::string("partalign ") + kVersion;
  header.device = *device;
  header.move = request.move;
  for (const TableUpdate& update : table) {
    header.table.push_back({update.offset_bytes, update.old_bytes.size(),
                            kHasher.Hash64(update.old_bytes), kHasher.Hash64(update.new_bytes),
                            update.in_data, update.restore_only});
  }
  header.used = request.used;
  if (request.move.length_bytes == 0 && request.table.empty()) {
    return MakeError("a step that moves no data and writes nothing has nothing to journal");
  }
  if (request.step.size() > kMaxStepBytes) {
    return MakeError(fmt::format("the step's description is longer than {} bytes", kMaxStepBytes));
  }
  header.step = request.step;
  CompleteJournalHeader(header, kHasher);

  const std::string journal_path = AbsolutePath(request.journal_path);
  // Registered before the file exists ("starting"): a kill at any instant from here on leaves
  // a registration that audit, apply and resume find, naming the journal file (issue #37: a kill
  // between the file's creation and its registration left a journal nothing listed).
  if (Status registered =
          RegisterJournal({journal_path, header.uuid, header.device, /*starting=*/true});
      !registered) {
    return MakeError(registered.error().message + "; nothing was written to '" + target.path + "'");
  }
  auto abandon = [&](const Error& error) -> Error {
    (void)UnregisterJournal(header.uuid);  // first, as in Finish()
    (void)RemoveJournalFile(journal_path);
    return MakeError(error.message + "; nothing was written to '" + target.path + "'");
  };
  Result<std::unique_ptr<FdBlockIo>> journal_file =
      CreateJournalFile(journal_path, header.layout.file_bytes);
  if (!journal_file) {
    // The file may be another's (it existed): only the registration is ours to remove.
    (void)UnregisterJournal(header.uuid);
    return MakeError(journal_file.error().message + "; nothing was written to '" + target.path +
                     "'");
  }
  io.journal_file = std::move(*journal_file);
  if (Status armed = io.Arm(); !armed) return abandon(armed.error());
  Result<MoveJournal> journal = MoveJournal::Initialize(io.journal_io(), header, table, kHasher);
  if (!journal) return abandon(journal.error());
  // The header is durable: the registration loses "starting" before the first device write.
  if (Status registered = RegisterJournal({journal_path, header.uuid, header.device});
      !registered) {
    return abandon(registered.error());
  }

  Result<MoveOutcome> outcome =
      DriveJournal(io.device_io(), *journal, ResumeMode::kComplete, io.Hooks(hooks));
  if (!outcome) return outcome;
  if (outcome->status == MoveStatus::kStopped && !journal->state()) {
    // Stopped before the first write (the old table was not there): nothing to resume.
    return abandon(MakeError(outcome->message));
  }
  if (outcome->status == MoveStatus::kStopped && outcome->source_unreadable) {
    // The source has a read error (the copy pass found it; there is no pre-scan any more): undo
    // what was moved, from the journal, so that the disk is as it was.
    Result<MoveOutcome> back =
        DriveJournal(io.device_io(), *journal, ResumeMode::kRollback, io.Hooks(hooks));
    if (back && back->status == MoveStatus::kRolledBack) {
      Finish(journal_path, header.uuid, *back);
      return MakeError(fmt::format(
          "{}; the chunks moved before it were moved back: '{}' is as it was and its table "
          "unchanged",
          outcome->message, target.path));
    }
    outcome->notes.push_back("the automatic rollback after the read error did not finish: " +
                             (back ? back->message : back.error().message));
  }
  if (outcome->status != MoveStatus::kStopped) Finish(journal_path, header.uuid, *outcome);
  return outcome;
}

Result<bool> IsJournalRegistered(const std::string& journal_path) {
  Result<std::vector<RegisteredJournal>> all = ListRegisteredJournals();
  if (!all) return all.error();
  const std::string absolute = AbsolutePath(journal_path);
  for (const RegisteredJournal& j : *all) {
    if (j.entry.journal_path == absolute) return true;
  }
  return false;
}

Result<JournalSummary> InspectJournal(const std::string& journal_path) {
  Result<std::unique_ptr<FdBlockIo>> io = OpenJournalForReading(journal_path);
  if (!io) return io.error();
  Result<MoveJournal> journal = MoveJournal::Load(**io, kHasher);
  if (!journal) return journal.error();
  return JournalSummary{AbsolutePath(journal_path), journal->header(), journal->state()};
}

Result<MoveOutcome> ResumeMove(const Target& target, const std::string& journal_path,
                               ResumeMode mode, const MoverHooks& hooks) {
  if (Status w = RequireWritable(target); !w) return w.error();
  if (Status locked = LockTarget(target); !locked) return locked.error();
  RunIo io;
  Result<std::unique_ptr<FdBlockIo>> journal_file = OpenJournalFile(journal_path);
  if (!journal_file) return journal_file.error();
  io.journal_file = std::move(*journal_file);
  // The header is read before the kill switch wraps the journal: it only counts writes.
  Result<MoveJournal> journal = MoveJournal::Load(*io.journal_file, kHasher);
  if (!journal) return journal.error();
  Result<JournalDevice> device = DescribeMoveDevice(target);
  if (!device) return device.error();
  if (std::optional<std::string> mismatch = DeviceMismatch(journal->header().device, *device)) {
    return MakeError(*mismatch);
  }
  if (Status users =
          RefuseUsers(target, MoveWrites(journal->header().move, journal->header().table));
      !users) {
    return users.error();
  }
  Result<std::unique_ptr<FdBlockIo>> device_io =
      OpenDirectIo(target.path, target.size_bytes, target.fd.get());
  if (!device_io) return device_io.error();
  io.device = std::move(*device_io);
  if (Status armed = io.Arm(); !armed) return armed.error();
  // Resuming from a copy of the journal, or after the registry was lost: register it again so
  // that nothing else touches the disk until the move is over.
  const std::string absolute = AbsolutePath(journal_path);
  if (Status registered =
          RegisterJournal({absolute, journal->header().uuid, journal->header().device});
      !registered) {
    return registered.error();
  }
  Result<MoveJournal> running = MoveJournal::Load(io.journal_io(), kHasher);
  if (!running) return running.error();
  Result<MoveOutcome> outcome = DriveJournal(io.device_io(), *running, mode, io.Hooks(hooks));
  if (!outcome) return outcome;
  if (outcome->status != MoveStatus::kStopped) Finish(absolute, running->header().uuid, *outcome);
  return outcome;
}

uint64_t JournalFileBytes(const MoveRequest& request) {
  std::vector<TableUpdateInfo> table;
  for (const TableUpdate& u : request.table) {
    table.push_back({u.offset_bytes, u.old_bytes.size(), 0, 0, u.in_data});
  }
  // The destination outside the source, which the journal keeps for a rollback.
  for (const ByteExtent& r : DestinationOutsideSource(request.move)) {
    table.push_back({r.offset_bytes, r.length_bytes, 0, 0, false, true});
  }
  return ComputeJournalLayout(request.move, table).file_bytes;
}

namespace {

// A journal read and proven against its disk: the open file, its contents, and what
// ProveJournalState found (nullopt: the disk holds the journal's state).
struct ProvenJournal {
  std::unique_ptr<FdBlockIo> file;
  MoveJournal journal;
  std::optional<std::string> found;
};

// Opens and loads the journal at `journal_path`, checks that `target` is its device, and proves
// the journal's state on it; writes nothing.
Result<ProvenJournal> ProveJournal(const Target& target, const std::string& journal_path) {
  Result<std::unique_ptr<FdBlockIo>> journal_file = OpenJournalFile(journal_path);
  if (!journal_file) return journal_file.error();
  Result<MoveJournal> journal = MoveJournal::Load(**journal_file, kHasher);
  if (!journal) return journal.error();
  Result<JournalDevice> device = DescribeMoveDevice(target);
  if (!device) return device.error();
  if (std::optional<std::string> mismatch = DeviceMismatch(journal->header().device, *device)) {
    return MakeError(*mismatch);
  }
  Result<std::unique_ptr<FdBlockIo>> device_io =
      OpenDirectIo(target.path, target.size_bytes, target.fd.get());
  if (!device_io) return device_io.error();
  Result<std::optional<std::string>> proof = ProveJournalState(**device_io, *journal);
  if (!proof) return proof.error();
  return ProvenJournal{std::move(*journal_file), std::move(*journal), std::move(*proof)};
}

}  // namespace

Result<std::optional<std::string>> CheckResumable(const Target& target,
                                                  const std::string& journal_path) {
  Result<ProvenJournal> proven = ProveJournal(target, journal_path);
  if (!proven) return proven.error();
  return std::move(proven->found);
}

Result<std::string> ForgetJournal(const Target& target, const std::string& journal_path) {
  if (Status locked = LockTarget(target); !locked) return locked.error();
  Result<ProvenJournal> proven = ProveJournal(target, journal_path);
  if (!proven) return proven.error();
  const std::optional<std::string>& proof = proven->found;
  const MoveJournal& journal = proven->journal;
  const std::optional<JournalState>& state = journal.state();
  const bool over =
      !state || state->phase == JournalPhase::kDone || state->phase == JournalPhase::kRolledBack;
  std::string found;
  if (proof) {
    found = *proof;
  } else if (over) {
    found = state ? fmt::format("the move is over (journal state: {})", ToString(state->phase))
                  : "the move never wrote the disk";
  } else {
    return MakeError(fmt::format(
        "'{}' holds the interrupted move the journal describes (state: {}): forgetting the "
        "journal would leave it half-moved for good; run 'partalign resume {}' to complete it, "
        "or add --rollback to undo it",
        target.path, ToString(state->phase), ShellQuote(journal_path)));
  }
  const std::string absolute = AbsolutePath(journal_path);
  if (Status s = UnregisterJournal(journal.header().uuid); !s) return s.error();
  proven->file.reset();
  if (Status s = RemoveJournalFile(absolute); !s) return s.error();
  return found;
}

Status UseOnlyUsedChunks(MoveRequest& request, const UsedMap& map) {
  if (map.length_bytes() != request.move.length_bytes) {
    return MakeError(fmt::format("the used map covers {} bytes, the move {}", map.length_bytes(),
                                 request.move.length_bytes));
  }
  Result<CopySet> copy =
      CopySet::FromRuns(ChunkRunsOf(map, request.move.chunk_bytes), RangeChunkCount(request.move));
  if (!copy) return copy.error();
  request.move.copy = std::move(*copy);
  request.used = SummarizeUsedMap(map);
  return {};
}

uint64_t KillPointsCounted() { return g_kill_points_counted.load(); }

}  // namespace partalign
