// SPDX-License-Identifier: GPL-3.0-or-later
// Resuming an interrupted move (resume_journal.h): what `partalign resume` and the boot runner
// (docs/at-boot.md) run.
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/advice/plan_advice.h"
#include "cli/apply/move_ui.h"
#include "cli/apply/table_write.h"
#include "cli/commands.h"
#include "cli/move/resume_journal.h"
#include "io/device/in_use.h"
#include "io/device/target.h"
#include "io/move/journal_file.h"
#include "io/move/journal_registry.h"
#include "io/move/mover.h"
#include "io/table/fdisk_table.h"
#include "partalign/move/journal_format.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// The start of what the mover refuses a disk with when it does not hold the journal's state.
constexpr std::string_view kNotTheJournalsState = "the disk no longer holds the interrupted move";

// What to do with a journal whose move the disk no longer holds.
std::string ForgetAdvice(const std::string& journal) {
  return fmt::format(
      "if the disk was restored from a copy, or the move finished by other means, forget the "
      "journal: partalign resume --forget {}",
      ShellQuote(journal));
}

// Whether `path` is a journal file (its magic, or the name apply gives journals: one being
// created has no magic yet), as opposed to a disk or an image.
bool IsJournalFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  if (path.ends_with(kJournalFileSuffix)) return true;
  std::ifstream in(path, std::ios::binary);
  std::string magic(kJournalMagic.size(), '\0');
  in.read(magic.data(), static_cast<std::streamsize>(magic.size()));
  return in && magic == kJournalMagic;
}

// "J (device D, state moving)" for a list.
std::string Line(const RegisteredJournal& j) {
  Result<JournalSummary> summary = InspectJournal(j.entry.journal_path);
  std::string state = "unreadable";
  if (summary) state = summary->state ? ToString(summary->state->phase) : "not started";
  if (!summary && j.entry.starting) state = "starting, it never wrote the disk";
  if (!summary && j.entry.device.path.empty()) {
    return fmt::format("'{}' (not registered, no journal header: {})", j.entry.journal_path,
                       summary.error().message);
  }
  return fmt::format("'{}' (disk '{}', journal state: {}{})", j.entry.journal_path,
                     j.entry.device.path, state, j.entry_path.empty() ? ", not registered" : "");
}

// A journal whose header cannot be read, of a move interrupted while starting: registered as
// "starting" (the registration comes before the file), or a file named as a journal that no
// registration names. By I8 its move never wrote the disk: resume removes the file and the
// registration, after holding the disk (a partalign starting that move holds it). nullopt when
// `journal` is not such a journal (the caller reports why it cannot be read).
std::optional<ExitCode> ClearInterruptedStart(const ResumeCommand& c, const std::string& journal,
                                              Streams io) {
  Result<std::vector<RegisteredJournal>> registered = ListRegisteredJournals();
  if (!registered) return std::nullopt;
  const std::string absolute = AbsolutePath(journal);
  const RegisteredJournal* entry = nullptr;
  for (const RegisteredJournal& j : *registered) {
    if (j.entry.journal_path == absolute) entry = &j;
  }
  std::error_code ec;
  const bool exists = std::filesystem::exists(absolute, ec);
  if (entry == nullptr ? !(exists && absolute.ends_with(kJournalFileSuffix))
                       : !entry->entry.starting) {
    return std::nullopt;
  }
  if (exists) {
    Result<bool> locked = IsJournalLocked(absolute);
    if (!locked || *locked) return std::nullopt;  // ExplainUnreadable says who holds it
  }
  const std::string device = entry == nullptr ? "" : entry->entry.device.path;
  if (!Confirm(io, c.yes,
               fmt::format("this removes the journal '{}' of a move that was interrupted while "
                           "starting; it never wrote {} (nothing is written to a disk)",
                           absolute, device.empty() ? "a disk" : "'" + device + "'"))) {
    return ExitCode::kRefused;
  }
  // The disk's flock held while the registration goes: a partalign starting that move holds it
  // (partitions the move leaves alone may stay in use: no O_EXCL).
  Result<Target> held = MakeError("not opened");
  if (!device.empty()) {
    held = OpenTarget(device);
    if (held && !RetryWhileBusy([&] { return LockExclusive(*held); })) {
      PrintError(io.err, fmt::format("'{}' is locked by another program (a move may be starting "
                                     "on it): wait for it to end, then look again",
                                     device));
      return ExitCode::kRefused;
    }
  }
  if (entry != nullptr) {
    if (Status removed = UnregisterJournal(entry->entry.uuid); !removed) {
      return Fail(io, removed.error().message);
    }
  }
  if (exists) {
    if (Status removed = RemoveJournalFile(absolute); !removed) {
      return Fail(io, removed.error().message);
    }
  }
  io.out << fmt::format(
      "Removed the journal '{}'{}: its move was interrupted while starting and "
      "never wrote {}; nothing was written.\n",
      absolute, entry != nullptr ? " and its registration" : "",
      device.empty() ? "a disk" : "'" + device + "'");
  return ExitCode::kOk;
}

