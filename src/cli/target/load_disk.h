// SPDX-License-Identifier: GPL-3.0-or-later
// What audit and plan both start from: the target probed (topology with --assume applied,
// identity, findings) and its partition table read through libfdisk with the contents of
// every partition, plus the shared --grain option.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/cli11_fwd.h"

#include "cli/commands.h"
#include "cli/target/target_options.h"
#include "io/table/fdisk_table.h"
#include "partalign/topology/device.h"
#include "partalign/topology/topology_check.h"
#include "partalign/util/result.h"

namespace partalign {

struct LoadedDisk {
  ProbeOptions probe_options;
  DeviceInfo device;
  std::vector<TopologyFinding> findings;
  TableRead table;
};

/// Probes `options.target` and reads its table with the logical sector size the topology
/// has, with each partition's contents unless `probe_contents` is false (then later, when they
/// matter: ProbeTableContents). Refuses a table written for another logical sector size (it
/// would be misread). libfdisk's warnings go to `io.err`.
Result<LoadedDisk> LoadDisk(const TargetOptions& options, Streams io, bool probe_contents = true);

/// Registers --grain SIZE on `command`.
void AddGrainOption(CLI::App* command, std::optional<std::string>* grain);

/// Parses --grain: a size of at least 512 bytes (nullopt when not given).
Result<std::optional<uint64_t>> ParseGrain(const std::optional<std::string>& grain);

}  // namespace partalign
