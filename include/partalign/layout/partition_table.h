// SPDX-License-Identifier: GPL-3.0-or-later
// A partition table as plain values: what libfdisk read from the disk
// (src/io/table/fdisk_table.cc), what libblkid found inside each partition, the free regions, where
// on disk the table's own bytes live and a fingerprint of those bytes. audit, plan and apply all
// start from this.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "partalign/label/table_finding.h"
#include "partalign/label/table_scan.h"
#include "partalign/topology/device.h"
#include "partalign/util/result.h"

namespace partalign {

/// What partalign knows of a partition's bytes, and how it knows it. Only a proof makes a
/// partition empty: "no signature" is not "empty" (a raw database or VM volume, a volume whose
/// head was wiped, data only near the end). docs/audit-plan.md, "Empty is proven".
enum class ContentProof : uint8_t {
  kUnscanned,  ///< no signature, the first bytes zeros, the rest not read: may hold data
  kSignature,  ///< libblkid found a signature (fs_type): holds data
  kData,       ///< no signature, but a byte that is not zero (data_offset_bytes)
  kZeros,      ///< every byte was read and is zero: empty
  kHoles,      ///< an image file's hole map (SEEK_DATA/SEEK_HOLE) shows only holes: empty
};

/// "unscanned", "signature", "data", "zeros", "holes": stable names for JSON.
std::string_view ToString(ContentProof proof);
std::optional<ContentProof> ContentProofFromString(std::string_view text);

/// What libblkid finds at the start of a partition, and what is proven about the rest.
struct PartitionContents {
  std::string fs_type;  ///< blkid TYPE ("ext4", "vfat", "swap", "crypto_LUKS"); empty if none
  std::string fs_label;
  std::string fs_uuid;
  /// blkid BLOCK_SIZE: the filesystem's block size, when libblkid reports it.
  std::optional<uint64_t> fs_block_size;
  /// The filesystem's size. libblkid 2.38 does not report it (FSSIZE arrived in 2.39), so
  /// partalign reads it from the superblock for ext2/3/4, vfat, swap, xfs and btrfs
  /// (partalign/layout/fs_size.h); unknown means "assume it fills the partition".
  std::optional<uint64_t> fs_size_bytes;
  /// How much is known of the bytes. The default is the safe one: nothing proven, so the
  /// partition may hold data.
  ContentProof proof = ContentProof::kUnscanned;
  /// kData: the first byte found that is not zero, from the partition's start (the first one
  /// the reads met; a signature's data is not located).
  std::optional<uint64_t> data_offset_bytes;
  /// The tail a plan may take from a partition that holds data: every byte from this offset
  /// (from the partition's start) to its end was read as zero, so a move or a resize may give
  /// those bytes up (docs/audit-plan.md, "A partition never shrinks in silence"). nullopt: not
  /// read. Only the part a plan gives up is read, never more.
  std::optional<uint64_t> zeros_from_bytes;
  /// The first byte that is not zero in the tail a plan would have taken (from the partition's
  /// start): bytes past the filesystem are data (an md 1.0 superblock, LUKS or LVM metadata, a
  /// tool's trailer), so the partition keeps every sector.
  std::optional<uint64_t> tail_data_bytes;

