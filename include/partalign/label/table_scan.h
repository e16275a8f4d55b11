// SPDX-License-Identifier: GPL-3.0-or-later
// The validation gate for every partition table partalign reads: a pure scanner that parses the
// MBR, the GPT (both copies) and the EBR chain from the disk's bytes, checks every field a later
// step relies on, and says what it found - before libfdisk reads anything (libfdisk 2.38 aborts
// or silently drops partitions on some tables, docs/audit-plan.md "The validation gate").
//
// What it checks, and what a failure means (TableSeverity):
// - MBR: the 55 AA signature, boot flags 0x00/0x80 (otherwise a boot sector, not a table),
//   entries with sectors, inside the disk, not over LBA 0, not overlapping; one extended
//   partition at most.
// - EBR chain: every EBR signed, inside the extended partition, at most one logical partition
//   and one link each; no loop; at most 56 logical partitions (libfdisk reads partitions 1-60
//   and deletes the rest when it writes); each logical partition inside the extended partition
//   and clear of every EBR.
// - GPT, each copy: signature, header size 92..sector size, header CRC, MyLBA, 128-byte
//   entries, an entry array of bounded size inside the disk and outside the usable area, usable
//   area inside the disk and clear of the headers, entry array CRC; primary and backup agree;
//   the backup sits at the end of the disk; entries inside the usable area, typed, disjoint.
// - Protective MBR without a GPT, a GPT without protective MBR, hybrid MBRs, tables written for
//   another sector size.
//
// Reads are bounded: at most kMaxGptEntryArrayBytes per entry array and kMaxEbrChainWalk EBRs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "partalign/label/disk_reader.h"
#include "partalign/label/table_finding.h"
#include "partalign/topology/device.h"

namespace partalign {

/// The largest GPT entry array read: 16384 entries of 128 bytes. Tools write 128 entries
/// (16 KiB); a header claiming more than this is treated as damaged rather than read.
inline constexpr uint64_t kMaxGptEntryArrayBytes = 2 * 1024 * 1024;
/// libfdisk keeps at most 60 DOS partitions (MAXIMUM_PARTS, libfdisk/src/dos.c): the four
/// primary slots and 56 logical partitions. It warns "Omitting partitions after #60" about
/// the rest and clears the link to them when it writes.
inline constexpr uint32_t kMaxFdiskLogicalPartitions = 56;
/// How many EBRs the scanner follows at most (to count a long chain; a loop stops it first).
inline constexpr uint32_t kMaxEbrChainWalk = 4096;

enum class PartitionKind { kPrimary, kExtended, kLogical };

std::string_view ToString(PartitionKind kind);

/// What LBA 0 holds.
enum class MbrKind {
  kNone,        ///< no 55 AA signature
  kDos,         ///< a DOS partition table
  kProtective,  ///< a GPT protective MBR: one 0xEE entry, the others empty
  kHybrid,      ///< a 0xEE entry and other partitions (gdisk's hybrid MBR)
  kBootSector,  ///< 55 AA, but the entries are not partition entries (a FAT/NTFS boot sector)
};

std::string_view ToString(MbrKind kind);

/// One copy of the GPT (primary at LBA 1, backup at the end of the disk).
struct GptCopy {
  bool present = false;  ///< the "EFI PART" signature is there
  bool valid = false;    ///< every check passed
  uint64_t header_lba = 0;
  /// Why it is not valid (empty when valid or absent): "header CRC 0x1234abcd, computed 0x...".
  std::string problem;
  bool operator==(const GptCopy&) const = default;
};

/// A partition as the scan read it. Sectors are logical sectors of the scan's sector size.
struct ScannedPartition {
  uint32_t number = 0;  ///< 1-based, as libfdisk, sfdisk and the kernel number them
  PartitionKind kind = PartitionKind::kPrimary;
  uint64_t start_sector = 0;
  uint64_t size_sectors = 0;
  std::string type_code;  ///< GPT type GUID in upper case; DOS "0x83"
  std::string uuid;       ///< GPT unique partition GUID in upper case; DOS empty
  bool bootable = false;  ///< DOS boot flag
  bool operator==(const ScannedPartition&) const = default;
};

struct TableScan {
  LabelType label = LabelType::kNone;
  MbrKind mbr = MbrKind::kNone;
  GptCopy primary;
  GptCopy backup;
  uint64_t sector_size = 512;
  uint64_t disk_size_sectors = 0;
  /// GPT: the header's usable area (0 for DOS).
  uint64_t first_usable_lba = 0;
  uint64_t last_usable_lba = 0;
  /// GPT disk GUID in upper case, DOS disk identifier as "0x1234abcd"; empty if none.
  std::string disk_id;
  /// In number order; empty when the table is unreadable.
  std::vector<ScannedPartition> partitions;
  /// The sectors of the EBR chain in chain order (DOS).
  std::vector<uint64_t> ebr_lbas;
  std::vector<TableFinding> findings;

  TableSeverity severity() const { return WorstSeverity(findings); }
  bool operator==(const TableScan&) const = default;
};

/// Scans the table at the start of `disk`, reading it with `sector_size`-byte logical sectors
/// (512 .. 65536, a power of two). Never fails: a read error or a damaged structure is a
/// finding.
TableScan ScanTable(const DiskReader& disk, uint64_t sector_size);

}  // namespace partalign
