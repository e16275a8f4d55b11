// SPDX-License-Identifier: GPL-3.0-or-later
// Command and option typos, found before CLI11 parses: CLI11 says "A subcommand is required" of
// `partalign plna` and lists the valid TARGET after `--outptu x.json` as "not expected". This
// walk names the word at fault and the name it was most likely meant to be.
#pragma once

#include <optional>
#include <string>

#include "cli/cli11_fwd.h"

namespace partalign {

struct UnknownName {
  /// "unknown command 'plna'; did you mean 'plan'?",
  /// "plan: unknown option '--outptu'; did you mean '--output'?"
  std::string message;
  /// The help to point at: "partalign --help" or "partalign plan --help".
  std::string help;
};

/// The first command or option of `argv` that `app` (with its subcommands registered) does not
/// know, or nullopt. Option values (after an option that takes one) and everything after "--"
/// are not names; --help and --version are left to CLI11.
std::optional<UnknownName> FindUnknownName(const CLI::App& app, int argc, const char* const* argv);

}  // namespace partalign
