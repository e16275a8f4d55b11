// SPDX-License-Identifier: GPL-3.0-or-later
// partalign translate TARGET: rewrites a GPT or DOS table (EBR chain included) written for
// another logical sector size - a disk moved between a 4K-translating USB bridge and a SATA
// port - so that every partition keeps its byte offsets (docs/migration.md). It keeps apply's
// whole safety contract (docs/apply.md): the new table is computed by libfdisk on a scratch
// copy and shown sector by sector before anything is written (--dry-run stops there), the disk
// must be unused and is held with O_EXCL and flock, every sector written is backed up first
// (`partalign restore` puts it back), the write order keeps a readable table, the result is
// read back and compared, and the kernel is told through BLKPG.
#include <algorithm>
#include <ostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/advice/interrupted_write.h"
#include "cli/advice/plan_advice.h"
#include "cli/apply/table_write.h"
#include "cli/commands.h"
#include "cli/content/sleeping_systems.h"
#include "cli/target/target_options.h"
#include "io/device/device_probe.h"
#include "io/table/fdisk_table.h"
#include "io/table/fdisk_transition.h"
#include "io/table/table_sector_probe.h"
#include "io/table/table_write_marker.h"
#include "io/table/table_writer.h"
#include "io/util/smartcols_table.h"
#include "partalign/table/table_translation.h"
#include "partalign/topology/probe_report.h"
#include "partalign/util/units.h"
#include "partalign/util/version.h"

