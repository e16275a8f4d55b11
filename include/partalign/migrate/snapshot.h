// SPDX-License-Identifier: GPL-3.0-or-later
// A snapshot of a disk (format "partalign-snapshot", docs/output.md): what `partalign verify`
// compares against after the disk moved to another controller (docs/migration.md). It records
// the identity (serial/WWN, model, transport, USB bridge), the topology, the partition table as
// read with the sector size it was written for (label, disk GUID, partitions with their GUIDs,
// types and names, fingerprint), what each partition holds (libblkid type, UUID, label, and a
// digest of its first 64 KiB, to recognise the data wherever the LBAs point), the audit
// verdicts and each partitioner's prediction. Plain values: the I/O edge captures them
// (src/io/migrate/snapshot_capture.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "partalign/layout/partition_table.h"
#include "partalign/topology/device.h"
#include "partalign/util/result.h"

namespace partalign {

inline constexpr std::string_view kSnapshotFormat = "partalign-snapshot";
inline constexpr int kSnapshotFormatVersion = 1;
/// File name suffix of snapshots.
inline constexpr std::string_view kSnapshotSuffix = ".partalign-snapshot";
/// How much of each partition the content digest covers: enough for every superblock libblkid
/// knows (the farthest common one, btrfs, is at 64 KiB), small enough to read in a moment.
inline constexpr uint64_t kContentDigestBytes = 64 * 1024;

/// The digest of the first bytes of a partition ("xxh64:" + 16 hex digits).
struct ContentDigest {
  uint64_t offset_bytes = 0;
  uint64_t length_bytes = 0;
  std::string xxh64;
  bool operator==(const ContentDigest&) const = default;
};

/// One audit criterion's verdict (partalign/layout/audit.h); `ok` is empty when it does not
/// apply.
struct SnapshotCheck {
  std::string key;  ///< CriterionKey: "grain", "parted_align_check_opt", ...
  std::optional<bool> ok;
  bool operator==(const SnapshotCheck&) const = default;
};

struct SnapshotVerdicts {
  uint32_t number = 0;
  bool aligned = true;
  std::vector<SnapshotCheck> checks;
  bool operator==(const SnapshotVerdicts&) const = default;
};

/// What one partitioner would do on a fresh label of the disk (explain's prediction, reduced
/// to what a move can change).
struct SnapshotPrediction {
  std::string tool;  ///< "parted-optimal", "sfdisk", ...
  std::string version;
  std::optional<int64_t> grain_sectors;
  std::optional<int64_t> offset_sectors;
  std::optional<uint64_t> first_start_gpt;
  std::optional<uint64_t> first_start_dos;
  std::optional<bool> warns_at_1mib;
  std::string error;
  bool operator==(const SnapshotPrediction&) const = default;
};

struct Snapshot {
  std::string partalign_version;
  std::string created;  ///< UTC, ISO 8601
  /// path, kernel name, transport, vendor, model, serial, WWN, USB bridge, backing file.
  Identity identity;
  Topology topology;
  /// The table as read with `table.sector_size`: the size it was written for when that is
  /// known, else the disk's. Contents: libblkid's type, UUID, label and block size. Areas and
  /// free regions are not recorded.
  PartitionTable table;
  /// The logical sector size the table's bytes say it was written for, and why.
  std::optional<uint64_t> table_written_for;
  std::string table_written_for_reason;
  /// One per data partition (not a DOS extended one), in partition order.
  std::vector<ContentDigest> digests;
  /// The audit on the disk's topology (empty with `audit_note` when the table was written for
  /// another sector size and could not be audited as it stands).
  std::vector<SnapshotVerdicts> verdicts;
  std::string audit_note;
  std::vector<SnapshotPrediction> predictions;

  /// The digest of the partition starting at `offset_bytes`, or nullptr.
  const ContentDigest* DigestAt(uint64_t offset_bytes) const;
};

nlohmann::json SnapshotToJson(const Snapshot& snapshot);

/// Parses a snapshot file. Rejects other formats and versions, missing or mistyped keys; the
/// error names the key ("table.partitions[1].start_sector: missing").
Result<Snapshot> SnapshotFromJson(std::string_view text);

/// "sdb-WD_Elements_25A3-XYZ123-20261121T101500Z.partalign-snapshot": the disk's kernel name
/// (or image file name), its model and serial when it has them, the UTC time `timestamp`.
std::string SnapshotFileName(const Identity& identity, std::string_view timestamp);

}  // namespace partalign
