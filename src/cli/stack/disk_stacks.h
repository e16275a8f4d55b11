// SPDX-License-Identifier: GPL-3.0-or-later
// What audit and plan both read after the table: the storage stack inside every partition that
// holds something (and inside a whole disk without a partition table), through the walker of
// src/io/stack, plus the installed lvm2 version when a PV was found (audit compares pe_start with
// what that pvcreate chooses).
#pragma once

#include <cstdint>
#include <map>
#include <optional>

#include "cli/target/load_disk.h"
#include "partalign/layout/audit.h"
#include "partalign/stack/stack_layer.h"
#include "partalign/tools/tool_version.h"
#include "partalign/util/result.h"

namespace partalign {

struct DiskStacks {
  std::map<uint32_t, StackWalk> partitions;  ///< unchecked, by partition number
  std::optional<StackWalk> whole_disk;       ///< only when the disk has no partition table
  std::optional<ToolVersion> lvm2_version;   ///< installed (or newest known) when a PV was seen
};

/// Walks the stacks of `disk` (opened read-only again by path). Partitions libblkid found
/// nothing in are not read at all.
Result<DiskStacks> ReadDiskStacks(const LoadedDisk& disk, const std::string& path);

/// What `audit` reports about `disk` (read from `path`): refuses a --grain the topology cannot
/// take, walks the stacks and audits every partition and layer.
Result<AuditReport> AuditLoadedDisk(const LoadedDisk& disk, const std::string& path,
                                    std::optional<uint64_t> grain);

}  // namespace partalign
