// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/apply/table_write.h"

#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <ostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/target/target_options.h"
#include "io/device/in_use.h"
#include "io/move/mover.h"
#include "io/table/blkpg.h"
#include "io/util/smartcols_table.h"
#include "io/util/xxhash_digest.h"
#include "partalign/table/kernel_partitions.h"
#include "partalign/table/plan_check.h"
#include "partalign/util/shell_quote.h"
#include "partalign/util/units.h"
#include "partalign/util/version.h"

namespace partalign {
namespace {

// Test-only environment variables (docs/apply.md, "Testing crash safety").
constexpr const char* kKillAfterSectorsEnv = "PARTALIGN_TEST_KILL_AFTER_SECTORS";
constexpr const char* kSlowWritesEnv = "PARTALIGN_TEST_SLOW_WRITES_US";
constexpr const char* kFailAfterSectorsEnv = "PARTALIGN_TEST_FAIL_AFTER_SECTORS";

// Backups of the same table within one second are named <time>, <time>-2, ...; beyond this
// many, something is looping and the error is reported.
constexpr int kMaxBackupNameSuffix = 100;

std::optional<uint64_t> EnvNumber(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value) return std::nullopt;
  Result<uint64_t> n = ParseUint(value);
  return n ? std::optional<uint64_t>(*n) : std::nullopt;
}

}  // namespace

ExitCode FailedAfterWrite(Streams io, const std::string& message, const std::string& backup) {
  PrintError(io.err, message);
  PrintError(io.err, "the old table can be put back with: partalign restore " + ShellQuote(backup));
  return ExitCode::kFailure;
}

std::string UtcTime(const char* format) {
  time_t now = ::time(nullptr);
  struct tm tm {};
  ::gmtime_r(&now, &tm);
  char buffer[64];
  size_t n = ::strftime(buffer, sizeof(buffer), format, &tm);
  return std::string(buffer, n);
}

void AddTableWriteOptions(CLI::App* command, TableWriteOptions* options) {
  command->add_option("--target", options->target,
                      "the disk to write (default: the one the file names); its identity must "
                      "match");
  command->add_option("--assume", options->assume,
                      "assume this topology, as the plan was made with (see probe --assume)");
  command->add_option("--sector-size", options->sector_size,
                      "logical sector size of an image file; same as --assume log=N");
  command->add_flag("-y,--yes", options->yes, "do not ask for confirmation");
  command->add_flag("-n,--dry-run", options->dry_run,
                    "print what would be written (sectors and bytes) and write nothing");
  command->add_option("--backup-dir", options->backup_dir,
                      "where the table backup goes (default: " + DefaultBackupDir() + ")");
}

Result<ProbeOptions> MakeProbeOptions(const TableWriteOptions& options) {
  TargetOptions target;
  target.assume = options.assume;
  target.sector_size = options.sector_size;
  return MakeProbeOptions(target);
}

bool Confirm(Streams io, const std::string& question, bool yes) {
  if (yes) return true;
  if (!::isatty(STDIN_FILENO)) {
    PrintError(io.err,
               "refusing to write without confirmation: standard input is not a terminal (use "
               "--yes); nothing was written");
    return false;
  }
  io.out.flush();
  io.err << question << " [y/N] " << std::flush;
  std::string answer;
  if (!std::getline(std::cin, answer)) answer.clear();
  if (answer == "y" || answer == "Y" || answer == "yes" || answer == "YES" || answer == "Yes") {
    return true;
  }
  PrintError(io.err, "not confirmed; nothing was written");
  return false;
}