  /// Whether the partition may hold data: everything but a proof of emptiness. A partition
  /// that may hold data is moved with its bytes, never by editing the table alone.
  bool MayHoldData() const {
    return proof != ContentProof::kZeros && proof != ContentProof::kHoles;
  }
  bool operator==(const PartitionContents&) const = default;
};

/// The GPT type of a BIOS boot partition (GRUB's core.img on a GPT disk: grub-install embeds
/// it there, `partmap/gpt.c`; docs/boot-records.md).
inline constexpr std::string_view kBiosBootPartitionType = "21686148-6449-6E6F-744E-656564454649";

/// Why the planner leaves a BIOS boot partition where it is.
inline constexpr std::string_view kBiosBootPartitionReason =
    "BIOS boot partition: GRUB's core.img is addressed by absolute sector; nothing to gain "
    "from aligning it";

/// True for a GPT BIOS boot partition (`type_code` compared case-insensitively).
bool IsBiosBootPartition(std::string_view type_code);

/// "holds data (ext4)", "holds data (no signature, byte 1048576 is not zero)", "may hold data
/// (no signature, not proven empty)", "holds nothing (every byte read: zeros)", "holds nothing
/// (only holes in the image)": what is known of a partition's bytes, for messages.
std::string MayHoldDataText(const PartitionContents& contents);

struct Partition {
  /// 1-based, as fdisk, sfdisk and the kernel number partitions (libfdisk partno + 1).
  uint32_t number = 0;
  PartitionKind kind = PartitionKind::kPrimary;
  uint64_t start_sector = 0;
  uint64_t size_sectors = 0;
  /// GPT: the type GUID in upper case; DOS: the type byte as "0x83".
  std::string type_code;
  std::string type_name;   ///< "Linux filesystem", "EFI System", ...
  std::string name;        ///< GPT partition name
  std::string uuid;        ///< GPT unique partition GUID
  std::string attributes;  ///< GPT attribute bits as sfdisk prints them ("RequiredPartition ...")
  bool bootable = false;   ///< DOS boot flag
  PartitionContents contents;

  /// Last sector, inclusive (size_sectors > 0).
  uint64_t end_sector() const { return start_sector + size_sectors - 1; }
  bool operator==(const Partition&) const = default;
};

/// Unpartitioned space that libfdisk would offer for a new partition (inclusive range).
struct FreeRegion {
  uint64_t start_sector = 0;
  uint64_t size_sectors = 0;
  uint64_t end_sector() const { return start_sector + size_sectors - 1; }
  bool operator==(const FreeRegion&) const = default;
};

/// A run of bytes that holds partition-table data (libfdisk's fdisk_locate_disklabel(): "MBR",
/// "GPT Header", "GPT Entries", "GPT Backup Header", "GPT Backup Entries", "EBR").
struct TableArea {
  std::string name;
  uint64_t offset_bytes = 0;
  uint64_t size_bytes = 0;
  bool operator==(const TableArea&) const = default;
};

struct PartitionTable;

/// Whether partalign may plan or write a change to `table`: an error naming the first
/// read-only or unreadable finding otherwise (a damaged table is reported, never "fixed" by a
/// plan: libfdisk would rewrite both GPT copies, or a hybrid MBR as a protective one).
Status CheckChangeable(const PartitionTable& table);

/// Where libfdisk's reading of the table (`table`) differs from the validation gate's scan:
/// label, disk identifier, GPT usable area, and each partition's number, kind, start and size.
/// One message each; empty when they agree. A difference means one of the two misreads the
/// table, so the caller refuses it.
std::vector<std::string> ScanVersusTable(const TableScan& scan, const PartitionTable& table);

struct PartitionTable {
  LabelType label = LabelType::kNone;
  /// The logical sector size the table was read with; every *_sector field is in this unit.
  uint64_t sector_size = 512;
  uint64_t disk_size_sectors = 0;
  /// The area where partitions may lie (GPT FirstUsableLBA..LastUsableLBA; DOS: libfdisk's).
  uint64_t first_usable_lba = 0;
  uint64_t last_usable_lba = 0;
  std::string disk_id;  ///< GPT disk GUID or DOS disk identifier ("0x1234abcd")
  /// In partition-number order; a DOS extended partition is listed with kind kExtended.
  std::vector<Partition> partitions;
  std::vector<FreeRegion> free_regions;
  std::vector<TableArea> areas;
  /// "xxh64:" + 16 hex digits over the bytes of every area, in order: any change to the
  /// on-disk table changes it (plan files are bound to it).
  std::string fingerprint;
  /// What the validation gate found (notes and read-only findings: an unreadable table is not
  /// read at all). Empty for a sound table.
  std::vector<TableFinding> findings;

  const Partition* Find(uint32_t number) const;
  bool operator==(const PartitionTable&) const = default;
};

/// Copies what `from` proves about each partition's bytes (ContentProof and the data offset
/// where `to` knows less, kUnscanned; the proofs of its tail) to the partitions of `to` with the
/// same number, start and size: another reading of the same table (libfdisk's, on a scratch copy)
/// learns the proofs of the first.
void CopyContentProofs(const PartitionTable& from, PartitionTable* to);

}  // namespace partalign
