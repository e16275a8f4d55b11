// SPDX-License-Identifier: GPL-3.0-or-later
// partalign audit TARGET... | --all: every partition against each alignment criterion, with the
// arithmetic, what parted, fdisk and gdisk say about it, and the stack inside it (LUKS, LVM2,
// MD, filesystem stripes); as text, JSON or node_exporter textfile metrics (docs/output.md).
// Exit 0: all aligned; 2: at least one partition or layer is misaligned; 1: error.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <ostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/content/sleeping_systems.h"
#include "cli/move/unfinished_move.h"
#include "cli/stack/disk_stacks.h"
#include "cli/target/load_disk.h"
#include "cli/target/target_options.h"
#include "io/boot/boot_records.h"
#include "io/device/disk_list.h"
#include "io/device/sysfs_identity.h"
#include "io/device/target.h"
#include "io/util/smartcols_table.h"
#include "io/util/text_file.h"
#include "partalign/boot/boot_disk.h"
#include "partalign/layout/audit.h"
#include "partalign/layout/audit_metrics.h"
#include "partalign/layout/audit_partition.h"
#include "partalign/topology/alignment.h"
#include "partalign/util/shell_quote.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

struct AuditCommand {
  TargetOptions target;  ///< --assume, --sector-size, --json; `target` is set per disk
  std::vector<std::string> targets;
  bool all = false;
  std::string format = "text";
  std::optional<std::string> output;
  std::optional<std::string> grain;
};

struct AuditedDisk {
  LoadedDisk disk;
  AuditReport report;
  std::string device;  ///< the kernel's name of the disk, or an image file's path
  /// The records outside the table that name a partition's place and are stale already (a
  /// disk cloned by another tool), or cannot be kept right by a move (docs/boot-records.md).
  std::vector<std::string> boot;
  /// A move left unfinished on the disk (docs/mover.md): audit leads with it and exits 4.
  std::optional<std::vector<UnfinishedMove>> unfinished;
  /// The partitions that hold a hibernated system (docs/used-map.md): every write refuses.
  SleepScan sleeping;
  /// A partition node given as the target: the one partition audited in its disk's table.
  std::optional<PartitionNode> partition_node;
};

// A partition node: its disk is read and only the partition that starts where the node does
// is kept. The DOS extended partition (a container of the logical ones, without data of its
// own) and a node no partition of the table matches are errors naming the disk.
Result<AuditReport> KeepNodePartition(AuditReport report, const PartitionNode& node,
                                      const PartitionTable& table) {
  const std::string& disk = node.disk;
  const uint64_t start = node.start_bytes;
  if (KeepOnlyPartitionAt(&report, start)) return report;
  for (const Partition& p : table.partitions) {
    if (p.kind == PartitionKind::kExtended && p.start_sector * table.sector_size == start) {
      return MakeError(fmt::format(
          "'{}' is the extended partition {} of '{}', a container of its logical partitions "
          "with no data of its own: 'partalign audit {}' audits them",
          node.path, p.number, disk, ShellQuote(disk)));
    }
  }
  return MakeError(fmt::format(
      "'{}' is partition{} of the disk '{}', but no partition of the table on '{}' starts where "
      "it does (byte {}): the kernel's partitions differ from the table; 'partalign audit {}' "
      "audits the table",
      node.path, node.number ? fmt::format(" {}", *node.number) : std::string(), disk, disk, start,
      ShellQuote(disk)));
}

