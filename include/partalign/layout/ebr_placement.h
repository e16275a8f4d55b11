// SPDX-License-Identifier: GPL-3.0-or-later
// Where the EBRs of a DOS table go when partalign writes it, and what the readers of the table
// need of them (docs/audit-plan.md, "DOS"). The table writer is libfdisk 2.38
// (src/io/table/fdisk_transition.cc applies an sfdisk script to a scratch copy): it rebuilds
// the whole EBR chain from the partitions' places (dos.c add_partition()), so a table it
// writes has its EBRs where this model says, whatever tool wrote the table before. The
// planner plans with the model, apply orders its steps with it (apply_steps.h), and the
// sweep checks it against the real libfdisk. Pure.
#pragma once

#include <cstdint>
#include <map>

#include "partalign/layout/partition_table.h"

namespace partalign {

/// The sectors the kernel's DOS parser (block/partitions/msdos.c, msdos_partition()) and partx
/// (disk-utils/partx.c, add_parts()) give the extended partition's own node: its first
/// max(1 KiB, one logical sector), "to leave room for LILO". A logical partition that starts
/// inside that node overlaps it, and BLKPG refuses to add the overlapping partition ("Device
/// or resource busy"), so the first logical partition must start at least this many sectors
/// after the extended partition: 2 with 512-byte sectors, 1 with 4096.
uint64_t ExtendedNodeSectors(uint64_t sector_size);

/// The first LBA libfdisk keeps before every logical partition but the first while it writes
/// `table` from a script (partitions in number order): `first_lba` (the table's
/// first_usable_lba, libfdisk's first LBA for the disk), dropped to 1 for the rest of the
/// script when a primary or the extended partition starts below it or the first logical
/// partition starts closer than it to the extended start (dos.c add_partition(): "pa->start
/// < start" calls fdisk_set_first_lba(cxt, 1)).
uint64_t EffectiveFirstLba(const PartitionTable& table, uint64_t first_lba);

/// Where libfdisk writes the EBR of each logical partition of `table` (partition number ->
/// sector): the first logical partition's at the extended partition's start (the chain's
/// head), every other one EffectiveFirstLba() sectors before its partition (dos.c:
/// "pe->offset = start - cxt->first_lba"), one sector later when that is the head's sector.
/// Empty for a table without logical partitions.
std::map<uint32_t, uint64_t> PredictEbrSectors(const PartitionTable& table, uint64_t first_lba);

/// Where the EBR of each logical partition of `table` is as the table was read (partition
/// number -> sector): its areas, in which libfdisk lists the EBRs in chain order (partition 5
/// first); for a table read without its areas, where libfdisk would put them
/// (PredictEbrSectors with the table's first usable LBA).
std::map<uint32_t, uint64_t> TableEbrSectors(const PartitionTable& table);

}  // namespace partalign
