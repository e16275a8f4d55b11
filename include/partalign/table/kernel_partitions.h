// SPDX-License-Identifier: GPL-3.0-or-later
// The partitions the kernel should know for a table, and the BLKPG operations that bring the
// kernel's view there. The kernel here parses no tables (environment.md) and BLKRRPART fails
// while any partition is in use; BLKPG works partition by partition (what partx -u and
// libfdisk's fdisk_reread_changes() do). Bytes, as the BLKPG ioctl takes them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "partalign/layout/partition_table.h"

namespace partalign {

struct KernelPartition {
  uint32_t number = 0;
  uint64_t start_bytes = 0;
  uint64_t size_bytes = 0;
  bool operator==(const KernelPartition&) const = default;
};

/// The partitions the kernel's own parser would register for `table`, in number order. A DOS
/// extended partition is registered with only its first max(1 KiB, one sector - of the table,
/// or of the device when `device_sector_size` is larger), as
/// block/partitions/msdos.c does, so that nobody mistakes it for a data partition - but never
/// into its first logical partition, which BLKPG would then refuse to add as overlapping.
std::vector<KernelPartition> KernelPartitionsFor(const PartitionTable& table,
                                                 uint64_t device_sector_size = 0);

struct KernelUpdate {
  enum class Op { kDelete, kAdd };
  Op op = Op::kAdd;
  KernelPartition partition;
  bool operator==(const KernelUpdate&) const = default;
};

/// The BLKPG operations that turn the kernel's `current` partitions into `wanted`: deletions
/// first (gone or changed), then additions (new or changed), each in number order. Partitions
/// already right are left alone: deleting one that is in use would fail. A resize cannot stand
/// in for delete + add: BLKPG_RESIZE_PARTITION keeps the start.
std::vector<KernelUpdate> KernelUpdates(const std::vector<KernelPartition>& current,
                                        const std::vector<KernelPartition>& wanted);

/// "delete partition 2", "add partition 2 at byte 1048576, 10485760 bytes".
std::string Describe(const KernelUpdate& update);

}  // namespace partalign
