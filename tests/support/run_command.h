// SPDX-License-Identifier: GPL-3.0-or-later
// Runs a program (partalign itself or a real tool used as an oracle) and captures its exit
// status, stdout and stderr. No shell is involved: arguments are passed as they are.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace partalign::test {

struct CommandResult {
  int exit_code = -1;  ///< exit status, or 128 + signal number when killed
  std::string out;
  std::string err;
};

/// Runs argv[0] (searched in PATH) with `input` on stdin; `env` entries are added to (or
/// override) the environment.
CommandResult RunCommand(const std::vector<std::string>& argv, const std::string& input = "",
                         const std::map<std::string, std::string>& env = {});

/// RunCommand for set-up steps: throws (failing the test with the command's output) unless
/// the command exits 0.
void RunOrThrow(const std::vector<std::string>& argv, const std::string& input = "");

/// Runs the partalign binary built with the tests.
CommandResult RunPartalign(const std::vector<std::string>& args, const std::string& input = "",
                           const std::map<std::string, std::string>& env = {});

/// Runs `command`, a line partalign printed as advice ("partalign plan -o plan.json disk.img",
/// "echo '...' | sfdisk -N 2 disk.img"), as a person pastes it: through sh -c in `directory`,
/// with the partalign built with the tests first in PATH. Then the advice is tested word for
/// word.
CommandResult RunAdvice(const std::string& command, const std::string& directory,
                        const std::string& input = "");

/// For failure messages: "argv... -> exit N\nstdout...\nstderr...".
std::string Describe(const std::vector<std::string>& argv, const CommandResult& result);

}  // namespace partalign::test
