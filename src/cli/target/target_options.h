// SPDX-License-Identifier: GPL-3.0-or-later
// Options every command that reads a TARGET shares: the target itself, --assume,
// --sector-size and --json.
#pragma once

#include <optional>
#include <string>

#include "cli/cli11_fwd.h"

#include "io/device/device_probe.h"
#include "partalign/util/result.h"

namespace partalign {

struct TargetOptions {
  std::string target;
  std::string assume;
  std::optional<std::string> sector_size;
  bool json = false;
};

/// Registers TARGET, --assume, --sector-size and (unless `json` is false) --json on `command`.
void AddTargetOptions(CLI::App* command, TargetOptions* options, bool target_required = true,
                      bool json = true);

/// Registers --assume, --sector-size and (unless `json` is false) --json only (for a command
/// with targets of its own).
void AddTargetSettings(CLI::App* command, TargetOptions* options, bool json = true);

/// Turns the options into ProbeOptions; errors name the option at fault.
Result<ProbeOptions> MakeProbeOptions(const TargetOptions& options);

}  // namespace partalign
