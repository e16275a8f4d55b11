// SPDX-License-Identifier: GPL-3.0-or-later
// The table backup file (format "partalign-table-backup", docs/output.md): every sector that
// holds partition-table data before a write, and every sector the write will change, with its
// offset and an xxh64 of its bytes; the device identity; the table fingerprint; an sfdisk
// dump. apply writes it (fsynced) before its first write; restore writes the sectors back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "partalign/label/table_scan.h"
#include "partalign/layout/plan.h"
#include "partalign/table/table_transition.h"
#include "partalign/topology/device.h"
#include "partalign/util/byte_extent.h"
#include "partalign/util/result.h"

namespace partalign {

inline constexpr std::string_view kBackupFormat = "partalign-table-backup";
/// Version 2 adds "context" (the bytes around the saved ranges). Version 1 files are still read:
/// their restore checks everything but the context, and refuses a disk that shows no table to
/// tell whose it is (docs/apply.md, "Restore").
inline constexpr int kBackupFormatVersion = 2;
inline constexpr int kOldestBackupFormatVersion = 1;
/// File name suffix of backups.
inline constexpr std::string_view kBackupSuffix = ".partalign-backup";

/// The disk a backup was taken from.
struct BackupDevice {
  DiskIdentity disk;
  bool is_block_device = false;
  uint32_t major = 0;  ///< block devices only; informational (numbers change across boots)
  uint32_t minor = 0;
  std::string kernel_name;
  /// Loop devices: the file behind them. A loop device with another backing file is another
  /// disk, whatever its size.
  std::string backing_file;
  bool operator==(const BackupDevice&) const = default;
};

/// One saved run of sectors: a TableRange's place and its bytes before the write.
struct BackupRange {
  TableAreaRole role = TableAreaRole::kMbr;
  uint64_t offset_bytes = 0;
  uint64_t length_bytes = 0;
  std::optional<uint32_t> old_index;  ///< as in TableRange: its place in the saved table
  std::optional<uint32_t> new_index;  ///< its place in the table the write produced
  std::vector<uint8_t> bytes;
  std::string xxh64;          ///< of `bytes` ("xxh64:" + 16 hex digits)
  std::string applied_xxh64;  ///< of the bytes the write puts there
  bool operator==(const BackupRange&) const = default;
};

/// A data move that goes with the table change a backup precedes (apply of a plan that moves
/// data): once it has run, the saved table points at places the data has left, so `restore`
/// refuses to write it back; the move's journal is the way back (docs/apply.md).
struct BackupMove {
  uint32_t partition = 0;
  uint64_t source_bytes = 0;
  uint64_t dest_bytes = 0;
  uint64_t length_bytes = 0;
  std::string journal;
  bool operator==(const BackupMove&) const = default;
};

/// Bytes next to a saved range, outside every range and every partition of the saved and the
/// written table, as they were when the backup was taken: they identify the disk when it
/// shows no table (wiped) to compare with the backup's.
struct BackupContext {
  uint64_t offset_bytes = 0;
  uint64_t length_bytes = 0;
  std::string xxh64;
  bool operator==(const BackupContext&) const = default;
};

struct TableBackup {
  std::string partalign_version;
  std::string created;  ///< UTC, ISO 8601 ("2026-11-21T10:15:00Z")
  std::string command;  ///< what took it: "apply", "restore"
  BackupDevice device;
  /// The label of the table the saved ranges hold; kNone when the disk had none (a fresh
  /// layout was applied to it: restore erases the table written, in its write order).
  LabelType label = LabelType::kNone;
  /// The disk's logical sector size: the unit of the ranges and of the restore's writes.
  uint64_t sector_size = 512;
  /// The sector size the saved table is written for, when it is not `sector_size`: a backup
  /// taken by `translate` saves a table written for the sector size the disk had before it
  /// moved (docs/migration.md). Key "table_sector_size", absent otherwise.
  std::optional<uint64_t> table_sector_size;
  /// PartitionTable::fingerprint of the saved table (read with saved_table_sector_size()); after
  /// a restore the disk has it again.
  std::string table_fingerprint;
  /// The fingerprint of the table the write was to produce.
  std::string applied_table_fingerprint;
  std::string sfdisk_dump;
  /// In the transition's write order.
  std::vector<BackupRange> ranges;
  /// The data moves of the apply this backup was taken for, in order (empty: a table-only
  /// change). Key "moves", absent in backups of table-only changes.
  std::vector<BackupMove> moves;
  /// The bytes around the ranges (format version 2; empty in version 1 files).
  std::vector<BackupContext> context;
  /// The format version the file had (kBackupFormatVersion for new backups).
  int format_version = kBackupFormatVersion;

