// SPDX-License-Identifier: GPL-3.0-or-later
// partalign restore BACKUP: puts the partition-table sectors saved by apply back, byte for
// byte, on the disk they were taken from (identity checked), after showing what will change;
// --check only compares. The sectors it overwrites are backed up first, so a restore can be
// undone the same way. docs/apply.md, "Restore".
#include <sys/stat.h>

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

Result<std::vector<std::vector<uint8_t>>> ReadCurrent(const Target& disk,
                                                      const TableBackup& backup) {
  std::vector<std::vector<uint8_t>> current;
  for (const BackupRange& r : backup.ranges) {
    Result<std::vector<uint8_t>> bytes =
        ReadExactly(disk.fd.get(), disk.path, r.offset_bytes, r.length_bytes);
    if (!bytes) return bytes.error();
    current.push_back(std::move(*bytes));
  }
  return current;
}

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

// Whether the disk `reader` is the one whose table `backup` holds (`saved`), beyond the device
// identity already compared: the table on it now has the saved table's label, disk GUID or
// identifier and partition GUIDs (apply changes none of them, so the table it wrote and a write
// torn half-way match too); a disk that shows no table must hold the backup's context, the
// bytes that were around the saved ranges.
Status CheckSameDisk(const RestoreCommand& c, const std::string& path, const TableBackup& backup,
                     const PartitionTable& saved, const Target& reader) {
  const TableScan now = ScanTarget(reader.fd.get(), path, reader.size_bytes, backup.sector_size);
  auto refuse = [&](const std::string& why) {
    return MakeError(
        fmt::format("refusing to restore '{}' to '{}': the backup was taken from "
                    "another disk: {}; nothing was written",
                    c.backup_path, path, why));
  };
  // A backup of a disk without a table (before a fresh layout) has no table to compare: the
  // bytes around its ranges decide.
  if (!now.disk_id.empty() && saved.label != LabelType::kNone) {
    std::vector<std::string> other = TableIdentityMismatches(saved, now);
    if (other.empty()) return {};
    return refuse(
        fmt::format("{}{}", other.front(),
                    other.size() > 1 ? fmt::format(" (and {} more)", other.size() - 1) : ""));
  }
  if (backup.context.empty()) {
    return MakeError(fmt::format(
        "refusing to restore '{}' to '{}': the disk shows no partition table to tell whose it is, "
        "and the backup records no bytes around its ranges (format version {}); its sfdisk dump "
        "can be written with sfdisk; nothing was written",
        c.backup_path, path, backup.format_version));
  }
  std::vector<std::string> hashes = HashContext(reader.fd.get(), path, backup.context);
  for (size_t i = 0; i < backup.context.size(); ++i) {
    if (hashes[i] != backup.context[i].xxh64) {
      return refuse(
          fmt::format("{}, and its {} bytes at byte {} differ from those the backup recorded "
                      "next to its ranges",
                      saved.label == LabelType::kNone ? "the backup holds no partition table"
                                                      : "the disk shows no partition table",
                      backup.context[i].length_bytes, backup.context[i].offset_bytes));
    }
  }
  return {};
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
  Result<std::vector<std::vector<uint8_t>>> current = ReadCurrent(*reader, *backup);
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
  if (Status s = CheckSameDisk(c, path, *backup, *saved, *reader); !s) {
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
  current = ReadCurrent(*disk, *backup);
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
