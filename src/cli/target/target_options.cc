// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/target/target_options.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "partalign/util/units.h"

namespace partalign {

void AddTargetOptions(CLI::App* command, TargetOptions* options, bool target_required, bool json) {
  CLI::Option* target =
      command->add_option("TARGET", options->target, "block device or image file");
  if (target_required) target->required();
  AddTargetSettings(command, options, json);
}

void AddTargetSettings(CLI::App* command, TargetOptions* options, bool json) {
  command->add_option("--assume", options->assume,
                      "override topology: a profile name and/or "
                      "log=,phys=,min-io=,opt-io=,align-offset=,size= (bytes)");
  command->add_option("--sector-size", options->sector_size,
                      "logical sector size of an image file (default 512); same as --assume log=N");
  if (json) command->add_flag("-J,--json", options->json, "print JSON");
}

Result<ProbeOptions> MakeProbeOptions(const TargetOptions& options) {
  ProbeOptions probe;
  if (!options.assume.empty()) {
    Result<TopologyOverride> parsed = ParseTopologySpec(options.assume, BuiltinProfiles());
    if (!parsed) return MakeError(fmt::format("--assume: {}", parsed.error().message));
    probe.assume = *parsed;
  }
  if (options.sector_size) {
    Result<uint64_t> size = ParseSize(*options.sector_size);
    if (!size || *size < 512 || !IsPowerOfTwo(*size) || *size > 64 * kKiB) {
      return MakeError(fmt::format(
          "--sector-size: '{}' is not a power of two between 512 and 65536", *options.sector_size));
    }
    if (probe.assume.logical_sector_size && *probe.assume.logical_sector_size != *size) {
      return MakeError("--sector-size and --assume log= disagree");
    }
    probe.assume.logical_sector_size = *size;
  }
  return probe;
}

}  // namespace partalign