// `resume` alone: every unfinished move, and how to go on with each.
ExitCode ListMoves(Streams io) {
  Result<std::vector<RegisteredJournal>> moves = ListUnfinishedMoves();
  if (!moves) return Fail(io, moves.error().message);
  if (moves->empty()) {
    io.out << "No unfinished move (registry and journals in '" << DefaultJournalDir() << "').\n";
    return ExitCode::kOk;
  }
  io.out << fmt::format("{} unfinished move(s):\n", moves->size());
  for (const RegisteredJournal& j : *moves) {
    io.out << "  " << Line(j) << "\n    partalign resume " << DeviceOptionFor(j)
           << ShellQuote(j.entry.journal_path) << "\n";
  }
  return ExitCode::kUnfinished;
}

// DEVICE: its journal, or why there is none to resume (nullopt after printing; `*code`).
// `quiet`: a disk without an unfinished move prints nothing (`*code` = kOk): the caller reads
// `path` as a journal instead.
std::optional<std::string> JournalOfDevice(Streams io, const std::string& path, ExitCode* code,
                                           bool quiet = false) {
  *code = quiet ? ExitCode::kOk : ExitCode::kFailure;
  Result<Target> target = OpenTarget(path);
  Result<JournalDevice> device =
      target ? DescribeMoveDevice(*target) : Result<JournalDevice>(target.error());
  Result<std::vector<RegisteredJournal>> moves =
      device ? FindUnfinishedJournals(*device)
             : Result<std::vector<RegisteredJournal>>(device.error());
  if (!moves) {
    if (!quiet) PrintError(io.err, moves.error().message);
    return std::nullopt;
  }
  *code = ExitCode::kFailure;
  if (moves->empty()) {
    if (quiet) {
      *code = ExitCode::kOk;
      return std::nullopt;
    }
    io.out << fmt::format("'{}' has no unfinished move.\n", path);
    *code = ExitCode::kOk;
    return std::nullopt;
  }
  if (moves->size() > 1) {
    PrintError(io.err, fmt::format("'{}' has {} unfinished moves; name the journal to resume:",
                                   path, moves->size()));
    for (const RegisteredJournal& j : *moves) PrintError(io.err, "  " + Line(j));
    return std::nullopt;
  }
  return moves->front().entry.journal_path;
}

// A journal whose header cannot be read: whether it may be removed, said only when nothing
// holds it and the registry does not know it (then its move never wrote the device: I8).
void ExplainUnreadable(Streams io, const std::string& journal) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(journal, ec)) return;
  Result<bool> locked = IsJournalLocked(journal);
  if (locked && *locked) {
    PrintError(io.err, fmt::format("'{}' is held by a running partalign (a move is being started "
                                   "or run with it): wait for it to end, then look again",
                                   journal));
    return;
  }
  Result<bool> registered = IsJournalRegistered(journal);
  if (locked && registered && !*registered) {
    PrintError(io.err,
               fmt::format("'{}' is not a registered journal and no process holds it: if it is "
                           "the journal of a move that was interrupted while starting, that move "
                           "never wrote to its device and the file can be removed",
                           journal));
  }
}

