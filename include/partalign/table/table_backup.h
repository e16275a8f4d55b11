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
/// Version 2 adds "context" (the bytes around the saved ranges); version 3 "identity" (the
/// tables' GUIDs or identifiers, and what each partition held: BackupIdentity). Versions 1 and 2
/// are still read: their restore goes ahead on a disk that shows the backup's table (or has its
/// serial or WWN), and refuses a disk that shows none, since zeroed gaps around the ranges are
/// no proof (docs/apply.md, "Restore").
inline constexpr int kBackupFormatVersion = 3;
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
/// written table, as they were when the backup was taken. Recorded (format version 2 and
/// later), and no proof of identity: the gaps of every fresh disk are zeros.
struct BackupContext {
  uint64_t offset_bytes = 0;
  uint64_t length_bytes = 0;
  std::string xxh64;
  bool operator==(const BackupContext&) const = default;
};

/// The identity of a table a backup is about (the saved one, or the one its write produced):
/// what apply and translate keep, so that the disk shows it before, after and torn half-way.
struct BackupTableIdentity {
  std::string table;  ///< "saved" or "applied"
  LabelType label = LabelType::kNone;
  std::string disk_id;  ///< GPT disk GUID (upper case), DOS identifier "0x1234abcd"
  std::vector<std::string> partition_guids;  ///< GPT: each partition's GUID, in number order
  bool operator==(const BackupTableIdentity&) const = default;
};

/// How much of each partition's start a backup hashes.
inline constexpr uint64_t kPartitionHeadBytes = 64 * 1024;

/// What lay at a partition of the saved or the applied table when the backup was taken: its
/// signature (blkid TYPE, UUID, LABEL) and a hash of its first bytes. A table write changes none
/// of it, so it identifies the disk when the table is gone (wiped, or torn by a killed write).
struct BackupPartition {
  std::string table;  ///< "saved" or "applied" (a place both tables share: "saved")
  uint32_t number = 0;
  uint64_t offset_bytes = 0;
  uint64_t length_bytes = 0;
  std::string fs_type;  ///< empty: no signature
  std::string fs_uuid;
  std::string fs_label;
  uint64_t head_bytes = 0;  ///< how many bytes head_xxh64 covers: kPartitionHeadBytes or less
  /// xxh64 of the first head_bytes; empty when they were all zero (zeros identify nothing).
  std::string head_xxh64;
  bool operator==(const BackupPartition&) const = default;
};

/// Format version 3: what identifies the backup's disk beyond its size, serial and WWN.
struct BackupIdentity {
  std::vector<BackupTableIdentity> tables;  ///< the saved table's (unless none), the applied one's
  std::vector<BackupPartition> partitions;  ///< in offset order
  bool operator==(const BackupIdentity&) const = default;
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
  /// The tables' identities and the partitions' contents (format version 3; empty before).
  BackupIdentity identity;
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
/// filesystems, which change them) and on the disk. In offset order.
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
/// table, no valid GPT copy): `now.disk_id` is then empty, and restore looks for other proof.
std::vector<std::string> TableIdentityMismatches(const PartitionTable& saved, const TableScan& now);

/// The identity `table` gives a backup (`role`: "saved" or "applied").
BackupTableIdentity TableIdentityOf(const PartitionTable& table, std::string_view role);

/// TableIdentityMismatches against a recorded identity.
std::vector<std::string> TableIdentityMismatches(const BackupTableIdentity& recorded,
                                                 const TableScan& now);

/// The partitions (not DOS extended ones) of `tables` as a backup records them, fs fields and
/// hashes left empty (the I/O edge fills them): `tables[0]` is the saved table, `tables[1]` the
/// applied one (either may be null); a place both share is recorded once, as the saved one's.
/// In offset order.
std::vector<BackupPartition> BackupPartitionPlaces(const PartitionTable* saved,
                                                   const PartitionTable* applied);

/// What a disk holds now at a BackupPartition's place.
struct PartitionSeen {
  std::string fs_type;
  std::string fs_uuid;
  std::string fs_label;
  std::string head_xxh64;  ///< of the record's head_bytes; empty when all zero or unreadable
};

/// Whether the partitions' contents prove a disk is the backup's: what matches ("partition 2
/// (ext4 UUID 1234... at byte 1048576)") and what contradicts it ("partition 3: the backup saw
/// ext4 UUID X at byte N, the disk holds vfat UUID Y there"). A record matches when the same
/// signature (type and UUID) is there again, or the same non-zero first bytes; it contradicts
/// when another signature is there. A place that shows nothing the backup can recognise is
/// neither.
struct ContentEvidence {
  std::vector<std::string> same;
  std::vector<std::string> other;
  bool proven() const { return !same.empty() && other.empty(); }
};
ContentEvidence CompareContents(const std::vector<BackupPartition>& recorded,
                                const std::vector<PartitionSeen>& now);

/// What the sectors at [offset_bytes, offset_bytes + length_bytes) held before a table of
/// partalign's own first used them, from `backups` (this disk's, any order): the range that
/// holds now what a backup's write put there (`now_xxh64` equals its applied_xxh64, and that
/// write made it a table sector: new_index), followed back through the writes before it to the
/// one that found no table there (no old_index): its saved bytes. nullopt when the range holds
/// anything else (a table another tool wrote, bytes no backup knows). How a DOS EBR that an
/// interrupted apply left in a gap gets the gap's own bytes back when a later apply abandons it
/// (docs/apply.md).
std::optional<std::vector<uint8_t>> BytesBeforeOwnTables(const std::vector<TableBackup>& backups,
                                                         uint64_t offset_bytes,
                                                         uint64_t length_bytes,
                                                         const std::string& now_xxh64);

/// "sda-20261121T101500Z-xxh64-0123456789abcdef.partalign-backup" for a backup taken at
/// `timestamp` ("20261121T101500Z") of `device_name` before the table `fingerprint`.
std::string BackupFileName(std::string_view device_name, std::string_view timestamp,
                           std::string_view fingerprint);

}  // namespace partalign
