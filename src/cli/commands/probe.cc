// SPDX-License-Identifier: GPL-3.0-or-later
// partalign probe TARGET: topology and identity, with the values that look wrong flagged.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <ostream>

#include "cli/commands.h"
#include "cli/content/sleeping_systems.h"
#include "cli/move/unfinished_move.h"
#include "cli/target/target_options.h"
#include "io/device/device_probe.h"
#include "io/table/fdisk_table.h"
#include "io/util/smartcols_table.h"
#include "partalign/topology/probe_report.h"
#include "partalign/topology/topology_check.h"

namespace partalign {
namespace {

struct ProbeCommand {
  TargetOptions target;
  bool list_profiles = false;
};

ExitCode ListProfiles(Streams io) {
  TextTable table({{"PROFILE"}, {"SPEC"}, {"DESCRIPTION"}});
  for (const TopologyProfile& p : BuiltinProfiles()) table.AddRow({p.name, p.spec, p.description});
  io.out << table.Render();
  return ExitCode::kOk;
}

ExitCode RunProbe(const ProbeCommand& command, Streams io) {
  if (command.list_profiles) return ListProfiles(io);
  if (command.target.target.empty()) {
    PrintError(io.err, "probe: TARGET is required");
    return ExitCode::kFailure;
  }
  Result<ProbeOptions> options = MakeProbeOptions(command.target);
  if (!options) {
    PrintError(io.err, options.error().message);
    return ExitCode::kFailure;
  }
  Result<DeviceInfo> device = ProbeTarget(command.target.target, *options);
  if (!device) {
    PrintError(io.err, device.error().message);
    return ExitCode::kFailure;
  }
  std::vector<TopologyFinding> findings = CheckDevice(*device);
  // A half-moved disk leads, and the exit status says so (4).
  const std::optional<std::vector<UnfinishedMove>> unfinished =
      CheckUnfinishedMoves(io, command.target.target, false);
  const ExitCode done = unfinished ? ExitCode::kUnfinished : ExitCode::kOk;
  // A hibernated system on the disk (docs/used-map.md): said here, refused by every write. The
  // scan asks libblkid only about the partitions whose head may hold what it looks for.
  SleepScan sleeping;
  if (Result<TableRead> table = ReadPartitionTable(
          command.target.target,
          {.sector_size = options->assume.logical_sector_size, .probe_contents = false})) {
    sleeping = ScanForSleepingSystems(command.target.target, table->table, /*typed=*/false);
  }
  if (command.target.json) {
    nlohmann::json doc = ProbeJson(*device, findings);
    if (unfinished)
      doc["unfinished_moves"] = UnfinishedMovesJson(command.target.target, *unfinished);
    if (sleeping.asleep()) doc["sleeping_systems"] = SleepingJson(sleeping);
    io.out << doc.dump(2) << '\n';
    return done;
  }
  TextTable table({{"FIELD"}, {"VALUE"}}, /*headings=*/false);
  for (const ReportField& f : ProbeFields(*device)) table.AddRow({f.name, f.value});
  io.out << table.Render();
  if (!options->assume.profile.empty()) {
    io.out << fmt::format("assumed topology: profile '{}'\n", options->assume.profile);
  }
  for (const TopologyFinding& f : findings) io.out << "warning: " << f.message << '\n';
  for (const std::string& line : SleepingLines(sleeping)) io.out << line << '\n';
  return done;
}

}  // namespace

void AddProbeCommand(CLI::App& app, CommandRunners& runners) {
  auto command = std::make_shared<ProbeCommand>();
  CLI::App* sub = app.add_subcommand("probe", "show a disk's topology and identity");
  AddTargetOptions(sub, &command->target, /*target_required=*/false);
  sub->add_flag("--list-profiles", command->list_profiles,
                "list the named topologies for --assume");
  runners[sub] = [command](Streams io) { return RunProbe(*command, io); };
}

}  // namespace partalign