// The journal's recorded path is not its disk any more (renamed: sdb -> sdc, loop0 -> loop1):
// the command that resumes it where its identity (serial, WWN, backing file, size) is now.
void AdviseRenamedDevice(const ResumeCommand& c, const std::string& journal,
                         const JournalDevice& recorded, Streams io) {
  const std::vector<std::string> found = FindJournalDevice(recorded);
  const std::string mode = c.rollback ? "--rollback " : c.forget ? "--forget " : "";
  if (found.size() == 1) {
    PrintError(io.err, fmt::format("the journal's disk is now '{}' (the same {}): run 'partalign "
                                   "resume {}--device {} {}'",
                                   found.front(),
                                   recorded.backing_file.empty() ? "serial number and size"
                                                                 : "backing file and size",
                                   mode, ShellQuote(found.front()), ShellQuote(journal)));
    return;
  }
  PrintError(io.err,
             fmt::format("{}; if the disk has another name now, give it: 'partalign resume {}"
                         "--device DISK {}'",
                         found.empty() ? "no disk of this machine has the journal's identity"
                                       : fmt::format("{} disks have the journal's identity ({})",
                                                     found.size(), fmt::join(found, ", ")),
                         mode, ShellQuote(journal)));
}

ExitCode Forget(const ResumeCommand& c, const std::string& journal, const std::string& device,
                Streams io) {
  if (!Confirm(io, c.yes,
               fmt::format("this forgets the journal '{}' of '{}' (nothing is written to the "
                           "disk)",
                           journal, device))) {
    return ExitCode::kRefused;
  }
  Result<Target> target = RetryWhileBusy<Target>(
      [&] { return OpenTarget(device, {.write = true, .exclusive = true}); });
  if (!target) return Fail(io, target.error().message);
  Result<std::string> found = ForgetJournal(*target, journal);
  if (!found) {
    PrintError(io.err, found.error().message);
    return ExitCode::kRefused;
  }
  io.out << fmt::format("Forgot the journal '{}' ({}); nothing was written to '{}'.\n", journal,
                        *found, device);
  return ExitCode::kOk;
}

// After the move is over either way: the kernel's partitions as the table says (BLKPG).
// An image file has no kernel partitions (and no sector size of its own to read its table
// with): nothing to tell.
bool TellTheKernel(Streams io, Target& target) {
  if (target.kind != TargetKind::kBlockDevice) return true;
  Result<TableRead> table = ReadPartitionTable(
      target.path, {.sector_size = target.logical_sector_size, .probe_contents = false});
  if (!table) {
    PrintError(io.err, fmt::format("{}; the kernel was not told (run 'partx -u {}' or reboot)",
                                   table.error().message, ShellQuote(target.path)));
    return false;
  }
  return UpdateKernel(io, target, table->table);
}

}  // namespace

