// SPDX-License-Identifier: GPL-3.0-or-later
// partalign restore BACKUP: puts the partition-table sectors saved by apply back, byte for
// byte, on the disk they were taken from (identity checked), after showing what will change;
// --check only compares. The sectors it overwrites are backed up first, so a restore can be
// undone the same way. docs/apply.md, "Restore".
#include <sys/stat.h>

#include <filesystem>
#include <ostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/advice/plan_advice.h"
#include "cli/apply/table_write.h"
#include "cli/commands.h"
#include "io/device/device_probe.h"
#include "io/label/table_gate.h"
#include "io/table/backup_file.h"
#include "io/table/fdisk_table.h"
#include "io/table/fdisk_write.h"
#include "io/table/table_write_marker.h"
#include "io/table/table_writer.h"
#include "io/util/smartcols_table.h"
#include "io/util/xxhash_digest.h"
#include "partalign/table/table_backup.h"

namespace partalign {
namespace {

struct RestoreCommand {
  std::string backup_path;
  TableWriteOptions write;
  bool check = false;
};

// What is on disk now where the backup has other bytes.
void PrintDifferences(std::ostream& out, const TableBackup& backup, const TableTransition& t) {
  TextTable table(
      {{"AREA"}, {"SECTOR", true}, {"SECTORS", true}, {"BYTES", true}, {"ON DISK NOW"}});
  for (const TableRange& r : t.ranges) {
    if (!r.changed()) continue;
    std::string now = "other bytes";
    for (const BackupRange& b : backup.ranges) {
      if (b.offset_bytes == r.offset_bytes &&
          b.applied_xxh64 == Xxh64Hex(r.old_bytes.data(), r.old_bytes.size())) {
        now = "what the " + backup.command + " wrote";
      }
    }
    table.AddRow({AreaName(t.label, r), std::to_string(r.offset_bytes / t.sector_size),
                  std::to_string(r.length_bytes / t.sector_size), std::to_string(r.length_bytes),
                  now});
  }
  out << table.Render();
}

// Whether every range of `backup` holds now what the backup's write put there
// (`current_xxh64`): the disk shows the table that write produced, byte for byte.
bool HoldsWhatTheWriteLeft(const TableBackup& backup,
                           const std::vector<std::string>& current_xxh64) {
  bool any = false;
  for (size_t i = 0; i < backup.ranges.size() && i < current_xxh64.size(); ++i) {
    const BackupRange& r = backup.ranges[i];
    if (r.applied_xxh64.empty()) continue;
    if (current_xxh64[i] != r.applied_xxh64) return false;
    any = true;
  }
  return any;
}

// Whether the disk `reader` is the one whose table `backup` holds (`saved`), beyond the size,
// sector size, serial, WWN and backing file already compared (docs/apply.md, "Restore"):
// - a disk with a serial or WWN is identified by it;
// - a table on it (read with the disk's sector size, and with the one the saved table is written
//   for) must have the saved or the written table's label, disk GUID or identifier and
//   partition GUIDs (apply and translate change none of them, so a write torn half-way
//   matches too);
// - a disk that shows no table (wiped, or torn where no table is left), or a DOS table whose
//   identifier is 0 (old tools write no other), must hold at the partitions' places what they
//   held (format version 3): a filesystem's signature and UUID, or the same first bytes.
// Zeroed gaps around the ranges prove nothing: every fresh disk has them.
Status CheckSameDisk(const RestoreCommand& c, const std::string& path, const TableBackup& backup,
                     const PartitionTable& saved, const Target& reader,
                     const std::vector<std::string>& current_xxh64) {
  auto refuse = [&](const std::string& why) {
    return MakeError(fmt::format("refusing to restore '{}' to '{}': {}; nothing was written",
                                 c.backup_path, path, why));
  };
  auto another = [&](const std::vector<std::string>& what, const std::string& then = "") {
    return refuse(fmt::format("the backup was taken from another disk: {}{}{}", what.front(),
                              what.size() > 1 ? fmt::format(" (and {} more)", what.size() - 1) : "",
                              then));
  };
  if (!backup.device.disk.serial.empty() || !backup.device.disk.wwn.empty()) return {};
  // Before version 3 a backup records no identity of the table its write produced (of a fresh
  // layout: the only one): a disk that holds that table byte for byte is the one it was
  // written to.
  if (backup.format_version < 3 && HoldsWhatTheWriteLeft(backup, current_xxh64)) return {};
  std::vector<BackupTableIdentity> known = backup.identity.tables;
  if (backup.format_version < 3 && saved.label != LabelType::kNone) {
    known.push_back(TableIdentityOf(saved, "saved"));
  }
  bool shown = false;
  bool weak = false;  // a DOS identifier 0: written by old tools on every disk
  std::vector<uint64_t> sizes = {backup.sector_size};
  if (backup.saved_table_sector_size() != backup.sector_size) {
    sizes.push_back(backup.saved_table_sector_size());
  }
  for (uint64_t size : sizes) {
    const TableScan now = ScanTarget(reader.fd.get(), path, reader.size_bytes, size);
    if (now.disk_id.empty()) continue;
    shown = true;
    std::vector<std::string> first;
    bool match = false;
    for (const BackupTableIdentity& id : known) {
      std::vector<std::string> m = TableIdentityMismatches(id, now);
      if (m.empty()) {
        match = true;
        break;
      }
      if (first.empty()) first = std::move(m);
    }
    if (!match) {
      if (first.empty()) {
        first.push_back(
            fmt::format("the disk holds a {} table, and the backup records none to compare it with",
                        ToString(now.label)));
      }
      return another(first);
    }
    weak = weak || (now.label == LabelType::kDos && now.disk_id == "0x00000000");
  }
  if (shown && !weak) return {};
  if (backup.format_version >= 3) {
    const ContentEvidence e =
        CompareContents(backup.identity.partitions,
                        LookAtPartitions(reader.fd.get(), path, backup.identity.partitions));
    const std::string needed = fmt::format(
        "; restore needs the backup's table on the disk, the serial or WWN it recorded, or a "
        "partition that holds what it held then (the same filesystem UUID, or the same first {} "
        "bytes) and none that holds another filesystem; if this is the disk, the sfdisk dump in "
        "the backup can be written with sfdisk",
        kPartitionHeadBytes);
    if (!e.other.empty()) return another(e.other, shown ? "" : needed);
    if (shown || e.proven()) return {};
    return refuse(fmt::format(
        "nothing shows it is the disk the backup was taken from: it shows no partition table, "
        "has no serial or WWN, and {}{}",
        backup.identity.partitions.empty()
            ? std::string("the backup records no partition")
            : fmt::format("none of the {} partition(s) the backup describes holds what it held "
                          "then",
                          backup.identity.partitions.size()),
        needed));
  }
  if (shown) return {};
  return refuse(fmt::format(
      "the disk shows no partition table to tell whose it is, and the backup (format version "
      "{}) records neither a serial or WWN nor what its partitions held (the zeroed bytes around "
      "its ranges are no proof: every fresh disk has them); if this is the disk, its sfdisk dump "
      "in the backup can be written with sfdisk",
      backup.format_version));
}

ExitCode RunRestore(const RestoreCommand& c, Streams io) {
  Result<TableBackup> backup = ReadBackupFile(c.backup_path);
  if (!backup) {
    PrintError(io.err, backup.error().message + "; nothing was written");
    return ExitCode::kFailure;
  }
  const std::string path = c.write.target.empty() ? backup->device.disk.path : c.write.target;
  Result<ProbeOptions> options = MakeProbeOptions(c.write);
  if (!options) {
    PrintError(io.err, options.error().message);
    return ExitCode::kFailure;
  }
  // An image file has no sector size of its own: unless told, it has the backup's.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
      !options->assume.logical_sector_size) {
    options->assume.logical_sector_size = backup->sector_size;
  }
  Result<DeviceInfo> device = ProbeTarget(path, *options);
  if (!device) {
    PrintError(io.err, device.error().message + "; nothing was written");
    return ExitCode::kFailure;
  }
  Result<Target> reader = OpenTarget(path);
  if (!reader) {
    PrintError(io.err, reader.error().message + "; nothing was written");
    return ExitCode::kFailure;
  }
  std::vector<std::string> other =
      BackupDeviceMismatches(backup->device, BackupDeviceOf(*device, *reader));
  if (!other.empty()) {
    PrintError(io.err, fmt::format("refusing to restore '{}' to '{}': the backup was taken from "
                                   "another disk:",
                                   c.backup_path, path));
    for (const std::string& m : other) PrintError(io.err, "  " + m);
    PrintError(io.err, "nothing was written");
    return ExitCode::kRefused;
  }
  // A move left unfinished owns the table (its old place may hold moved data, its new one not
  // yet): only its journal completes or undoes it, and a table written under it would leave
  // resume nothing it can prove.
  if (ExitCode code = ExitCode::kOk; !NoUnfinishedMove(io, path, {}, &code)) return code;
  // The backup must hold the table it names, every range where that table (or the write
  // after it) has it, and the disk must be the one whose table it is (docs/apply.md, "Restore").
  Result<PartitionTable> saved = ReadSavedTable(*backup);
  if (!saved) {
    PrintError(io.err, fmt::format("backup '{}' does not hold the table it names: {}; nothing was "
                                   "written",
                                   c.backup_path, saved.error().message));
    return ExitCode::kFailure;
  }
  Result<std::vector<std::vector<uint8_t>>> current =
      ReadBackupRangesNow(reader->fd.get(), reader->path, *backup);
  if (!current) {
    PrintError(io.err, current.error().message);
    return ExitCode::kFailure;
  }
  std::vector<std::string> current_xxh64;
  for (const std::vector<uint8_t>& bytes : *current) {
    current_xxh64.push_back(Xxh64Hex(bytes.data(), bytes.size()));
  }
  if (std::vector<std::string> bad = BackupRangeProblems(*backup, *saved, current_xxh64);
      !bad.empty()) {
    PrintError(io.err,
               fmt::format("refusing to restore '{}' to '{}': {}{}; nothing was written",
                           c.backup_path, path, bad.front(),
                           bad.size() > 1 ? fmt::format(" (and {} more)", bad.size() - 1) : ""));
    return ExitCode::kRefused;
  }
  if (Status s = CheckSameDisk(c, path, *backup, *saved, *reader, current_xxh64); !s) {
    PrintError(io.err, s.error().message);
    return ExitCode::kRefused;
  }
  Result<TableTransition> t = RestoreTransition(*backup, *current);
  if (!t) {
    PrintError(io.err, fmt::format("backup '{}': {}", c.backup_path, t.error().message));
    return ExitCode::kFailure;
  }
  std::vector<TableRange> changed = ChangedRanges(*t);
  if (changed.empty()) {
    io.out << fmt::format(
        "'{}' holds exactly the table sectors saved in '{}' ({} table {}, taken {}).\n", path,
        c.backup_path, ToString(backup->label), backup->table_fingerprint, backup->created);
    return ExitCode::kOk;
  }
  io.out << fmt::format(
      "{} range(s) of '{}' differ from the backup '{}' ({} table {}, taken {}):\n", changed.size(),
      path, c.backup_path, ToString(backup->label), backup->table_fingerprint, backup->created);
  PrintDifferences(io.out, *backup, *t);
  if (c.check) return ExitCode::kDiffers;
  if (!backup->moves.empty()) {
    // The saved table points at the places the moved data has left (or is leaving): writing it
    // back would hide that data behind stale partition entries. The journal is the way back.
    for (const BackupMove& m : backup->moves) {
      PrintError(io.err, fmt::format("the backup was taken before partition {}'s data moved from "
                                     "byte {} to byte {} (journal '{}')",
                                     m.partition, m.source_bytes, m.dest_bytes, m.journal));
    }
    // No move is unfinished (checked above): they are done, and the data is where the
    // table on the disk says it is.
    PrintError(io.err, fmt::format("refusing to restore '{}': its table would point at data that "
                                   "has moved since; the moves are finished, and 'partalign plan "
                                   "{}' says whether anything is left to align; nothing was "
                                   "written",
                                   c.backup_path, ShellQuote(path)));
    return ExitCode::kRefused;
  }
  if (c.write.dry_run) {
    io.out << "Dry run: nothing was written.\n";
    return ExitCode::kOk;
  }
  if (!Confirm(io, fmt::format("Write the saved table sectors back to '{}'?", path), c.write.yes)) {
    return ExitCode::kRefused;
  }
  reader = Error{};  // from here on, only the exclusive and locked handle touches the disk
  ExitCode code = ExitCode::kOk;
  std::optional<Target> disk = AcquireForWrite(io, path, &code);
  if (!disk) return code;
  current = ReadBackupRangesNow(disk->fd.get(), disk->path, *backup);
  if (!current) {
    PrintError(io.err, current.error().message + "; nothing was written");
    return ExitCode::kFailure;
  }
  t = RestoreTransition(*backup, *current);
  if (!t) {
    PrintError(io.err, t.error().message + "; nothing was written");
    return ExitCode::kFailure;
  }
  changed = ChangedRanges(*t);