Status CheckDirectoryFor(const std::string& dir, const std::string& what, uint64_t bytes,
                         bool create) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path at = fs::absolute(dir, ec).lexically_normal();
  if (create) {
    fs::create_directories(at, ec);
    if (ec) return ErrnoError(ec.value(), fmt::format("{} '{}' cannot be made", what, dir));
  }
  // The directory, or where it would be made.
  while (!fs::exists(at, ec) && at.has_parent_path() && at != at.parent_path()) {
    at = at.parent_path();
  }
  if (!fs::is_directory(at, ec)) {
    return MakeError(fmt::format("{} '{}': '{}' is not a directory", what, dir, at.string()));
  }
  struct statvfs fs_info {};
  if (::statvfs(at.c_str(), &fs_info) != 0) {
    return ErrnoError(errno, fmt::format("{} '{}': cannot read its file system", what, dir));
  }
  if ((fs_info.f_flag & ST_RDONLY) != 0 || ::access(at.c_str(), W_OK | X_OK) != 0) {
    return MakeError(fmt::format(
        "{} '{}' is not writable ({})", what, dir,
        (fs_info.f_flag & ST_RDONLY) != 0 ? "a read-only file system" : std::strerror(errno)));
  }
  const uint64_t free_bytes = static_cast<uint64_t>(fs_info.f_bavail) * fs_info.f_frsize;
  if (free_bytes < bytes) {
    return MakeError(fmt::format("{} '{}' has {} free, {} are needed", what, dir,
                                 FormatSize(free_bytes), FormatSize(bytes)));
  }
  return {};
}

bool NoUnfinishedMove(Streams io, const std::string& path,
                      const std::vector<std::string>& journal_dirs, ExitCode* code) {
  // A target that cannot be opened or is not a disk is the command's own error to report.
  Result<Target> target = OpenTarget(path);
  if (!target) return true;
  Result<JournalDevice> device = DescribeMoveDevice(*target);
  if (!device) return true;
  Result<std::vector<RegisteredJournal>> unfinished = FindUnfinishedJournals(*device, journal_dirs);
  if (!unfinished) {
    PrintError(io.err, unfinished.error().message + "; nothing was written");
    *code = ExitCode::kFailure;
    return false;
  }
  if (unfinished->empty()) return true;
  PrintError(io.err, UnfinishedMoveMessage(path, unfinished->front()) + "; nothing was written");
  *code = ExitCode::kUnfinished;
  return false;
}

WriteScope TableWriteScope(const PartitionTable& before, const PartitionTable& after,
                           const std::vector<TableRange>& ranges) {
  WriteScope scope;
  if (before.label != after.label || before.sector_size != after.sector_size) return scope;
  scope.whole_disk = false;
  auto find = [](const PartitionTable& t, uint32_t number) -> const Partition* {
    for (const Partition& p : t.partitions) {
      if (p.number == number) return &p;
    }
    return nullptr;
  };
  for (const PartitionTable* t : {&before, &after}) {
    for (const Partition& p : t->partitions) {
      const Partition* other = find(t == &before ? after : before, p.number);
      const bool same = other && other->start_sector == p.start_sector &&
                        other->size_sectors == p.size_sectors && other->kind == p.kind;
      if (!same && std::find(scope.partitions.begin(), scope.partitions.end(), p.number) ==
                       scope.partitions.end()) {
        scope.partitions.push_back(p.number);
      }
    }
  }
  for (const TableRange& r : ranges) {
    if (r.changed()) scope.bytes.push_back({r.offset_bytes, r.length_bytes});
  }
  return scope;
}

namespace {

// The line of SayNextBootWay, from the users already found.
void SayNextBootWayFor(Streams io, const std::vector<DiskUser>& users, const WriteScope& scope) {
  for (const DiskUser& u : users) {
    if (u.partition != 0 && Blocks(u, scope)) {
      io.err << "partalign: a partition the running system needs (its root, /boot) cannot be "
                "released while it runs: 'partalign apply --at-next-boot' stages this plan and "
                "moves it at the next boot, before anything mounts it (docs/at-boot.md)\n";
      return;
    }
  }
}

}  // namespace

