// SPDX-License-Identifier: GPL-3.0-or-later
// The real partitioners as oracles: run parted, sfdisk/fdisk, sgdisk and systemd-repart on a
// loop device under the LD_PRELOAD topology simulator (topology_shim.c), so that they see any
// physical sector / minimum I/O / optimal I/O / alignment offset, and read back what they did.
// Used by the explain oracle tests and the randomised sweep (tests/tools/explain_sweep.cc).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "partalign/tools/parted_model.h"
#include "partalign/topology/device.h"
#include "partalign/topology/topology.h"
#include "support/run_command.h"

namespace partalign::test {

/// Path of the shim built by CMake (libtopology_shim.so).
std::string TopologyShimPath();

/// The environment that makes a tool see `topology` on `device` (the logical sector size and
/// the size always come from the loop device itself).
std::map<std::string, std::string> ShimEnvironment(const std::string& device,
                                                   const Topology& topology);

/// Back to an empty disk: delete the kernel's partition nodes, zero the first and last MiB.
void WipeDevice(const std::string& device);

struct PartedResult {
  bool ran = false;     ///< parted created the partition (it printed the table)
  int64_t start = -1;   ///< partition 1 start, sectors
  int64_t logical = 0;  ///< sector sizes parted reports for the device
  int64_t physical = 0;
  std::string warning;             ///< "The resulting partition is not properly aligned ...", or ""
  int align_check_exit = -1;       ///< exit status of the trailing `align-check TYPE 1`, if asked
  std::string align_check_output;  ///< interactive `align-check TYPE 1` output, if asked
  CommandResult raw;
};

/// `parted -m -s -a MODE DEV mklabel LABEL mkpart primary START END unit s print
/// [align-check TYPE 1]`, then (when `align_check`) the interactive `align-check TYPE 1`.
PartedResult RunParted(const std::string& device, const Topology& topology, PartedMode mode,
                       LabelType label, const std::string& start, const std::string& end,
                       bool align_check);

struct SfdiskResult {
  bool ran = false;
  std::optional<uint64_t> first_lba;  ///< GPT FirstUsableLBA (sfdisk -J "firstlba")
  std::vector<uint64_t> starts;
  std::string error;
  /// fdisk -l on the result: "I/O size (minimum/optimal)" values, the alignment offset line and
  /// the partitions it says do not start on a physical sector boundary.
  uint64_t fdisk_min_io = 0;
  uint64_t fdisk_opt_io = 0;
  uint64_t fdisk_alignment_offset = 0;
  std::vector<int> not_phys_aligned;
};

/// `sfdisk DEV` with `label: LABEL` and the given partition lines (e.g. {",100M", ","}).
SfdiskResult RunSfdisk(const std::string& device, const Topology& topology, LabelType label,
                       const std::vector<std::string>& lines, bool list_with_fdisk);

struct SgdiskResult {
  bool ran = false;
  std::vector<uint64_t> starts;
  uint64_t logical = 0;
  uint64_t physical = 0;
  std::vector<std::string> verify_begin_warnings;  ///< "1@2048" per "doesn't begin" caution
  std::string error;
};

/// `sgdisk -o ARGS DEV` (e.g. {"-n", "1:0:0"}), then `sgdisk -p` and, if asked, `sgdisk -v`.
SgdiskResult RunSgdisk(const std::string& device, const Topology& topology,
                       const std::vector<std::string>& args, bool verify);

struct RepartResult {
  bool ran = false;
  std::vector<uint64_t> starts;
  std::string error;
};

/// `systemd-repart --empty=force` with definitions in `definitions_dir`: one partition of
/// `first_size` bytes (if set) and one taking the rest.
RepartResult RunRepart(const std::string& device, const Topology& topology,
                       const std::string& definitions_dir, std::optional<uint64_t> first_size);

/// True when every oracle tool is installed.
bool OracleToolsInstalled(std::string* missing);

}  // namespace partalign::test