  /// The sector size to read the saved table with.
  uint64_t saved_table_sector_size() const { return table_sector_size.value_or(sector_size); }
  bool operator==(const TableBackup&) const = default;
};

/// The ranges of `transition` as backup ranges (old bytes saved; hashes left empty: the I/O
/// edge fills them, src/io/table/backup_file.h).
std::vector<BackupRange> BackupRangesOf(const TableTransition& transition);

nlohmann::json BackupToJson(const TableBackup& backup);

/// Parses a backup file. Rejects other formats and versions, missing or mistyped keys, bad
/// base64 and data whose length is not the range's; the error names the key
/// ("ranges[2].data_base64: 512 bytes, length_bytes says 4096"). Hashes are checked by the I/O
/// edge.
Result<TableBackup> BackupFromJson(std::string_view text);

/// Differences between the disk a backup was taken from and `now`: size, logical sector size,
/// serial, WWN, and a loop device's backing file.
std::vector<std::string> BackupDeviceMismatches(const BackupDevice& saved, const BackupDevice& now);

/// The transition a restore performs: from `current` (the bytes on disk now, one entry per
/// backup range) back to the saved bytes, in the write order for that direction.
Result<TableTransition> RestoreTransition(const TableBackup& backup,
                                          const std::vector<std::vector<uint8_t>>& current);

/// A byte extent [offset_bytes, offset_bytes + length_bytes) of a disk.
/// The byte extents of the data partitions (not DOS extended ones) of `table`.
std::vector<ByteExtent> PartitionExtents(const PartitionTable& table);

/// How far a backup's context reaches on each side of a range.
inline constexpr uint64_t kContextWindowBytes = 1024 * 1024;

/// Where a backup's context goes (hashes left empty): on each side of each range, the whole
/// sectors up to kContextWindowBytes away that lie outside every range and every extent in
/// `keep_out` (the partitions of the saved and the written table: their bytes belong to
/// filesystems, which change them) and on the disk. Restore compares them only when the disk
/// shows no table to identify it by (wiped, or holding something else). In offset order.
std::vector<BackupContext> ContextPlaces(const std::vector<BackupRange>& ranges,
                                         uint64_t sector_size, uint64_t disk_size_bytes,
                                         const std::vector<ByteExtent>& keep_out);

/// What makes the ranges of `backup` unfit to write back, checked against the table they hold
/// (`saved`, read from the ranges alone) and the disk now (`current_xxh64[i]`: the xxh64 of the
/// bytes range i covers now): each range must be a sector-rounded area of `saved`, or hold now
/// what the backup's write put there (its bytes go back), or already hold the saved bytes. A
/// range edited to point elsewhere (into a partition) is none of these. A translate backup's
/// ranges (the table at two sector sizes) must instead lie clear of every partition of `saved`.
/// One message each.
std::vector<std::string> BackupRangeProblems(const TableBackup& backup, const PartitionTable& saved,
                                             const std::vector<std::string>& current_xxh64);

/// Differences between the table a backup restores (`saved`) and the table on the disk now as
/// the scan read it: label, disk GUID or DOS disk identifier, and (GPT) any partition GUID the
/// backup's table does not have. apply changes none of them, so the disk after the backup's
/// write, or torn half-way, still matches. Empty also when the disk shows no identity (no
/// table, no valid GPT copy): `now.disk_id` is then empty and the context decides.
std::vector<std::string> TableIdentityMismatches(const PartitionTable& saved, const TableScan& now);

/// "sda-20261121T101500Z-xxh64-0123456789abcdef.partalign-backup" for a backup taken at
/// `timestamp` ("20261121T101500Z") of `device_name` before the table `fingerprint`.
std::string BackupFileName(std::string_view device_name, std::string_view timestamp,
                           std::string_view fingerprint);

}  // namespace partalign