bool ShowDiskUsers(Streams io, const std::string& path, const WriteScope& scope, ExitCode* code,
                   bool at_next_boot) {
  Result<std::vector<DiskUser>> users = FindDiskUsers(path);
  if (!users) {
    PrintError(io.err, users.error().message + "; nothing was written");
    *code = ExitCode::kFailure;
    return false;
  }
  bool refused = false;
  for (const DiskUser& u : *users) {
    if (at_next_boot && u.partition != 0 && Blocks(u, scope)) {
      io.out << "In use now, changed at the next boot before anything mounts it: " << Describe(u)
             << "\n";
    } else if (Blocks(u, scope)) {
      PrintError(
          io.err,
          Describe(u) + (scope.whole_disk || u.partition == 0 ? "" : ", and the plan changes it"));
      refused = true;
    } else {
      io.out << "In use, left alone: " << Describe(u)
             << " (the plan neither moves it nor writes its bytes; its kernel partition stays)\n";
    }
  }
  if (refused) {
    PrintError(
        io.err,
        fmt::format("refusing to write to '{}' while it is in use; nothing was written", path));
    if (!at_next_boot) SayNextBootWayFor(io, *users, scope);
    *code = ExitCode::kRefused;
  }
  return !refused;
}

void SayNextBootWay(Streams io, const std::string& path, const WriteScope& scope) {
  if (Result<std::vector<DiskUser>> users = FindDiskUsers(path)) {
    SayNextBootWayFor(io, *users, scope);
  }
}

void SayDryRunDone(Streams io, const TableWriteOptions& write) {
  io.out << (write.at_next_boot ? "Every check passed; nothing was written now.\n"
                                : "Dry run: nothing was written.\n");
}

std::optional<Target> AcquireForWrite(Streams io, const std::string& path, ExitCode* code,
                                      const std::vector<std::string>& journal_dirs,
                                      const WriteScope& scope) {
  std::vector<DiskUser> staying;
  Result<Target> target = OpenForScopedWrite(path, scope, &staying);
  if (!target) {
    PrintError(io.err, target.error().message + "; nothing was written");
    *code = IsBusy(target.error()) ? ExitCode::kRefused : ExitCode::kFailure;
    return std::nullopt;
  }
  for (const DiskUser& u : staying) {
    io.err << "partalign: note: " << Describe(u)
           << ": it stays in use; this write neither reads nor writes it, and its kernel "
              "partition is left as it is\n";
  }
  // A move left unfinished owns the disk until resume completes or undoes it: its journal
  // writes data and table sectors that a table written now would contradict.
  Result<JournalDevice> device = DescribeMoveDevice(*target);
  Result<std::vector<RegisteredJournal>> unfinished =
      device ? FindUnfinishedJournals(*device, journal_dirs)
             : Result<std::vector<RegisteredJournal>>(device.error());
  if (!unfinished) {
    PrintError(io.err, unfinished.error().message + "; nothing was written");
    *code = ExitCode::kFailure;
    return std::nullopt;
  }
  if (!unfinished->empty()) {
    PrintError(io.err, UnfinishedMoveMessage(path, unfinished->front()) + "; nothing was written");
    *code = ExitCode::kUnfinished;
    return std::nullopt;
  }
  *code = ExitCode::kOk;
  return std::move(*target);
}

TableWriteHooks HooksFromEnvironment() {
  TableWriteHooks hooks;
  hooks.kill_after_sectors = EnvNumber(kKillAfterSectorsEnv);
  hooks.sector_delay_us = EnvNumber(kSlowWritesEnv).value_or(0);
  hooks.fail_after_sectors = EnvNumber(kFailAfterSectorsEnv);
  return hooks;
}

BackupDevice BackupDeviceOf(const DeviceInfo& device, const Target& target) {
  BackupDevice d;
  d.disk = IdentityOf(device);
  d.disk.path = target.path;
  d.is_block_device = target.kind == TargetKind::kBlockDevice;
  d.major = target.major;
  d.minor = target.minor;
  d.kernel_name = device.identity.kernel_name;
  d.backing_file = device.identity.backing_file;
  return d;
}

Status RestoreAbandonedGaps(const DeviceInfo& device, const Target& disk,
                            const std::string& backup_dir,
                            const std::vector<TableTransition*>& chain, const PartitionTable& first,
                            const PartitionTable& last) {
  const std::vector<const TableTransition*> steps(chain.begin(), chain.end());
  const std::vector<ChainRange> abandoned = AbandonedTableRanges(steps, first, last);
  if (abandoned.empty()) return {};
  const std::vector<TableBackup> backups =
      FindDiskBackups(backup_dir, BackupDeviceOf(device, disk));
  if (backups.empty()) return {};
  for (const ChainRange& c : abandoned) {
    TableRange& range = chain[c.step]->ranges[c.range];
    Result<std::vector<uint8_t>> now =
        ReadExactly(disk.fd.get(), disk.path, range.offset_bytes, range.length_bytes);
    if (!now) return now.error();
    std::optional<std::vector<uint8_t>> before = BytesBeforeOwnTables(
        backups, range.offset_bytes, range.length_bytes, Xxh64Hex(now->data(), now->size()));
    if (before) range.new_bytes = std::move(*before);
  }
  return {};
}

