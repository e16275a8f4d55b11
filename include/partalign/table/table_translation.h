// SPDX-License-Identifier: GPL-3.0-or-later
// Translating a partition table written for one logical sector size into the same table for
// another: every partition keeps its byte offsets, only the unit of its LBAs changes (a disk
// moved between a 4K-translating USB bridge and a SATA port, docs/migration.md). Pure: the
// plan (new starts, sizes and usable area, or every reason why not) and the sector ranges of
// the rewrite; libfdisk writes the new table (src/io/table/fdisk_transition.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partalign/layout/partition_table.h"
#include "partalign/table/table_transition.h"
#include "partalign/util/result.h"

namespace partalign {

/// The largest sector number (and sector count) a DOS partition entry holds: 32 bits
/// (MBR and EBR entries, UEFI 2.x 5.2.1), i.e. 2 TiB with 512-byte sectors, 16 TiB with 4096.
inline constexpr uint64_t kMaxDosSectors = 0xFFFFFFFFull;

/// One partition of the table in both units.
struct TranslatedPartition {
  uint32_t number = 0;
  PartitionKind kind = PartitionKind::kPrimary;
  uint64_t old_start_sector = 0;
  uint64_t old_size_sectors = 0;
  uint64_t new_start_sector = 0;
  uint64_t new_size_sectors = 0;
  uint64_t start_bytes = 0;
  uint64_t size_bytes = 0;
  bool operator==(const TranslatedPartition&) const = default;
};

struct TableTranslation {
  LabelType label = LabelType::kNone;
  uint64_t from_sector_size = 512;
  uint64_t to_sector_size = 512;
  uint64_t disk_size_bytes = 0;
  /// In partition-number order, a DOS extended partition included.
  std::vector<TranslatedPartition> partitions;
  /// GPT: the usable area in new sectors (FirstUsableLBA, LastUsableLBA); DOS: unset.
  std::optional<uint64_t> first_usable_lba;
  std::optional<uint64_t> last_usable_lba;
  /// Every reason the table cannot be translated, one sentence each naming the partition or
  /// area; empty when it can.
  std::vector<std::string> refusals;
  /// Facts worth saying that do not stop the translation (the last partial sector of the disk,
  /// a filesystem accepted with --accept).
  std::vector<std::string> notes;
  /// Partitions refused only for an NTFS or exFAT sector size that `--accept N` lets through.
  std::vector<uint32_t> acceptable;
  /// Partitions `accepted` let through.
  std::vector<uint32_t> accepted;

  bool ok() const { return refusals.empty(); }
};

/// Plans the translation of `table` (read with its own sector size, table.sector_size, and
/// each partition's contents probed) to `to_sector_size`-byte sectors on a disk of
/// `disk_size_bytes`. Refuses, collecting every reason: labels other than GPT and DOS; starts,
/// sizes and EBRs that are not whole new sectors; partitions past the last whole new sector or
/// (GPT) outside the usable area the new sector size leaves; DOS sector numbers beyond 32 bits;
/// filesystems that cannot be used with the new sector size (a block or sector size, as
/// libblkid reports it, below it: FAT bytes per sector, XFS sector size, ext4 1 KiB blocks), but
/// an NTFS or exFAT partition listed in `accepted` (Windows will not mount it; ntfs-3g and
/// exfat-fuse read it: a note says so).
TableTranslation PlanTranslation(const PartitionTable& table, uint64_t disk_size_bytes,
                                 uint64_t to_sector_size,
                                 const std::vector<uint32_t>& accepted = {});

/// Where the translated table differs from the plan: each partition's new start and size,
/// kind, type, UUID, name, attributes and boot flag as in `old_table`; the disk identifier;
/// the GPT usable area. One message each; empty when it is exactly the plan.
std::vector<std::string> TranslationMismatches(const TableTranslation& translation,
                                               const PartitionTable& old_table,
                                               const PartitionTable& new_table);

/// The ranges of the rewrite, in whole `to_sector_size` sectors and in write order: each area
/// of the new table (written for to_sector_size), and what is left of the old table's areas
/// (written for from_sector_size): merged into the new area it touches, or a range of its own
/// that the new table does not use. A range holds old table data when any old area overlaps it
/// (`old_index`). Bytes are left empty. Errors when an area lies outside the disk or the area
/// lists do not have the shape of `label`.
Result<TableTransition> TranslationTransition(LabelType label, uint64_t from_sector_size,
                                              uint64_t to_sector_size, uint64_t disk_size_bytes,
                                              const std::vector<TableArea>& old_areas,
                                              const std::vector<TableArea>& new_areas);

/// Changed ranges that would overwrite partition data: inside a (non-extended) partition of
/// either table, compared in bytes (the two tables count sectors in different units).
std::vector<std::string> TranslationConflicts(const TableTransition& transition,
                                              const PartitionTable& old_table,
                                              const PartitionTable& new_table);

}  // namespace partalign
