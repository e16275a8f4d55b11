// SPDX-License-Identifier: GPL-3.0-or-later
// partalign verify TARGET --against SNAP: is this the disk of the snapshot, what changed since
// (topology fields and what they mean for each partitioner, the table's sector size,
// partitions and filesystems, verdicts), and what to do. Exit 0: nothing to do; 2: an action
// is needed (translate, plan); 3: not the same disk; 1: error. docs/migration.md. Never writes.
#include <ostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/migrate/verify_target.h"
#include "cli/move/unfinished_move.h"
#include "cli/target/target_options.h"
#include "partalign/migrate/verify_report.h"

namespace partalign {
namespace {

struct VerifyCommand {
  TargetOptions target;
  std::string against;
};

ExitCode RunVerify(const VerifyCommand& c, Streams io) {
  // verify's advice (translate, plan) would write the half-moved disk.
  if (RefuseIfUnfinished(io, c.target.target, c.target.json)) return ExitCode::kUnfinished;
  Result<ProbeOptions> options = MakeProbeOptions(c.target);
  if (!options) {
    PrintError(io.err, options.error().message);
    return ExitCode::kFailure;
  }
  Result<VerifyOutcome> verified = VerifyTarget(c.target.target, *options, c.against);
  if (!verified) {
    PrintError(io.err, verified.error().message);
    return ExitCode::kFailure;
  }
  const VerifyReport& report = verified->report;
  if (c.target.json) {
    io.out << VerifyJson(report, c.target.target, c.against, verified->before).dump(2) << '\n';
  } else {
    for (const std::string& line : VerifyLines(report, c.target.target, verified->before)) {
      io.out << line << '\n';
    }
  }
  if (!report.same_disk) return ExitCode::kOtherDisk;
  return report.action_needed() ? ExitCode::kActionNeeded : ExitCode::kOk;
}

}  // namespace

void AddVerifyCommand(CLI::App& app, CommandRunners& runners) {
  auto command = std::make_shared<VerifyCommand>();
  CLI::App* sub = app.add_subcommand(
      "verify",
      "compare a disk with a snapshot: same disk? what changed, what it means, what to do (exit "
      "2: an action is needed, 3: another disk)");
  AddTargetOptions(sub, &command->target);
  sub->add_option("--against", command->against, "snapshot file (partalign snapshot)")->required();
  runners[sub] = [command](Streams io) { return RunVerify(*command, io); };
}

}  // namespace partalign