TableBackup MakeBackup(const std::string& command, const DeviceInfo& device, const Target& target,
                       const TableTransition& transition, const std::string& table_fingerprint,
                       const std::string& applied_table_fingerprint, const std::string& sfdisk_dump,
                       const std::vector<const PartitionTable*>& tables) {
  TableBackup b;
  b.partalign_version = kVersion;
  b.created = UtcTime("%Y-%m-%dT%H:%M:%SZ");
  b.command = command;
  b.device = BackupDeviceOf(device, target);
  // The label of the table the saved ranges hold: the transition's, except where a fresh table
  // replaces another label or none (FreshLayoutTransition).
  b.label = transition.label;
  for (const PartitionTable* t : tables) {
    if (t && t->fingerprint == table_fingerprint) {
      b.label = t->label;
      break;
    }
  }
  b.sector_size = transition.sector_size;
  b.table_fingerprint = table_fingerprint;
  b.applied_table_fingerprint = applied_table_fingerprint;
  b.sfdisk_dump = sfdisk_dump;
  b.ranges = BackupRangesOf(transition);
  HashBackupRanges(transition, &b);
  std::vector<ByteExtent> keep_out;
  for (const PartitionTable* t : tables) {
    if (!t) continue;
    for (const ByteExtent& e : PartitionExtents(*t)) keep_out.push_back(e);
  }
  b.context = ContextPlaces(b.ranges, b.sector_size, target.size_bytes, keep_out);
  std::vector<std::string> hashes = HashContext(target.fd.get(), target.path, b.context);
  for (size_t i = 0; i < b.context.size(); ++i) b.context[i].xxh64 = hashes[i];
  // A sector that could not be read identifies nothing.
  std::erase_if(b.context, [](const BackupContext& c) { return c.xxh64.empty(); });
  // What proves the disk is this one when it shows no table: the tables' identities, and what
  // each partition holds (restore, docs/apply.md).
  const PartitionTable* saved = nullptr;
  const PartitionTable* applied = nullptr;
  for (const PartitionTable* t : tables) {
    if (!t || t->label == LabelType::kNone) continue;
    if (!saved && t->fingerprint == table_fingerprint) {
      saved = t;
    } else if (!applied && t->fingerprint == applied_table_fingerprint) {
      applied = t;
    }
  }
  if (saved) b.identity.tables.push_back(TableIdentityOf(*saved, "saved"));
  if (applied) b.identity.tables.push_back(TableIdentityOf(*applied, "applied"));
  b.identity.partitions = BackupPartitionPlaces(saved, applied);
  std::vector<PartitionSeen> seen =
      LookAtPartitions(target.fd.get(), target.path, b.identity.partitions);
  for (size_t i = 0; i < seen.size(); ++i) {
    BackupPartition& p = b.identity.partitions[i];
    p.fs_type = seen[i].fs_type;
    p.fs_uuid = seen[i].fs_uuid;
    p.fs_label = seen[i].fs_label;
    p.head_xxh64 = seen[i].head_xxh64;
  }
  return b;
}

