// SPDX-License-Identifier: GPL-3.0-or-later
// Reading a partition table through libfdisk (read-only) into a PartitionTable value: label,
// usable area, partitions (DOS extended and logical ones included), free regions, the byte
// ranges that hold the table, their fingerprint, and what libblkid finds in each partition.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partalign/layout/partition_table.h"
#include "partalign/util/result.h"

namespace partalign {

struct ReadTableOptions {
  /// Read the table with this logical sector size instead of the device's (image files have
  /// none of their own: 512 unless set; sfdisk --sector-size / fdisk -b do the same).
  std::optional<uint64_t> sector_size;
  /// Probe each partition's contents with libblkid (filesystem, has data).
  bool probe_contents = true;
  /// Read a table inside a partition node too. Off: a partition node is refused, naming its
  /// disk (PartitionNodeRefusal): a table is read and written on the whole disk, and the
  /// partition of a disk read as a disk looks like a disk without a table.
  bool partition_node = false;
};

struct TableRead {
  PartitionTable table;
  /// What libfdisk said while reading ("The backup GPT table is corrupt, but the primary
  /// appears OK, so that will be used."), one message per entry.
  std::vector<std::string> warnings;
  /// Whether each partition's contents were probed (ReadTableOptions::probe_contents, or
  /// ProbeTableContents later). False: every partition's contents are the default, kUnscanned
  /// without a TYPE, which says nothing of what it holds.
  bool contents_probed = false;
};

/// Never writes. A target without a partition table gives label kNone and no partitions; its
/// fingerprint covers the first MiB, where a table would be written.
Result<TableRead> ReadPartitionTable(const std::string& path, const ReadTableOptions& options = {});

/// What libblkid finds in each partition of `table` (read from `path`; the extended partition
/// left out), as ReadPartitionTable with probe_contents does: for a command that reads the
/// table first and the contents only when they matter (plan: docs/audit-plan.md, "Empty is
/// proven").
Status ProbeTableContents(const std::string& path, PartitionTable* table);

/// The fingerprint of the bytes in `areas` of the open file `fd`, as ReadPartitionTable
/// computes it (apply re-computes it to detect a stale plan).
Result<std::string> FingerprintAreas(int fd, const std::string& path,
                                     const std::vector<TableArea>& areas);

}  // namespace partalign
