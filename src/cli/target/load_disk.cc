// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/target/load_disk.h"

#include <algorithm>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/advice/interrupted_write.h"
#include "io/device/device_probe.h"
#include "io/device/sysfs_identity.h"
#include "partalign/util/shell_quote.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// The smallest grain that makes sense: one sector of the smallest size any disk has.
constexpr uint64_t kMinGrainBytes = 512;
// The largest: beyond this a "grain" wastes more than it aligns (and sizes overflow sooner).
constexpr uint64_t kMaxGrainBytes = kGiB;

}  // namespace

Result<LoadedDisk> LoadDisk(const TargetOptions& options, Streams io, bool probe_contents) {
  LoadedDisk disk;
  Result<ProbeOptions> probe = MakeProbeOptions(options);
  if (!probe) return probe.error();
  disk.probe_options = *probe;
  Result<DeviceInfo> device = ProbeTarget(options.target, disk.probe_options);
  if (!device) return device.error();
  if (device->identity.is_partition) {
    Result<std::optional<PartitionNode>> node =
        PartitionNodeOf(options.target, disk.probe_options.sysfs_root);
    if (node && *node) return MakeError(PartitionNodeRefusal(**node));
  }
  disk.device = std::move(*device);
  disk.findings = CheckDevice(disk.device);
  const TableInfo& info = disk.device.table;
  const uint64_t ss = disk.device.topology.logical_sector_size;
  // A translate killed part-way leaves a table no command reads as one: the way on is its
  // backup's restore, then translate again - not what the torn table would suggest.
  const std::optional<std::string> interrupted =
      InterruptedTranslateAdvice(options.target, disk.device);
  auto torn = [&](const std::string& what) {
    return MakeError(fmt::format("'{}': {}; {}", options.target, what, *interrupted));
  };
  if (info.written_for_sector_size && *info.written_for_sector_size != ss) {
    if (interrupted) return torn("the partition table is torn");
    return MakeError(fmt::format(
        "'{}': the partition table was written for {}-byte sectors, but the disk has {}-byte "
        "sectors: every position in it would be misread (read it as it is with --sector-size "
        "{}, or rewrite it for {}-byte sectors: 'partalign translate {}')",
        options.target, *info.written_for_sector_size, ss, *info.written_for_sector_size, ss,
        ShellQuote(options.target)));
  }
  ReadTableOptions read;
  // Only when asked: a user sector size also resets libfdisk's I/O sizes (and so the first
  // LBA the planner keeps before DOS logical partitions).
  read.sector_size = disk.probe_options.assume.logical_sector_size;
  read.probe_contents = probe_contents;
  Result<TableRead> table = ReadPartitionTable(options.target, read);
  if (!table && interrupted) return torn("the partition table is torn");
  if (!table) return table.error();
  if (interrupted) PrintWarning(io.err, *interrupted);
  disk.table = std::move(*table);
  // On a table the gate found damaged (one GPT copy, a hybrid MBR) libfdisk's warnings repeat
  // the gate's findings, which audit prints and plan/apply refuse with in one line.
  // Nor on a GPT copied onto a bigger disk: the gate's note says where the backup is, and the
  // plan's step moves it (libfdisk: "The backup GPT table is not on the end of the device",
  // "GPT PMBR size mismatch ... will be corrected by write").
  const bool grown =
      std::any_of(disk.table.table.findings.begin(), disk.table.table.findings.end(),
                  [](const TableFinding& f) { return f.code == "gpt-backup-misplaced"; });
  if (WorstSeverity(disk.table.table.findings) != TableSeverity::kReadOnly) {
    for (const std::string& w : disk.table.warnings) {
      if (grown && (w.find("backup GPT table is not on the end") != std::string::npos ||
                    w.find("PMBR size mismatch") != std::string::npos)) {
        continue;
      }
      PrintWarning(io.err, "libfdisk: " + w);
    }
  }
  return disk;
}

void AddGrainOption(CLI::App* command, std::optional<std::string>* grain) {
  command->add_option("--grain", *grain,
                      "alignment grain (default 1MiB); raised to what the topology requires");
}

Result<std::optional<uint64_t>> ParseGrain(const std::optional<std::string>& grain) {
  if (!grain) return std::optional<uint64_t>();
  Result<uint64_t> size = ParseSize(*grain);
  if (!size || *size < kMinGrainBytes || *size > kMaxGrainBytes) {
    return MakeError(fmt::format("--grain: '{}' is not a size between {} and {}", *grain,
                                 FormatSize(kMinGrainBytes), FormatSize(kMaxGrainBytes)));
  }
  return std::optional<uint64_t>(*size);
}

}  // namespace partalign
