// partalign audit TARGET: every partition against each alignment criterion, with the
// arithmetic, what parted, fdisk and gdisk say about it, and the stack inside it (LUKS, LVM2,
// MD, filesystem stripes). Exit 0: all aligned; 2: at least one partition or layer is
// misaligned; 1: error.
#include <fmt/format.h>

#include <ostream>

#include "cli/commands.h"
#include "cli/disk_stacks.h"
#include "cli/load_disk.h"
#include "cli/target_options.h"
#include "io/util/smartcols_table.h"
#include "partalign/layout/audit.h"
#include "partalign/topology/alignment.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

struct AuditCommand {
  TargetOptions target;
  std::optional<std::string> grain;
};

ExitCode RunAudit(const AuditCommand& command, Streams io) {
  Result<std::optional<uint64_t>> grain = ParseGrain(command.grain);
  if (!grain) {
    PrintError(io.err, grain.error().message);
    return ExitCode::kFailure;
  }
  Result<LoadedDisk> disk = LoadDisk(command.target, io);
  if (!disk) {
    PrintError(io.err, disk.error().message);
    return ExitCode::kFailure;
  }
  if (Status fits = CheckGrainFits(disk->device.topology, *grain); !fits) {
    PrintError(io.err, fmt::format("'{}': {}", command.target.target, fits.error().message));
    return ExitCode::kFailure;
  }
  const PartitionTable& table = disk->table.table;
  Result<DiskStacks> stacks = ReadDiskStacks(*disk, command.target.target);
  if (!stacks) {
    PrintError(io.err, stacks.error().message);
    return ExitCode::kFailure;
  }
  AuditReport report = AuditTable(table, disk->device.topology,
                                  {.grain_bytes = *grain,
                                   .stacks = std::move(stacks->partitions),
                                   .whole_disk = std::move(stacks->whole_disk),
                                   .lvm2_version = stacks->lvm2_version});
  const ExitCode verdict = report.all_aligned() ? ExitCode::kOk : ExitCode::kMisaligned;
  if (command.target.json) {
    io.out << AuditJson(report, disk->device, disk->findings, table.fingerprint).dump(2) << '\n';
    return verdict;
  }
  const Topology& t = disk->device.topology;
  io.out << fmt::format(
      "audit of '{}': {} table, {}-byte sectors; physical sector {}, minimum/optimal I/O {}/{}, "
      "alignment offset {}{}\n",
      command.target.target, ToString(table.label), table.sector_size, t.physical_sector_size,
      t.minimum_io_size, t.optimal_io_size, t.alignment_offset,
      t.origin == TopologyOrigin::kAssumed ? " (assumed)" : "");
  if (!report.partitions.empty()) {
    std::vector<TextTable::Column> columns;
    for (const std::string& name : AuditColumns()) {
      bool number = name == "NR" || name == "START" || name == "END" || name == "SIZE";
      columns.push_back({name, number});
    }
    TextTable out(columns);
    for (std::vector<std::string>& row : AuditRows(report)) out.AddRow(std::move(row));
    io.out << out.Render();
  }
  for (const std::string& line : AuditDetails(report)) io.out << line << '\n';
  io.out << AuditSummary(report) << '\n';
  for (const TableFinding& f : table.findings) {
    io.out << (f.severity == TableSeverity::kNote ? "note: " : "warning: ") << f.message << '\n';
  }
  for (const TopologyFinding& f : disk->findings) io.out << "warning: " << f.message << '\n';
  return verdict;
}

}  // namespace

void AddAuditCommand(CLI::App& app, CommandRunners& runners) {
  auto command = std::make_shared<AuditCommand>();
  CLI::App* sub = app.add_subcommand(
      "audit", "check every partition's alignment (exit 2 when one is misaligned)");
  AddTargetOptions(sub, &command->target);
  AddGrainOption(sub, &command->grain);
  runners[sub] = [command](Streams io) { return RunAudit(*command, io); };
}

}  // namespace partalign
