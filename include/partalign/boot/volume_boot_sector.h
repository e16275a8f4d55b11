// SPDX-License-Identifier: GPL-3.0-or-later
// The boot sectors of the filesystems that record their partition's start: NTFS (hidden
// sectors at 0x1C; the backup boot sector on the volume's last sector), FAT12/16/32
// (BPB_HiddSec at 0x1C; FAT32's backup at BPB_BkBootSec), exFAT (PartitionOffset at 64, in the
// main and backup boot regions, each with its boot checksum), and the SYSLINUX/EXTLINUX
// volume boot record (it reads the partition offset from 0x1C). Pure parsers of one sector;
// every field they return was checked against what the format allows (docs/boot-records.md
// names the sources).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace partalign {

/// Offset of the hidden-sectors field (u32) in NTFS, FAT and syslinux boot sectors.
inline constexpr uint64_t kHiddenSectorsOffset = 0x1C;
/// Offset of exFAT's PartitionOffset (u64) in its main and backup boot sectors.
inline constexpr uint64_t kExfatPartitionOffsetOffset = 64;

struct NtfsBootSector {
  uint32_t bytes_per_sector = 0;
  uint32_t hidden_sectors = 0;
  /// The volume's sectors, the backup boot sector excluded: it sits at this sector.
  uint64_t number_of_sectors = 0;
  bool operator==(const NtfsBootSector&) const = default;
};

/// An NTFS boot sector as ntfs-3g's ntfs_boot_sector_is_ntfs() accepts it: "NTFS    " at 3,
/// 256..4096 bytes per sector (a power of two), a valid cluster size, the FAT fields that
/// must be zero, a sector count, 55 AA at 510.
std::optional<NtfsBootSector> ParseNtfsBootSector(std::span<const uint8_t> sector);

enum class FatType { kFat12, kFat16, kFat32 };

std::string_view ToString(FatType type);

struct FatBootSector {
  FatType type = FatType::kFat32;
  uint32_t bytes_per_sector = 0;
  uint32_t hidden_sectors = 0;
  uint64_t total_sectors = 0;
  /// FAT32 BPB_BkBootSec: the backup boot sector's sector in the volume; 0 for none (FAT12/16,
  /// or a FAT32 without one: 0 or 0xFFFF on disk).
  uint32_t backup_boot_sector = 0;
  std::string oem_name;  ///< bytes 3..10, trailing spaces removed ("mkfs.fat", "SYSLINUX")
  bool operator==(const FatBootSector&) const = default;
};

/// A FAT boot sector as the FAT specification describes it (and dosfstools' boot.c checks
/// it): a jump, 512..4096 bytes per sector, a power-of-two cluster, reserved sectors, one or
/// more FATs, a media byte, 55 AA at 510; the type from the cluster count (the specification's
/// rule: < 4085 FAT12, < 65525 FAT16, else FAT32). NTFS and exFAT boot sectors are not FAT.
std::optional<FatBootSector> ParseFatBootSector(std::span<const uint8_t> sector);

struct ExfatBootSector {
  /// PartitionOffset: the volume's start on the disk in its own sectors; 0 = "ignore this
  /// field" (exFAT specification 3.1.5).
  uint64_t partition_offset = 0;
  uint64_t volume_length = 0;  ///< sectors
  uint32_t bytes_per_sector = 0;
  bool operator==(const ExfatBootSector&) const = default;
};

/// An exFAT main (or backup) boot sector (exFAT specification 3.1): EB 76 90, "EXFAT   ",
/// bytes 11..63 zero, 512..4096 bytes per sector, 55 AA at 510.
std::optional<ExfatBootSector> ParseExfatBootSector(std::span<const uint8_t> sector);

/// The boot checksum of an exFAT boot region's first 11 sectors (specification 3.4): every
/// byte, except VolumeFlags (106, 107) and PercentInUse (112) of the first sector. `region`
/// holds at least 11 * `bytes_per_sector` bytes.
uint32_t ExfatBootChecksum(std::span<const uint8_t> region, uint32_t bytes_per_sector);

/// The name a SYSLINUX/EXTLINUX boot sector carries at byte 3 ("SYSLINUX", "EXTLINUX"), when
/// `sector` is one (a jump, that name, 55 AA at 510); nullopt otherwise.
std::optional<std::string> SyslinuxBootSectorName(std::span<const uint8_t> sector);

}  // namespace partalign