std::optional<std::string> SaveBackup(Streams io, const std::string& dir, const TableBackup& backup,
                                      const std::string& then) {
  std::string name = backup.device.kernel_name;
  if (name.empty()) name = backup.device.disk.path.substr(backup.device.disk.path.rfind('/') + 1);
  const std::string stamp = UtcTime("%Y%m%dT%H%M%SZ");
  // Absolute, so that the printed restore command works from anywhere.
  std::error_code ec;
  std::string absolute_dir = std::filesystem::absolute(dir, ec).lexically_normal().string();
  if (ec) absolute_dir = dir;
  while (absolute_dir.size() > 1 && absolute_dir.back() == '/') absolute_dir.pop_back();
  // The same table backed up twice within a second (an apply stopped or rolled back and run
  // again at once, or the next step's) would get the same name, and a backup is never
  // overwritten: the later one takes the next free suffix.
  Result<std::string> path =
      WriteBackupFile(absolute_dir, BackupFileName(name, stamp, backup.table_fingerprint), backup);
  for (int n = 2; !path && path.error().errno_value == EEXIST && n <= kMaxBackupNameSuffix; ++n) {
    path = WriteBackupFile(
        absolute_dir,
        BackupFileName(name, fmt::format("{}-{}", stamp, n), backup.table_fingerprint), backup);
  }
  if (!path) {
    PrintError(io.err, path.error().message + "; " + then);
    return std::nullopt;
  }
  // Flushed now: the path must be visible before the first write, whatever happens next.
  io.out << fmt::format("Backup of the table sectors: {}\n", *path) << std::flush;
  return *path;
}

void PrintRanges(std::ostream& out, const TableTransition& t, bool all) {
  TextTable table({{"STEP", true},
                   {"AREA"},
                   {"SECTOR", true},
                   {"SECTORS", true},
                   {"OFFSET", true},
                   {"BYTES", true},
                   {"CHANGE"}});
  int step = 0;
  for (const TableRange& r : t.ranges) {
    bool changed = r.changed();
    if (!changed && !all) continue;
    table.AddRow({changed ? std::to_string(++step) : "-", AreaName(t.label, r),
                  std::to_string(r.offset_bytes / t.sector_size),
                  std::to_string(r.length_bytes / t.sector_size), std::to_string(r.offset_bytes),
                  std::to_string(r.length_bytes), changed ? "write" : "unchanged (backed up)"});
  }
  out << table.Render();
}

bool UpdateKernel(Streams io, Target& target, const PartitionTable& table) {
  // BLKPG cannot delete a partition that is open: the claims go first.
  target.claims.clear();
  if (target.kind != TargetKind::kBlockDevice) {
    io.out << "Image file: no kernel partitions to update.\n";
    return true;
  }
  Result<std::vector<KernelPartitionNode>> before =
      ReadKernelPartitions("/sys", target.major, target.minor);
  if (!before) {
    PrintWarning(io.err, before.error().message);
    return false;
  }
  std::vector<KernelPartition> current;
  for (const KernelPartitionNode& n : *before) current.push_back(n.partition);
  const std::vector<KernelPartition> wanted =
      KernelPartitionsFor(table, target.logical_sector_size);
  std::vector<KernelUpdate> updates = KernelUpdates(current, wanted);
  Status applied = ApplyKernelUpdates(target.fd.get(), target.path, updates);
  for (const KernelUpdate& u : updates) io.out << "Kernel (BLKPG): " << Describe(u) << '\n';
  Result<std::vector<KernelPartitionNode>> after =
      ReadKernelPartitions("/sys", target.major, target.minor);
  if (!after) {
    PrintWarning(io.err, after.error().message);
    return false;
  }
  TextTable view({{"NODE"}, {"PARTITION", true}, {"START", true}, {"SECTORS", true}});
  std::vector<KernelPartition> seen;
  for (const KernelPartitionNode& n : *after) {
    seen.push_back(n.partition);
    view.AddRow({"/dev/" + n.name, std::to_string(n.partition.number),
                 std::to_string(n.partition.start_bytes / target.logical_sector_size),
                 std::to_string(n.partition.size_bytes / target.logical_sector_size)});
  }
  io.out << fmt::format("The kernel now sees ({}-byte sectors):\n", target.logical_sector_size)
         << view.Render();
  if (!applied || seen != wanted) {
    PrintError(io.err, applied ? "the kernel's partitions differ from the table (see above)"
                               : applied.error().message);
    PrintError(io.err, fmt::format("the table on '{}' is written and verified, but the kernel "
                                   "still has other partitions; run 'partx -u {}' or reboot",
                                   target.path, ShellQuote(target.path)));
    return false;
  }
  return true;
}

}  // namespace partalign