Result<AuditedDisk> AuditOne(TargetOptions target, std::optional<uint64_t> grain, Streams io) {
  // A partition node is audited in its disk's table, never read as a disk without one.
  Result<std::optional<PartitionNode>> node = PartitionNodeOf(target.target);
  if (!node) return node.error();
  if (*node) target.target = (*node)->disk;
  // Opened before the disk is loaded and held to the end: a block device's page cache is emptied
  // at its last close, and the boot records and the sleeping-system scan read again the first
  // sectors of every partition that libblkid has just read (on scripts/bench-plan's
  // 128-partition loop device, 385 reads from the device one after the other otherwise).
  Result<Target> open = OpenTarget(target.target);
  Result<LoadedDisk> disk = LoadDisk(target, io);
  if (!disk) return disk.error();
  Result<AuditReport> report = AuditLoadedDisk(*disk, target.target, grain);
  if (!report) return report.error();
  if (*node) {
    report = KeepNodePartition(std::move(*report), **node, disk->table.table);
    if (!report) return report.error();
  }
  const Identity& id = disk->device.identity;
  std::string device = *node ? (*node)->path : id.is_block_device ? id.kernel_name : id.path;
  if (!open) return open.error();
  Result<BootReport> records = ScanBootRecords(open->fd.get(), target.target, open->size_bytes,
                                               BootDiskFromTable(disk->table.table), {});
  if (!records) return records.error();
  std::vector<std::string> boot = BootReportLines(*records);
  std::optional<std::vector<UnfinishedMove>> unfinished;
  if (Result<std::vector<UnfinishedMove>> moves = FindUnfinishedMoves(target.target); !moves) {
    PrintWarning(io.err, fmt::format("cannot tell whether '{}' has an unfinished data move: {}",
                                     target.target, moves.error().message));
  } else if (!moves->empty()) {
    unfinished = std::move(*moves);
  }
  SleepScan sleeping = ScanForSleepingSystems(target.target, disk->table.table);
  return AuditedDisk{std::move(*disk),      std::move(*report),  std::move(device), std::move(boot),
                     std::move(unfinished), std::move(sleeping), std::move(*node)};
}

void RenderText(const std::string& target, const AuditedDisk& audited, std::ostream& out) {
  if (audited.unfinished) {
    for (const std::string& line : UnfinishedMoveLines(target, *audited.unfinished)) {
      out << "UNFINISHED MOVE: " << line << "\n";
    }
  }
  const PartitionTable& table = audited.disk.table.table;
  const AuditReport& report = audited.report;
  const Topology& t = audited.disk.device.topology;
  const std::string of =
      audited.partition_node
          ? fmt::format(" (partition {} of '{}', in its table)",
                        audited.report.partitions.empty() ? 0 : audited.report.partitions[0].number,
                        audited.partition_node->disk)
          : "";
  out << fmt::format(
      "audit of '{}'{}: {} table, {}-byte sectors; physical sector {}, minimum/optimal I/O {}/{}, "
      "alignment offset {}{}\n",
      target, of, ToString(table.label), table.sector_size, t.physical_sector_size,
      t.minimum_io_size, t.optimal_io_size, t.alignment_offset,
      t.origin == TopologyOrigin::kAssumed ? " (assumed)" : "");
  if (!report.partitions.empty()) {
    std::vector<TextTable::Column> columns;
    for (const std::string& name : AuditColumns()) {
      bool number = name == "NR" || name == "START" || name == "END" || name == "SIZE";
      columns.push_back({name, number});
    }
    TextTable rows(columns);
    for (std::vector<std::string>& row : AuditRows(report)) rows.AddRow(std::move(row));
    out << rows.Render();
  }
  for (const std::string& line : AuditDetails(report)) out << line << '\n';
  out << AuditSummary(report) << '\n';
  for (const std::string& line : audited.boot) out << "boot record: " << line << '\n';
  for (const std::string& line : SleepingLines(audited.sleeping)) out << line << '\n';
  for (const TableFinding& f : table.findings) {
    out << (f.severity == TableSeverity::kNote ? "note: " : "warning: ") << f.message << '\n';
  }
  for (const TopologyFinding& f : audited.disk.findings) out << "warning: " << f.message << '\n';
}

// --all skips, with a note, a disk it is not allowed to open or that has no medium: on a
// fleet, a disk partalign cannot look at is not an error of the run.
bool CannotOpen(const Error& error) {
  return error.errno_value == EPERM || error.errno_value == EACCES ||
         error.errno_value == ENOMEDIUM || error.errno_value == ENXIO;
}

