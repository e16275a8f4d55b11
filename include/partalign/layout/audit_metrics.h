// SPDX-License-Identifier: GPL-3.0-or-later
// audit --format prometheus: what audit found on each disk as node_exporter textfile metrics
// (docs/output.md, "Prometheus metrics"). The `device` label is the kernel's name of the disk
// ("sda", "nvme0n1"), the label node_exporter's disk metrics carry, so the two join.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "partalign/layout/audit.h"
#include "partalign/topology/device.h"
#include "partalign/topology/topology_check.h"

namespace partalign {

/// One audited disk, as the metrics see it.
struct DiskMetrics {
  std::string device;  ///< kernel disk name ("sda"); an image file's path
  std::string table;   ///< "gpt", "dos", "none", "other"
  std::string transport;
  std::string model;
  std::string serial;
  uint64_t logical_sector_bytes = 0;
  uint64_t physical_sector_bytes = 0;
  struct Partition {
    uint32_t number = 0;
    bool misaligned = false;
  };
  std::vector<Partition> partitions;
  std::vector<std::string> topology_warnings;  ///< TopologyFinding::code
};

/// The metrics of one audited disk, labelled `device`.
DiskMetrics MakeDiskMetrics(std::string device, const AuditReport& report, const DeviceInfo& info,
                            const std::vector<TopologyFinding>& findings);

/// The textfile: HELP and TYPE once per family, every sample of a family together, label values
/// escaped. Every series is unique: a disk whose `device` came earlier and a repeated warning
/// code are left out (node_exporter would keep one of two duplicates without a word).
std::string PrometheusMetrics(const std::vector<DiskMetrics>& disks, int64_t run_unix_seconds);

}  // namespace partalign