namespace partalign {
namespace {

// The largest sector size a DOS table is suggested to have been written for: 4Kn disks and
// the 4K-translating USB bridges (alignment-heuristics.md §1.3).
constexpr uint64_t kLargestGuessedSectorSize = 4096;

struct TranslateCommand {
  TargetOptions target;
  std::optional<std::string> from;
  /// --accept N: NTFS/exFAT partitions whose own sector size the user accepts.
  std::vector<uint32_t> accept;
  bool yes = false;
  bool dry_run = false;
  std::string backup_dir = DefaultBackupDir();
};

// The sector size the table was written for: --from-sector-size, checked against what the
// disk's bytes say, or what they say. nullopt after printing why (`*code` set).
std::optional<uint64_t> FromSectorSize(const TranslateCommand& c, const std::string& path,
                                       const DeviceInfo& device, Streams io, ExitCode* code) {
  *code = ExitCode::kFailure;
  Result<TableSectorSizeGuess> detected = DetectTableSectorSize(path, device);
  if (!detected) {
    PrintError(io.err, detected.error().message);
    return std::nullopt;
  }
  if (c.from) {
    Result<uint64_t> size = ParseSize(*c.from);
    if (!size || *size < 512 || *size > 64 * kKiB || !IsPowerOfTwo(*size)) {
      PrintError(io.err, fmt::format("--from-sector-size: '{}' is not a power of two between 512 "
                                     "and 65536",
                                     *c.from));
      return std::nullopt;
    }
    // A GPT header says where it is; a DOS table only suggests, and the user may know better.
    if (device.table.label == LabelType::kGpt && detected->sector_size &&
        *detected->sector_size != *size) {
      PrintError(io.err, fmt::format("refusing to translate '{}' as written for {}-byte sectors: "
                                     "{}; nothing was written",
                                     path, *size, detected->reason));
      *code = ExitCode::kRefused;
      return std::nullopt;
    }
    return *size;
  }
  if (!detected->sector_size) {
    PrintError(io.err,
               fmt::format(
                   "'{}': cannot tell which sector size its table was written for ({}); "
                   "give it with --from-sector-size",
                   path, detected->reason.empty() ? "no partition table found" : detected->reason));
    return std::nullopt;
  }
  return *detected->sector_size;
}

// The largest sector size up to 4096 bytes, above the disk's, at which every entry of its DOS
// table still lies inside the disk: a table that size may have been written for, for all
// the MBR says. nullopt when there is none (or the table cannot be read).
std::optional<uint64_t> LargerSectorSizeThatFits(const std::string& path,
                                                 const DeviceInfo& device) {
  const uint64_t lss = device.topology.logical_sector_size;
  Result<TableRead> read = ReadPartitionTable(path, {.sector_size = lss});
  if (!read || read->table.partitions.empty()) return std::nullopt;
  uint64_t end_lba = 0;
  for (const Partition& p : read->table.partitions) {
    // An extended partition's extent covers its logical partitions.
    if (p.kind != PartitionKind::kLogical) {
      end_lba = std::max(end_lba, p.start_sector + p.size_sectors);
    }
  }
  for (uint64_t size = kLargestGuessedSectorSize; size > lss; size /= 2) {
    if (end_lba * size <= device.topology.size_bytes) return size;
  }
  return std::nullopt;
}

void PrintPartitions(std::ostream& out, const TableTranslation& plan) {
  TextTable table({{"NR", true},
                   {"KIND"},
                   {fmt::format("START@{}", plan.from_sector_size), true},
                   {fmt::format("START@{}", plan.to_sector_size), true},
                   {fmt::format("SECTORS@{}", plan.to_sector_size), true},
                   {"OFFSET", true},
                   {"BYTES", true}});
  for (const TranslatedPartition& p : plan.partitions) {
    table.AddRow({std::to_string(p.number), std::string(ToString(p.kind)),
                  std::to_string(p.old_start_sector), std::to_string(p.new_start_sector),
                  std::to_string(p.new_size_sectors), std::to_string(p.start_bytes),
                  std::to_string(p.size_bytes)});
  }
  out << table.Render();
}

// The crash-safety sentence for a translation: the GPT argument holds across sector sizes,
// with "old" read with the old size and "new" with the new one.
std::string CrashSafetyText(const TableTransition& t, const TableTranslation& plan) {
  CrashAssessment crash = AssessCrashSafety(t);
  if (t.label == LabelType::kGpt) {
    return fmt::format(
        "GPT: the backup table is written first and the primary last, so at every instant the "
        "disk holds a valid GPT: the old one (read with {}-byte sectors) or the new one (read "
        "with {}-byte sectors)",
        plan.from_sector_size, plan.to_sector_size);
  }
  return crash.reason;
}

nlohmann::json DryRunJson(const std::string& path, const TableTranslation& plan,
                          const ComputedTransition& computed) {
  nlohmann::json partitions = nlohmann::json::array();
  for (const TranslatedPartition& p : plan.partitions) {
    partitions.push_back({{"number", p.number},
                          {"kind", ToString(p.kind)},
                          {"old_start_sector", p.old_start_sector},
                          {"old_size_sectors", p.old_size_sectors},
                          {"new_start_sector", p.new_start_sector},
                          {"new_size_sectors", p.new_size_sectors},
                          {"start_bytes", p.start_bytes},
                          {"size_bytes", p.size_bytes}});
  }
  nlohmann::json write = TransitionJson(computed.transition);
  write["crash_safety_reason"] = CrashSafetyText(computed.transition, plan);
  return {{"schema_version", kJsonSchemaVersion},
          {"partalign_version", kVersion},
          {"device", path},
          {"dry_run", true},
          {"label", ToString(plan.label)},
          {"from_sector_size", plan.from_sector_size},
          {"to_sector_size", plan.to_sector_size},
          {"table_fingerprint", computed.old_table.fingerprint},
          {"new_table_fingerprint", computed.new_table.fingerprint},
          {"first_usable_lba", plan.first_usable_lba ? nlohmann::json(*plan.first_usable_lba)
                                                     : nlohmann::json(nullptr)},
          {"last_usable_lba",
           plan.last_usable_lba ? nlohmann::json(*plan.last_usable_lba) : nlohmann::json(nullptr)},
          {"partitions", partitions},
          {"notes", plan.notes},
          {"accepted", plan.accepted},
          {"new_sfdisk_script", computed.new_script},
          {"table_write", write}};
}

ExitCode RunTranslate(const TranslateCommand& c, Streams io) {
  const std::string& path = c.target.target;
  if (c.target.json && !c.dry_run) {
    PrintError(io.err, "translate: --json needs --dry-run");
    return ExitCode::kFailure;
  }
  Result<ProbeOptions> options = MakeProbeOptions(c.target);
  if (!options) {
    PrintError(io.err, options.error().message);
    return ExitCode::kFailure;
  }
  Result<DeviceInfo> device = ProbeTarget(path, *options);
  if (!device) {
    PrintError(io.err, device.error().message + "; nothing was written");
    return ExitCode::kFailure;
  }
  const uint64_t to = device->topology.logical_sector_size;
  ExitCode code = ExitCode::kOk;
  // A move left unfinished owns the table: resume proves every table sector before it writes,
  // and a translated table would leave its journal nothing to resume or roll back.
  if (!NoUnfinishedMove(io, path, {}, &code)) return code;
  // A translate killed part-way left sectors of both tables: its backup puts the old one back,
  // and only from there is the translation the one planned (docs/migration.md, "Interrupted").
  if (std::optional<std::string> torn = InterruptedTranslateAdvice(path, *device)) {
    PrintError(io.err,
               fmt::format("refusing to translate '{}': {}; nothing was written", path, *torn));
    return ExitCode::kRefused;
  }
  std::optional<uint64_t> from = FromSectorSize(c, path, *device, io, &code);
  if (!from) return code;
  if (*from == to) {
    io.out << fmt::format(
        "The table of '{}' is written for {}-byte sectors, the disk's own: nothing to "
        "translate.\n",
        path, to);
    if (device->table.label == LabelType::kDos && !c.from) {
      if (std::optional<uint64_t> other = LargerSectorSizeThatFits(path, *device)) {
        io.out << fmt::format(
            "A DOS table does not record the sector size it was written for, and its entries "
            "fit this disk with {}-byte sectors too: if it was written for those (as behind a "
            "USB bridge), 'partalign translate --from-sector-size {} {}' translates it.\n",
            *other, *other, ShellQuote(path));
      }
    }
    return ExitCode::kOk;
  }
  Result<TableRead> old_read =
      ReadPartitionTable(path, {.sector_size = *from, .probe_contents = true});
  if (!old_read) {
    PrintError(io.err,
               fmt::format("reading the table of '{}' with {}-byte sectors: {}; nothing was "
                           "written",
                           path, *from, old_read.error().message));
    return ExitCode::kFailure;
  }
  const PartitionTable& old_table = old_read->table;
  // A hibernated system would resume into a table it cannot read (docs/used-map.md).
  if (RefuseIfSleeping(io, path, ScanForSleepingSystems(path, old_table))) {
    return ExitCode::kRefused;
  }
  TableTranslation plan = PlanTranslation(old_table, device->topology.size_bytes, to, c.accept);
  for (uint32_t n : c.accept) {
    if (std::find(plan.accepted.begin(), plan.accepted.end(), n) != plan.accepted.end()) continue;
    const Partition* p = old_table.Find(n);
    PrintError(io.err,
               fmt::format("--accept {}: {}; nothing was written", n,
                           p == nullptr ? fmt::format("'{}' has no partition {}", path, n)
                           : p->contents.fs_type == "ntfs" || p->contents.fs_type == "exfat"
                               ? fmt::format("partition {}'s {} needs no --accept: its sector size "
                                             "is not smaller than the new table's",
                                             n, p->contents.fs_type)
                               : fmt::format("partition {} ({}) is not NTFS or exFAT; --accept is "
                                             "for those only",
                                             n,
                                             p->contents.fs_type.empty() ? "no filesystem found"
                                                                         : p->contents.fs_type)));
    return ExitCode::kFailure;
  }
  if (!plan.ok()) {
    for (const std::string& r : plan.refusals) PrintError(io.err, r);
    PrintError(io.err,
               fmt::format("refusing to translate the table of '{}' from {}- to {}-byte sectors; "
                           "nothing was written",
                           path, *from, to));
    return ExitCode::kRefused;
  }
  Result<ComputedTransition> computed = ComputeTableTranslation(path, old_table, plan);
  if (!computed) {
    PrintError(io.err, computed.error().message + "; nothing was written");
    return ExitCode::kFailure;
  }
  const TableTransition& t = computed->transition;
  std::vector<std::string> wrong = TranslationMismatches(plan, old_table, computed->new_table);
  if (!wrong.empty()) {
    PrintError(io.err, "the table libfdisk made differs from the translation:");
    for (const std::string& m : wrong) PrintError(io.err, "  " + m);
    PrintError(io.err, "nothing was written");
    return ExitCode::kFailure;
  }
  std::vector<std::string> conflicts = TranslationConflicts(t, old_table, computed->new_table);
  if (!conflicts.empty()) {
    for (const std::string& m : conflicts) PrintError(io.err, m);
    PrintError(io.err, "refusing to overwrite partition contents; nothing was written");
    return ExitCode::kRefused;
  }
  if (c.target.json) {
    io.out << DryRunJson(path, plan, *computed).dump(2) << '\n';
    return ExitCode::kOk;
  }
  const std::vector<TableRange> changed = ChangedRanges(t);
  uint64_t bytes = 0;
  for (const TableRange& r : changed) bytes += r.length_bytes;
  io.out << fmt::format(
      "Translate the {} table of '{}' from {}-byte to {}-byte sectors ({}); every partition "
      "keeps its byte offsets:\n",
      ToString(plan.label), path, *from, to, old_table.fingerprint);
  PrintPartitions(io.out, plan);
  if (plan.first_usable_lba && plan.last_usable_lba) {
    io.out << fmt::format("Usable area: sectors {}-{} of {} bytes (was {}-{} of {}).\n",
                          *plan.first_usable_lba, *plan.last_usable_lba, to,
                          old_table.first_usable_lba, old_table.last_usable_lba, *from);
  }
  for (const std::string& n : plan.notes) io.out << "Note: " << n << ".\n";
  io.out << fmt::format("\nTable write: {} step(s), {} bytes, each flushed before the next:\n",
                        changed.size(), bytes);
  PrintRanges(io.out, t, /*all=*/c.dry_run);
  io.out << fmt::format("Crash safety: {}.\n", CrashSafetyText(t, plan));
  if (c.dry_run) {
    io.out << "Dry run: nothing was written.\n";
    return ExitCode::kOk;
  }
  if (!Confirm(io, fmt::format("Rewrite the table of '{}' for {}-byte sectors?", path, to),
               c.yes)) {
    return ExitCode::kRefused;
  }
  std::optional<Target> disk = AcquireForWrite(io, path, &code);
  if (!disk) return code;
  // Held now: the sectors must still be the ones the translation (and the backup) start from.
  Result<std::vector<size_t>> moved = DifferingRanges(
      disk->fd.get(), path, t.ranges, [](const TableRange& r) { return r.old_bytes; });
  if (!moved) {
    PrintError(io.err, moved.error().message + "; nothing was written");
    return ExitCode::kFailure;
  }
  if (!moved->empty()) {
    PrintError(io.err, fmt::format("the table of '{}' changed while partalign prepared the write "
                                   "({} at byte {}); nothing was written",
                                   path, AreaName(t.label, t.ranges[moved->front()]),
                                   t.ranges[moved->front()].offset_bytes));
    return ExitCode::kRefused;
  }
  TableBackup backup = MakeBackup("translate", *device, *disk, t, old_table.fingerprint,
                                  computed->new_table.fingerprint, computed->old_script,
                                  {&old_table, &computed->new_table});
  backup.table_sector_size = *from;
  std::optional<std::string> backup_path = SaveBackup(io, c.backup_dir, backup);
  if (!backup_path) return ExitCode::kFailure;
  // Marked until verified: a write cut short names its backup's restore to whoever reads the
  // disk next, wherever the backup went (--backup-dir).
  Result<std::string> marker = MarkTableWrite(*backup_path);
  if (!marker) {
    PrintError(io.err, marker.error().message + "; nothing was written");
    return ExitCode::kFailure;
  }

  if (Status s = WriteTableRanges(disk->fd.get(), path, to, changed, HooksFromEnvironment()); !s) {
    return FailedAfterWrite(io, s.error().message, *backup_path);
  }
  io.out << fmt::format("Wrote {} range(s) to '{}'.\n", changed.size(), path);

  // Verify: the bytes, then the table as libfdisk reads it with the new sector size.
  Result<std::vector<size_t>> unwritten = DifferingRanges(
      disk->fd.get(), path, changed, [](const TableRange& r) { return r.new_bytes; });
  if (!unwritten) return FailedAfterWrite(io, unwritten.error().message, *backup_path);
  if (!unwritten->empty()) {
    return FailedAfterWrite(io,
                            fmt::format("reading back '{}': the {} does not hold what was written",
                                        path, AreaName(t.label, changed[unwritten->front()])),
                            *backup_path);
  }
  Result<TableRead> after = ReadPartitionTable(path, {.sector_size = to, .probe_contents = false});
  if (!after) return FailedAfterWrite(io, after.error().message, *backup_path);
  std::vector<std::string> off = TranslationMismatches(plan, old_table, after->table);
  if (after->table.fingerprint != computed->new_table.fingerprint) {
    off.push_back(fmt::format("table fingerprint {}, expected {}", after->table.fingerprint,
                              computed->new_table.fingerprint));
  }
  if (!off.empty()) {
    for (const std::string& m : off) PrintError(io.err, m);
    return FailedAfterWrite(
        io, fmt::format("the table read back from '{}' differs from the translation", path),
        *backup_path);
  }
  io.out << fmt::format(
      "Verified: '{}' holds the table for {}-byte sectors ({} partitions at the same byte "
      "offsets, {}).\n",
      path, to, after->table.partitions.size(), after->table.fingerprint);
  // This write is done, and so is any earlier one of this disk that was cut short.
  std::vector<std::string> markers = {*marker};
  for (const MarkedTableWrite& m : FindMarkedTableWrites(backup.device)) {
    markers.push_back(m.marker_path);
  }
  for (const std::string& m : markers) {
    if (Status s = UnmarkTableWrite(m); !s) PrintWarning(io.err, s.error().message);
  }
  return UpdateKernel(io, *disk, after->table) ? ExitCode::kOk : ExitCode::kFailure;
}

}  // namespace

void AddTranslateCommand(CLI::App& app, CommandRunners& runners) {
  auto command = std::make_shared<TranslateCommand>();
  CLI::App* sub = app.add_subcommand(
      "translate",
      "rewrite a table written for another logical sector size (a disk moved between a 4K USB "
      "bridge and SATA), every partition at the same byte offsets");
  AddTargetOptions(sub, &command->target);
  sub->add_option("--from-sector-size", command->from,
                  "the sector size the table was written for (default: what its bytes say)");
  sub->add_option("--accept", command->accept,
                  "translate although the NTFS or exFAT of partition N keeps its own sector "
                  "size (Windows will not mount it; ntfs-3g and exfat-fuse read it); repeatable")
      ->delimiter(',')
      ->allow_extra_args(false)  // one value (N or N,M) each: TARGET may follow
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(CLI::PositiveNumber);
  sub->add_flag("-y,--yes", command->yes, "do not ask for confirmation");
  sub->add_flag("-n,--dry-run", command->dry_run,
                "print what would be written (sectors and bytes) and write nothing");
  sub->add_option("--backup-dir", command->backup_dir,
                  "where the table backup goes (default: " + DefaultBackupDir() + ")");
  runners[sub] = [command](Streams io) { return RunTranslate(*command, io); };
}

}  // namespace partalign