ExitCode RunAudit(const AuditCommand& command, Streams io) {
  Result<std::optional<uint64_t>> grain = ParseGrain(command.grain);
  if (!grain) {
    PrintError(io.err, grain.error().message);
    return ExitCode::kFailure;
  }
  std::string format = command.format;
  if (command.target.json) {
    if (format != "text" && format != "json") {
      PrintError(io.err, fmt::format("--json and --format {} disagree", format));
      return ExitCode::kFailure;
    }
    format = "json";
  }
  if (command.all == !command.targets.empty()) {
    PrintError(io.err, command.all ? "--all audits every disk: give no TARGET with it"
                                   : "give a TARGET or --all");
    return ExitCode::kFailure;
  }
  std::vector<std::string> targets = command.targets;
  if (command.all) {
    Result<std::vector<std::string>> disks = ListWholeDisks();
    if (!disks) {
      PrintError(io.err, disks.error().message);
      return ExitCode::kFailure;
    }
    targets = std::move(*disks);
  }
  bool failed = false;
  std::vector<std::pair<std::string, AuditedDisk>> audited;
  for (const std::string& target : targets) {
    TargetOptions options = command.target;
    options.target = target;
    Result<AuditedDisk> one = AuditOne(options, *grain, io);
    if (!one) {
      if (command.all && CannotOpen(one.error())) {
        io.err << "partalign: note: skipping '" << target << "': " << one.error().message << '\n';
      } else {
        PrintError(io.err, one.error().message);
        failed = true;
      }
      continue;
    }
    auto same = std::find_if(audited.begin(), audited.end(),
                             [&](const auto& a) { return a.second.device == one->device; });
    if (same != audited.end()) {
      io.err << "partalign: note: '" << target << "' is the disk '" << same->first
             << "' already audited\n";
      continue;
    }
    audited.emplace_back(target, std::move(*one));
  }
  bool misaligned = std::any_of(audited.begin(), audited.end(),
                                [](const auto& a) { return !a.second.report.all_aligned(); });
  std::ostringstream out;
  if (format == "prometheus") {
    std::vector<DiskMetrics> disks;
    for (const auto& [target, a] : audited) {
      disks.push_back(MakeDiskMetrics(a.device, a.report, a.disk.device, a.disk.findings));
    }
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    out << PrometheusMetrics(disks, std::chrono::duration_cast<std::chrono::seconds>(now).count());
  } else if (format == "json") {
    nlohmann::json documents = nlohmann::json::array();
    for (const auto& [target, a] : audited) {
      nlohmann::json doc =
          AuditJson(a.report, a.disk.device, a.disk.findings, a.disk.table.table.fingerprint);
      doc["boot_records"] = a.boot;
      if (a.partition_node) doc["partition_of"] = a.partition_node->disk;
      if (a.unfinished) doc["unfinished_moves"] = UnfinishedMovesJson(target, *a.unfinished);
      if (a.sleeping.asleep()) doc["sleeping_systems"] = SleepingJson(a.sleeping);
      documents.push_back(std::move(doc));
    }
    // One TARGET keeps the single document audit has always printed.
    const bool single = !command.all && command.targets.size() == 1;
    if (single && documents.size() == 1) {
      out << documents[0].dump(2) << '\n';
    } else if (!single) {
      out << documents.dump(2) << '\n';
    }
  } else {
    for (size_t i = 0; i < audited.size(); ++i) {
      if (i > 0) out << '\n';
      RenderText(audited[i].first, audited[i].second, out);
    }
  }
  if (command.output) {
    if (Status written = WriteFileAtomically(*command.output, out.str()); !written) {
      PrintError(io.err, written.error().message);
      return ExitCode::kFailure;
    }
  } else {
    io.out << out.str();
  }
  if (failed) return ExitCode::kFailure;
  if (std::any_of(audited.begin(), audited.end(),
                  [](const auto& a) { return a.second.unfinished.has_value(); })) {
    return ExitCode::kUnfinished;
  }
  return misaligned ? ExitCode::kMisaligned : ExitCode::kOk;
}

}  // namespace

void AddAuditCommand(CLI::App& app, CommandRunners& runners) {
  auto command = std::make_shared<AuditCommand>();
  CLI::App* sub = app.add_subcommand(
      "audit", "check every partition's alignment (exit 2 when one is misaligned)");
  sub->add_option("TARGET", command->targets, "block devices or image files");
  sub->add_flag("--all", command->all,
                "audit every whole disk in /sys/block (skipping, with a note, what cannot be "
                "opened)");
  sub->add_option("--format", command->format, "text (default), json or prometheus")
      ->check(CLI::IsMember({"text", "json", "prometheus"}));
  sub->add_option("-o,--output", command->output,
                  "write to FILE through a temporary file renamed into place (for "
                  "node_exporter's textfile collector)");
  AddTargetSettings(sub, &command->target);
  AddGrainOption(sub, &command->grain);
  runners[sub] = [command](Streams io) { return RunAudit(*command, io); };
}

}  // namespace partalign
