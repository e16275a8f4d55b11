// SPDX-License-Identifier: GPL-3.0-or-later
// Every reader of a partition table, asked about one disk (issue 38: "EBRs every reader
// accepts"): sfdisk, fdisk, parted, partx and partprobe (which tell the kernel through BLKPG),
// sgdisk on a GPT, and the kernel's own DOS parser. This machine's kernel parses no tables
// itself (environment.md: no CONFIG_MSDOS_PARTITION), so `losetup -P` cannot be asked: the
// parser's rules (linux block/partitions/msdos.c, msdos_partition() and parse_extended()) are
// modelled here from its source and applied to the disk's bytes, and the partitions it would
// make must be sfdisk's and must not overlap (the kernel adds them without checking, but BLKPG,
// which partx, partprobe and partalign use, refuses an overlap).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/loop_device.h"

namespace partalign::test {

/// A partition as the kernel's DOS parser makes it: its slot (1-4 primary or extended, 5 on
/// logical) and place in 512-byte units, as sysfs shows them.
struct KernelPartition {
  int number = 0;
  uint64_t start = 0;
  uint64_t size = 0;
  bool operator==(const KernelPartition&) const = default;
};

/// What msdos_partition() makes of the disk `image` (or device) with `sector_size`-byte
/// logical sectors: the extended partition as its first max(2, sector_size / 512) units (its
/// "node"), every logical partition found by following the EBR chain. Empty when sector 0 is
/// not a DOS table (no 55 AA, a boot indicator other than 0x00/0x80, a 0xEE entry).
std::vector<KernelPartition> KernelMsdosPartitions(const std::string& image, unsigned sector_size);

/// Every disagreement and every error or warning of the readers about the table of `loop`
/// (`sector_size`-byte sectors), one line each; empty when all of them read the same table as
/// sfdisk does: sfdisk -d, fdisk -l, parted print, sgdisk -v (GPT), the kernel's DOS parser
/// (modelled), partx -a and partprobe (each run on a device cleared of partition nodes, the
/// nodes they make compared with sfdisk's table). Leaves the kernel's partitions as partx
/// added them. partx of util-linux 2.38 adds a DOS extended partition as 1 KiB, which a
/// 4096-byte-sector device refuses whatever its place (partx.c add_parts()): that one failure
/// is not counted on such a device.
std::vector<std::string> TableReaderProblems(const LoopDevice& loop, unsigned sector_size);

}  // namespace partalign::test
