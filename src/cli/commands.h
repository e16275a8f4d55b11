// SPDX-License-Identifier: GPL-3.0-or-later
// The commands of the partalign CLI, one file each (src/cli/command_<name>.cc). Each Add*
// function registers its subcommand and the function that runs it.
#pragma once

#include <functional>
#include <iosfwd>
#include <map>

#include "cli/cli11_fwd.h"

#include "cli/exit_code.h"

namespace partalign {

/// Output streams of a command: data on `out`, diagnostics on `err`.
struct Streams {
  std::ostream& out;
  std::ostream& err;
};

/// Runs the subcommand that was parsed.
using CommandRunners = std::map<const CLI::App*, std::function<ExitCode(Streams)>>;

void AddProbeCommand(CLI::App& app, CommandRunners& runners);
void AddDemoCommand(CLI::App& app, CommandRunners& runners);
void AddAuditCommand(CLI::App& app, CommandRunners& runners);
void AddPlanCommand(CLI::App& app, CommandRunners& runners);
void AddApplyCommand(CLI::App& app, CommandRunners& runners);
void AddRestoreCommand(CLI::App& app, CommandRunners& runners);
void AddExplainCommand(CLI::App& app, CommandRunners& runners);
void AddBenchCommand(CLI::App& app, CommandRunners& runners);
void AddMoveCommand(CLI::App& app, CommandRunners& runners);
void AddResumeCommand(CLI::App& app, CommandRunners& runners);
void AddAtBootCommand(CLI::App& app, CommandRunners& runners);
void AddSnapshotCommand(CLI::App& app, CommandRunners& runners);
void AddVerifyCommand(CLI::App& app, CommandRunners& runners);
void AddTranslateCommand(CLI::App& app, CommandRunners& runners);
void AddReportCommand(CLI::App& app, CommandRunners& runners);

/// Prints "partalign: MESSAGE" on `err`, the err(3) style every diagnostic uses.
void PrintError(std::ostream& err, const std::string& message);

/// Prints "partalign: warning: MESSAGE" on `err`.
void PrintWarning(std::ostream& err, const std::string& message);

/// Prints the error on `io.err` and returns kFailure.
ExitCode Fail(Streams io, const std::string& message);

}  // namespace partalign