ExitCode RunResume(const ResumeCommand& command, Streams io) {
  if (command.what.empty()) return ListMoves(io);
  if (command.rollback && command.forget)
    return Fail(io, "--rollback and --forget exclude each other");
  std::string journal = command.what;
  // The disk named on the command line, when its journal was found through it: it is the
  // device, whatever name the journal recorded (a disk renamed since: sdb -> sdc).
  std::string named_device;
  if (!IsJournalFile(command.what)) {
    struct stat st {};
    const bool stated = ::stat(command.what.c_str(), &st) == 0;
    // A block device is a disk; a regular file is an image when a move is known for it, else
    // it is read as a journal (and said to be none).
    if (stated && (S_ISBLK(st.st_mode) || (S_ISREG(st.st_mode) && st.st_size > 0))) {
      const bool image = S_ISREG(st.st_mode);
      ExitCode code = ExitCode::kOk;
      std::optional<std::string> found = JournalOfDevice(io, command.what, &code, image);
      if (found) {
        journal = *found;
        named_device = command.what;
      } else if (!image || code != ExitCode::kOk) {
        return code;
      }
    }
  }
  Result<JournalSummary> summary = InspectJournal(journal);
  if (!summary) {
    if (std::optional<ExitCode> cleared = ClearInterruptedStart(command, journal, io)) {
      return *cleared;
    }
    PrintError(io.err, summary.error().message);
    ExplainUnreadable(io, journal);
    return ExitCode::kFailure;
  }
  const JournalHeader& header = summary->header;
  const std::string device_path = !command.device.empty() ? command.device
                                  : !named_device.empty() ? named_device
                                                          : header.device.path;
  const bool recorded_path = command.device.empty() && named_device.empty();
  Result<Target> probe = OpenTarget(device_path);
  if (!probe) {
    PrintError(io.err, probe.error().message + (recorded_path ? " (the journal's device)" : ""));
    if (recorded_path) AdviseRenamedDevice(command, journal, header.device, io);
    return ExitCode::kFailure;
  }
  Result<JournalDevice> device = DescribeMoveDevice(*probe);
  if (!device) {
    PrintError(io.err, device.error().message);
    return ExitCode::kRefused;
  }
  if (std::optional<std::string> mismatch = DeviceMismatch(header.device, *device)) {
    PrintError(io.err, "refusing to resume: " + *mismatch);
    if (recorded_path) AdviseRenamedDevice(command, journal, header.device, io);
    return ExitCode::kRefused;
  }
  probe = MakeError("closed");
  if (command.forget) return Forget(command, journal, device_path, io);

  const char* state = summary->state ? ToString(summary->state->phase) : "not started";
  const std::string copies =
      header.move.copy.all()
          ? ""
          : fmt::format(", copying the {} bytes of the used chunks ({}, {} used)",
                        CopiedBytes(header.move), header.used.source,
                        FormatSize(header.used.used_bytes));
  const std::string what =
      header.move.length_bytes == 0
          ? fmt::format("this {} the step on '{}' that {} (journal state: {})",
                        command.rollback ? "rolls back" : "completes", device_path,
                        header.step.empty() ? "writes the journal's changes" : header.step, state)
          : fmt::format(
                "this {} the move of {} bytes on '{}' from byte {} to byte {}{} (journal state: "
                "{})",
                command.rollback ? "rolls back" : "completes", header.move.length_bytes,
                device_path, header.move.source_bytes, header.move.dest_bytes, copies, state);
  // A disk that no longer holds the move is refused before the question, in one line (the mover
  // proves it again once the disk is held; an error here is left for it to report).
  if (Result<Target> reader = OpenTarget(device_path)) {
    // The registry is written before the first write: an unwritable one is refused now.
    if (Status registry = CheckRegistryPlacement(*reader, MoveWrites(header.move, header.table));
        !registry) {
      PrintError(io.err, registry.error().message + "; nothing was written");
      return ExitCode::kRefused;
    }
    Result<std::optional<std::string>> proof = CheckResumable(*reader, journal);
    if (proof && *proof) {
      PrintError(io.err, **proof);
      PrintError(io.err, ForgetAdvice(journal));
      return ExitCode::kRefused;
    }
  }
  if (!Confirm(io, command.yes, what)) return ExitCode::kRefused;

  // Held from here to the kernel's update: O_EXCL and the flock; or, while partitions the move
  // neither reads nor writes are in use, the flock and O_EXCL on the partitions it writes.
  WriteScope scope;
  scope.whole_disk = false;
  scope.bytes = MoveWrites(header.move, header.table);
  std::vector<DiskUser> staying;
  Result<Target> target =
      RetryWhileBusy<Target>([&] { return OpenForScopedWrite(device_path, scope, &staying); });
  if (!target) {
    PrintError(io.err, target.error().message);
    return ExitCode::kRefused;
  }
  for (const DiskUser& u : staying) {
    io.err << "partalign: note: " << Describe(u)
           << ": it stays in use; the move neither reads nor writes it\n";
  }
  StopOnSignal stop;
  std::optional<MoveStatus> status;
  std::ostringstream refused;
  const ExitCode code = RunMoveOn(
      io, *target, command.progress,
      [&](const Target& t, const MoverHooks& hooks) {
        Result<MoveOutcome> outcome = ResumeMove(
            t, journal, command.rollback ? ResumeMode::kRollback : ResumeMode::kComplete, hooks);
        if (!outcome && outcome.error().message.rfind(kNotTheJournalsState, 0) == 0) {
          refused << outcome.error().message;
        }
        return outcome;
      },
      header.move,
      // The table's ranges, not the destination's bytes kept for a rollback (restore_only).
      static_cast<size_t>(std::count_if(header.table.begin(), header.table.end(),
                                        [](const TableUpdateInfo& t) { return !t.restore_only; })),
      journal, &status);
  if (!refused.str().empty()) {
    PrintError(io.err, ForgetAdvice(journal));
    return ExitCode::kRefused;
  }
  // Asked to roll back a move that had completed: nothing was undone, which is not success.
  if (command.rollback && status == MoveStatus::kCompleted) return ExitCode::kFailure;
  if (status == MoveStatus::kCompleted || status == MoveStatus::kRolledBack) {
    if (!TellTheKernel(io, *target)) {
      return ExitCode::kFailure;
    }
  }
  return code;
}

}  // namespace partalign
