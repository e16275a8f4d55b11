// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/topology/topology_check.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "partalign/util/units.h"

namespace partalign {

Status ValidateTopology(const Topology& t) {
  const uint64_t log = t.logical_sector_size;
  const uint64_t phys = t.physical_sector_size;
  if (!IsPowerOfTwo(log) || log < 512 || log > kMaxLogicalSectorSize) {
    return MakeError(fmt::format("logical sector size {} is not a power of two between 512 and {}",
                                 log, kMaxLogicalSectorSize));
  }
  const std::pair<const char*, uint64_t> limits[] = {{"physical sector size", phys},
                                                     {"minimum I/O size", t.minimum_io_size},
                                                     {"optimal I/O size", t.optimal_io_size},
                                                     {"alignment offset", t.alignment_offset}};
  for (const auto& [name, value] : limits) {
    if (value > kMaxQueueLimit) {
      return MakeError(fmt::format("{} {} is larger than any block device reports ({} at most)",
                                   name, value, kMaxQueueLimit));
    }
  }
  if (!IsPowerOfTwo(phys)) {
    return MakeError(fmt::format("physical sector size {} is not a power of two", phys));
  }
  if (phys < log) {
    return MakeError(fmt::format(
        "physical sector size {} is smaller than the logical sector size {}", phys, log));
  }
  // 0: not reported (libblkid returns 0 for devices that say nothing).
  if (t.minimum_io_size % log != 0) {
    return MakeError(
        fmt::format("minimum I/O size {} is not a multiple of the logical sector size {}",
                    t.minimum_io_size, log));
  }
  if (t.alignment_offset % log != 0) {
    return MakeError(
        fmt::format("alignment offset {} is not a multiple of the logical sector size {}",
                    t.alignment_offset, log));
  }
  if (t.alignment_offset != 0 && t.alignment_offset >= std::max(phys, t.minimum_io_size)) {
    return MakeError(
        fmt::format("alignment offset {} is not smaller than the physical sector size {}",
                    t.alignment_offset, phys));
  }
  if (t.size_bytes == 0) return MakeError("size 0: a disk holds at least one sector");
  if (t.size_bytes % log != 0) {
    return MakeError(
        fmt::format("size {} is not a multiple of the logical sector size {}", t.size_bytes, log));
  }
  return {};
}

std::vector<TopologyFinding> CheckTopology(const Topology& t) {
  std::vector<TopologyFinding> findings;
  auto add = [&](std::string code, std::string message) {
    findings.push_back({std::move(code), std::move(message)});
  };
  const uint64_t log = t.logical_sector_size;
  const uint64_t phys = t.physical_sector_size;
  const uint64_t min_io = t.minimum_io_size;
  const uint64_t opt_io = t.optimal_io_size;

  if (phys < log) {
    add("phys-smaller-than-log",
        fmt::format("physical sector size {} is smaller than the logical sector size {}; the "
                    "kernel would raise it to {}",
                    phys, log, log));
  }
  if (log != 512 && log != 4096) {
    add("unusual-logical-sector-size",
        fmt::format("logical sector size {} is neither 512 nor 4096; few tools are tested with it",
                    log));
  }
  if (opt_io == kBogusBridgeOptimalIo) {
    add("opt-io-bridge-0xffff",
        fmt::format("optimal I/O size {} (0xFFFF x 512) is the value broken USB-SATA bridges "
                    "report; libfdisk >= 2.37 ignores it, parted aligns to {} sectors",
                    opt_io, opt_io / log));
  }
  if (opt_io != 0 && phys != 0 && opt_io % phys != 0) {
    add("opt-io-not-multiple-of-phys",
        fmt::format("optimal I/O size {} is not a multiple of the physical sector size {}; "
                    "libfdisk ignores it and current kernels drop it",
                    opt_io, phys));
  }
  // One finding for "not a multiple": the physical size is the stronger statement.
  if (opt_io != 0 && min_io != 0 && opt_io % min_io != 0 && (phys == 0 || opt_io % phys == 0)) {
    add("opt-io-not-multiple-of-min-io",
        fmt::format("optimal I/O size {} is not a multiple of the minimum I/O size {}", opt_io,
                    min_io));
  }
  if (min_io != 0 && !IsPowerOfTwo(min_io)) {
    add("min-io-not-power-of-two",
        fmt::format("minimum I/O size {} is not a power of two; 1 MiB is not a multiple of it, so "
                    "fdisk warns about its own 1 MiB default",
                    min_io));
  }
  if (min_io != 0 && min_io < phys) {
    add("min-io-smaller-than-phys",
        fmt::format("minimum I/O size {} is smaller than the physical sector size {}", min_io,
                    phys));
  }
  if (t.alignment_offset != 0) {
    add("alignment-offset",
        fmt::format(
            "alignment offset {}: physical sectors start at LBA {}, not at LBA 0; gdisk and "
            "systemd-repart ignore it",
            t.alignment_offset, t.alignment_offset / log));
  }
  if (opt_io != 0 && opt_io != kBogusBridgeOptimalIo && opt_io % phys == 0 &&
      kDefaultGrainBytes % opt_io != 0 && opt_io % kDefaultGrainBytes != 0) {
    add("opt-io-not-mib-compatible",
        fmt::format("optimal I/O size {} and 1 MiB are not multiples of each other; parted "
                    "aligns to {} sectors, fdisk and gdisk to 1 MiB",
                    opt_io, opt_io / log));
  }
  return findings;
}

std::vector<TopologyFinding> CheckDevice(const DeviceInfo& device) {
  std::vector<TopologyFinding> findings = CheckTopology(device.topology);
  const Identity& id = device.identity;
  if (id.sysfs_alignment_offset && *id.sysfs_alignment_offset < 0) {
    findings.push_back(
        {"misaligned-stack",
         fmt::format("the kernel reports alignment_offset {} (a stacked device whose layers "
                     "cannot be aligned); libblkid shows it as 0",
                     *id.sysfs_alignment_offset)});
  }
  const TableInfo& table = device.table;
  if (table.written_for_sector_size &&
      *table.written_for_sector_size != device.topology.logical_sector_size) {
    findings.push_back(
        {"table-sector-size-mismatch",
         fmt::format("the {} partition table was written for {}-byte sectors but the device now "
                     "has {}-byte logical sectors ({}); every LBA in it is read wrongly",
                     ToString(table.label), *table.written_for_sector_size,
                     device.topology.logical_sector_size, table.written_for_reason)});
  }
  return findings;
}

}  // namespace partalign
