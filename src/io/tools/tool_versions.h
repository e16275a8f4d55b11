// SPDX-License-Identifier: GPL-3.0-or-later
// The versions of the partitioners installed on this machine: runs `parted --version`,
// `sfdisk --version`, `sgdisk --version` and `systemd-repart --version` with a short timeout
// and parses the first line (ParseVersionOutput). Never fails: a tool that is missing, hangs
// or prints something unexpected counts as not installed.
#pragma once

#include <optional>
#include <string>

#include "partalign/tools/tool_version.h"

namespace partalign {

/// Runs `command --version` with stdin and stderr on /dev/null; its stdout, or nullopt when it
/// cannot be started, times out (then it is killed) or fails.
std::optional<std::string> RunVersionCommand(const std::string& command);

/// `CommandName(tool) --version`, or nullopt.
std::optional<ToolVersion> InstalledToolVersion(Tool tool);

/// The installed version of each tool, or the newest known one where the tool is missing.
ToolVersions DetectToolVersions();

}  // namespace partalign
