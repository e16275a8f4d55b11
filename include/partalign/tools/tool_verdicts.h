// SPDX-License-Identifier: GPL-3.0-or-later
// What parted, fdisk and gdisk say about an existing partition: the verdicts `partalign audit`
// reports beside its own criteria. A thin adapter over the explain models (parted_model.h,
// libfdisk_model.h, gdisk_model.h) at the newest version partalign knows of each tool, so that
// each upstream rule is written once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "partalign/topology/topology.h"

namespace partalign {

/// One tool's verdict on one partition.
struct ToolVerdict {
  bool ok = true;
  /// What the tool prints, on one line, without a "Warning: " prefix; empty when it says
  /// nothing.
  std::string message;
  bool operator==(const ToolVerdict&) const = default;
};

/// `parted DEV align-check opt N`: "N aligned" or "N not aligned: 63s % 2048s != 0s".
ToolVerdict PartedAlignCheckOpt(const Topology& topology, uint32_t number, uint64_t start_sector);

/// `fdisk -l`'s "Partition N does not start on physical sector boundary.".
ToolVerdict FdiskPhysicalBoundary(const Topology& topology, uint32_t number, uint64_t start_sector);

/// gdisk's verify boundary for an existing table: GdiskTestAlignment over the alignment
/// ComputeAlignment() infers from the table's starts.
uint64_t GdiskVerifyAlignment(const Topology& topology, uint64_t disk_sectors,
                              const std::vector<uint64_t>& starts);

/// `sgdisk -v`'s cautions for a start and an end, against `test_alignment` sectors.
ToolVerdict GdiskVerifyStart(const Topology& topology, uint32_t number, uint64_t start_sector,
                             uint64_t test_alignment);
ToolVerdict GdiskVerifyEnd(const Topology& topology, uint32_t number, uint64_t end_sector,
                           uint64_t test_alignment);

}  // namespace partalign
