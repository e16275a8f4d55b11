// SPDX-License-Identifier: GPL-3.0-or-later
// The table of issue 38's disk as partalign reads it (for pure tests; the disk itself, byte for
// byte, is old_tool_disks.h): 2 GiB as Windows XP laid it out, cylinders of 255 x 63, every
// partition filling its cylinders: NTFS at 63, an extended partition to the last whole cylinder
// with ext4, FAT32 and swap logical partitions (each 63 sectors after its EBR), 1339 sectors
// free at the end.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "partalign/layout/partition_table.h"

namespace partalign::test {

inline constexpr uint64_t kXpCylinder = 255 * 63;

inline Partition XpPart(uint32_t number, PartitionKind kind, uint64_t start, uint64_t end,
                        const std::string& fs) {
  Partition p;
  p.number = number;
  p.kind = kind;
  p.start_sector = start;
  p.size_sectors = end - start + 1;
  if (!fs.empty()) {
    p.contents.proof = ContentProof::kSignature;
    p.contents.fs_type = fs;
    if (fs != "ntfs") p.contents.fs_size_bytes = p.size_sectors * 512;
  }
  return p;
}

inline PartitionTable XpDos(std::vector<Partition> parts) {
  PartitionTable t;
  t.label = LabelType::kDos;
  t.sector_size = 512;
  t.disk_size_sectors = 4194304;  // 2 GiB: 261 cylinders and 1339 sectors
  t.first_usable_lba = 2048;
  t.last_usable_lba = t.disk_size_sectors - 1;
  t.partitions = std::move(parts);
  return t;
}

inline PartitionTable XpDiskTable() {
  constexpr uint64_t c = kXpCylinder;
  return XpDos({XpPart(1, PartitionKind::kPrimary, 63, 16 * c - 1, "ntfs"),
                XpPart(2, PartitionKind::kExtended, 16 * c, 261 * c - 1, ""),
                XpPart(5, PartitionKind::kLogical, 16 * c + 63, 140 * c - 1, "ext4"),
                XpPart(6, PartitionKind::kLogical, 140 * c + 63, 220 * c - 1, "vfat"),
                XpPart(7, PartitionKind::kLogical, 220 * c + 63, 261 * c - 1, "swap")});
}

}  // namespace partalign::test