  // The sectors about to be overwritten are saved too: a restore can be undone by restoring.
  // Only a table the gate passes is given to libfdisk for the dump.
  const uint64_t sector_size = backup->sector_size;
  // The table the backup saved may be written for another sector size (translate's).
  const uint64_t saved_sector_size = backup->saved_table_sector_size();
  Result<TableRead> now =
      ReadPartitionTable(path, {.sector_size = sector_size, .probe_contents = false});
  Result<std::string> dump =
      now ? DumpSfdiskScript(path, {.sector_size = sector_size}) : Result<std::string>(now.error());
  TableBackup undo = MakeBackup("restore", *device, *disk, *t, now ? now->table.fingerprint : "",
                                backup->table_fingerprint, dump ? *dump : "",
                                {&*saved, now ? &now->table : nullptr});
  if (!SaveBackup(io, c.write.backup_dir, undo)) return ExitCode::kFailure;

  if (Status s =
          WriteTableRanges(disk->fd.get(), path, sector_size, changed, HooksFromEnvironment());
      !s) {
    PrintError(io.err, s.error().message);
    PrintError(io.err, fmt::format("run the restore again: 'partalign restore {}'",
                                   ShellQuote(c.backup_path)));
    return ExitCode::kFailure;
  }
  Result<std::vector<size_t>> left = DifferingRanges(
      disk->fd.get(), path, changed, [](const TableRange& r) { return r.new_bytes; });
  if (!left || !left->empty()) {
    PrintError(io.err, left ? fmt::format("reading back '{}': the {} does not hold the saved bytes",
                                          path, AreaName(t->label, changed[left->front()]))
                            : left.error().message);
    return ExitCode::kFailure;
  }
  Result<TableRead> after =
      ReadPartitionTable(path, {.sector_size = saved_sector_size, .probe_contents = false});
  if (!after) {
    PrintError(io.err,
               fmt::format("the saved sectors are back, but libfdisk cannot read the table: "
                           "{}",
                           after.error().message));
    return ExitCode::kFailure;
  }
  if (after->table.fingerprint != backup->table_fingerprint) {
    PrintError(io.err, fmt::format("the saved sectors are back, but the table fingerprint is {}, "
                                   "not the backup's {}",
                                   after->table.fingerprint, backup->table_fingerprint));
    return ExitCode::kFailure;
  }
  io.out << fmt::format(
      "Restored {} range(s): '{}' holds the saved table again ({}, {} "
      "partitions).\n",
      changed.size(), path, after->table.fingerprint, after->table.partitions.size());
  // A write this backup was taken for and that was cut short is undone now: its mark goes.
  for (const MarkedTableWrite& m : FindMarkedTableWrites(BackupDeviceOf(*device, *disk))) {
    std::error_code ec;
    if (!std::filesystem::equivalent(m.backup_path, c.backup_path, ec)) continue;
    if (Status s = UnmarkTableWrite(m.marker_path); !s) PrintWarning(io.err, s.error().message);
  }
  return UpdateKernel(io, *disk, after->table) ? ExitCode::kOk : ExitCode::kFailure;
}

}  // namespace

void AddRestoreCommand(CLI::App& app, CommandRunners& runners) {
  auto command = std::make_shared<RestoreCommand>();
  CLI::App* sub = app.add_subcommand(
      "restore", "write a table backup taken by apply back to its disk, byte for byte");
  sub->add_option("BACKUP", command->backup_path, "backup file (*.partalign-backup)")->required();
  AddTableWriteOptions(sub, &command->write);
  sub->add_flag("--check", command->check,
                "compare the disk with the backup and write nothing (exit 0: identical, "
                "2: different)");
  runners[sub] = [command](Streams io) { return RunRestore(*command, io); };
}

}  // namespace partalign
