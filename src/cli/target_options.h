// Options every command that reads a TARGET shares: the target itself, --assume,
// --sector-size and --json.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "io/device/device_probe.h"
#include "partalign/util/result.h"

namespace partalign {

struct TargetOptions {
  std::string target;
  std::string assume;
  std::optional<std::string> sector_size;
  bool json = false;
};

/// Registers TARGET, --assume, --sector-size and --json on `command`.
void AddTargetOptions(CLI::App* command, TargetOptions* options, bool target_required = true);

/// Registers --assume, --sector-size and --json only (for a command with targets of its own).
void AddTargetSettings(CLI::App* command, TargetOptions* options);

/// Turns the options into ProbeOptions; errors name the option at fault.
Result<ProbeOptions> MakeProbeOptions(const TargetOptions& options);

}  // namespace partalign
