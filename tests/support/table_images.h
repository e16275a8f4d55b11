// SPDX-License-Identifier: GPL-3.0-or-later
// Partition-table images built byte by byte for the validation gate's tests (and the table
// corpus): valid MBRs, EBR chains and GPTs with correct CRCs, and the damage real disks show
// (bad CRCs, wrong header fields, entries past the end or overlapping, EBR loops and long
// chains, hybrid MBRs, tables for another sector size). Pure: the disk is a SparseDisk;
// WriteImageFile() puts it in a sparse file for the I/O and CLI tests.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "partalign/label/disk_reader.h"

namespace partalign::test {

inline constexpr const char* kLinuxFsGuid = "0FC63DAF-8483-4772-8E79-3D69D8477DE4";
inline constexpr const char* kEspGuid = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B";

/// The 16 bytes of a GUID written "0FC63DAF-8483-4772-8E79-3D69D8477DE4" (the first three
/// fields little-endian, as GPT stores them).
std::array<uint8_t, 16> GuidBytes(const std::string& text);

struct MbrEntrySpec {
  uint8_t boot = 0;
  uint8_t type = 0;
  uint32_t start = 0;
  uint32_t count = 0;
};

/// Writes a 512-byte MBR (or EBR) with these entries, disk identifier and 55 AA at byte
/// `offset_bytes` of `disk`.
void WriteMbr(SparseDisk* disk, uint64_t offset_bytes, const std::array<MbrEntrySpec, 4>& entries,
              uint32_t disk_id = 0x12345678);

struct LogicalSpec {
  uint64_t start = 0;  ///< absolute sector of the logical partition
  uint64_t size = 0;
  uint8_t type = 0x83;
};

/// A DOS disk: primaries in MBR slots 1-3 (`primaries`, empty entries allowed), and, when
/// `logicals` is not empty, an extended partition (type 0x05) in slot 4 from `ext_start` to
/// `ext_end` whose EBR chain holds the logical partitions in order, each EBR one sector
/// before its partition (the head EBR at ext_start).
SparseDisk MakeDosDisk(uint64_t size_bytes, uint64_t sector_size,
                       const std::vector<MbrEntrySpec>& primaries,
                       const std::vector<LogicalSpec>& logicals = {}, uint64_t ext_start = 0,
                       uint64_t ext_end = 0);

struct GptEntrySpec {
  uint32_t index = 0;  ///< 0-based slot (partition number - 1)
  std::string type_guid = kLinuxFsGuid;
  std::string unique_guid;  ///< empty: derived from the index
  uint64_t start = 0;
  uint64_t end = 0;  ///< inclusive
};

struct GptSpec {
  uint64_t sector_size = 512;
  uint64_t disk_sectors = 0;
  std::string disk_guid = "A1B2C3D4-0000-4000-8000-000000000001";
  uint32_t entry_count = 128;
  uint32_t entry_bytes = 128;
  /// 0: right after the primary entry array / right before the backup one.
  uint64_t first_usable = 0;
  uint64_t last_usable = 0;
  std::vector<GptEntrySpec> entries;
  /// The protective MBR's entries; empty: one 0xEE entry from sector 1 to the end.
  std::vector<MbrEntrySpec> mbr;
};

/// A disk with a protective MBR and a primary and backup GPT as `spec` says, CRCs right.
SparseDisk MakeGptDisk(const GptSpec& spec);

/// Where the GPT copies of a disk made by MakeGptDisk are.
uint64_t PrimaryHeaderLba();
uint64_t BackupHeaderLba(const GptSpec& spec);

/// Overwrites `width` bytes (little-endian `value`) at byte `field` of the GPT header at
/// `header_lba`; with `fix_crc` the header CRC is recomputed, so only the field is wrong.
void SetGptHeaderField(SparseDisk* disk, uint64_t sector_size, uint64_t header_lba, size_t field,
                       size_t width, uint64_t value, bool fix_crc);

/// Overwrites `width` bytes at byte `field` of entry `index` of the entry array the header at
/// `header_lba` points to, then recomputes the array CRC and the header CRC.
void SetGptEntryField(SparseDisk* disk, uint64_t sector_size, uint64_t header_lba, uint32_t index,
                      size_t field, size_t width, uint64_t value);

/// Flips one byte inside the header at `header_lba` without fixing the CRC.
void CorruptGptHeader(SparseDisk* disk, uint64_t sector_size, uint64_t header_lba);

/// A disk with an Atari (AHDI) root sector as libblkid's atari prober accepts it: one active
/// "GEM" partition from sector 2, no 55 AA. libfdisk knows no Atari label.
SparseDisk MakeAtariDisk(uint64_t size_bytes);

/// Writes `disk` to `path` as a sparse file of its size (holes where nothing was written).
void WriteImageFile(const SparseDisk& disk, const std::string& path);

/// Reads an image file into a SparseDisk (the whole file; for small test images).
SparseDisk ReadImageFile(const std::string& path);

}  // namespace partalign::test
