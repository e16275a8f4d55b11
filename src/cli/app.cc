// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/app.h"

#include <ostream>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/suggest/unknown_names.h"
#include "partalign/util/version.h"

namespace partalign {

void PrintError(std::ostream& err, const std::string& message) {
  err << "partalign: " << message << '\n';
}

void PrintWarning(std::ostream& err, const std::string& message) {
  err << "partalign: warning: " << message << '\n';
}

ExitCode Fail(Streams io, const std::string& message) {
  PrintError(io.err, message);
  return ExitCode::kFailure;
}

int RunApp(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app("partalign: understand and fix partition alignment", "partalign");
  app.set_version_flag("-V,--version", std::string("partalign ") + kVersion);
  app.require_subcommand(1);
  app.footer("For more details see partalign(8).");

  CommandRunners runners;
  // The order of --help: the pipeline as a user walks it, then the expert and demo commands.
  AddProbeCommand(app, runners);
  AddExplainCommand(app, runners);
  AddAuditCommand(app, runners);
  AddPlanCommand(app, runners);
  AddApplyCommand(app, runners);
  AddRestoreCommand(app, runners);
  AddResumeCommand(app, runners);
  AddAtBootCommand(app, runners);
  AddSnapshotCommand(app, runners);
  AddVerifyCommand(app, runners);
  AddTranslateCommand(app, runners);
  AddReportCommand(app, runners);
  AddBenchCommand(app, runners);
  AddMoveCommand(app, runners);
  AddDemoCommand(app, runners);

  // A typo is named with the name it was meant to be, before CLI11 blames another argument.
  if (std::optional<UnknownName> unknown = FindUnknownName(app, argc, argv)) {
    PrintError(err, unknown->message);
    err << "Try '" << unknown->help << "' for more information.\n";
    return static_cast<int>(ExitCode::kFailure);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    out << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::CallForVersion&) {
    out << "partalign " << kVersion << '\n';
    return 0;
  } catch (const CLI::ParseError& e) {
    // A subcommand's --help surfaces here too, as CallForHelp thrown from the subcommand.
    PrintError(err, e.what());
    err << "Try 'partalign --help' for more information.\n";
    return static_cast<int>(ExitCode::kFailure);
  }
  for (const CLI::App* sub : app.get_subcommands()) {
    auto it = runners.find(sub);
    if (it != runners.end()) return static_cast<int>(it->second(Streams{out, err}));
  }
  PrintError(err, "no command given");
  return static_cast<int>(ExitCode::kFailure);
}

}  // namespace partalign
