// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/boot/volume_boot_sector.h"

#include <algorithm>

#include "partalign/util/byte_order.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

constexpr uint64_t kBootSignatureOffset = 510;  // 55 AA

bool HasBootSignature(std::span<const uint8_t> sector) {
  return sector.size() >= 512 && sector[kBootSignatureOffset] == 0x55 &&
         sector[kBootSignatureOffset + 1] == 0xAA;
}

// A x86 jump at byte 0: EB xx 90 (short jump, nop) or E9 xx xx (near jump), as the FAT
// specification requires of BS_jmpBoot and every boot sector here has.
bool HasBootJump(std::span<const uint8_t> sector) {
  return sector.size() >= 3 && ((sector[0] == 0xEB && sector[2] == 0x90) || sector[0] == 0xE9);
}

// NTFS: clusters per MFT record / index record, a power of two up to 64 or a negative shift
// (0xE1..0xF7: 2^-n bytes), as ntfs_boot_sector_is_ntfs() accepts them.
bool NtfsRecordSizeOk(uint8_t value) {
  if (value >= 0xE1 && value <= 0xF7) return true;
  return value <= 0x40 && IsPowerOfTwo(value);
}

// ntfs-3g's NTFS_MAX_CLUSTER_SIZE (layout.h): 2 MiB.
constexpr uint64_t kNtfsMaxClusterBytes = 2 * 1024 * 1024;

}  // namespace

std::string_view ToString(FatType type) {
  switch (type) {
    case FatType::kFat12:
      return "FAT12";
    case FatType::kFat16:
      return "FAT16";
    case FatType::kFat32:
      return "FAT32";
  }
  return "FAT";
}

std::optional<NtfsBootSector> ParseNtfsBootSector(std::span<const uint8_t> sector) {
  if (sector.size() < 512 || !HasMagic(sector, 3, "NTFS    ")) return std::nullopt;
  const uint16_t bps = *Le<uint16_t>(sector, 0x0B);
  if (bps < 256 || bps > 4096 || !IsPowerOfTwo(bps)) return std::nullopt;
  const uint8_t spc_code = sector[0x0D];
  uint64_t spc = 0;
  if (spc_code <= 128 && IsPowerOfTwo(spc_code)) {
    spc = spc_code;
  } else if (spc_code >= 240 && spc_code <= 253) {
    spc = uint64_t{1} << (256 - spc_code);
  } else {
    return std::nullopt;
  }
  if (spc * bps > kNtfsMaxClusterBytes) return std::nullopt;
  // The FAT fields NTFS leaves zero: reserved sectors, FATs, root entries, sectors, sectors per
  // FAT, large sectors.
  if (*Le<uint16_t>(sector, 0x0E) != 0 || sector[0x10] != 0 || *Le<uint16_t>(sector, 0x11) != 0 ||
      *Le<uint16_t>(sector, 0x13) != 0 || *Le<uint16_t>(sector, 0x16) != 0 ||
      *Le<uint32_t>(sector, 0x20) != 0) {
    return std::nullopt;
  }
  if (!NtfsRecordSizeOk(sector[0x40]) || !NtfsRecordSizeOk(sector[0x44])) return std::nullopt;
  const auto mft = static_cast<int64_t>(*Le<uint64_t>(sector, 0x30));
  const auto mirror = static_cast<int64_t>(*Le<uint64_t>(sector, 0x38));
  if (mft <= 0 || mirror <= 0 || mft == mirror) return std::nullopt;
  const uint64_t sectors = *Le<uint64_t>(sector, 0x28);
  if (sectors == 0 || sectors > (uint64_t{1} << 62)) return std::nullopt;
  // ntfs-3g only warns about a missing 55 AA; partalign writes to this sector and wants to be
  // sure it is one.
  if (!HasBootSignature(sector)) return std::nullopt;
  return NtfsBootSector{bps, *Le<uint32_t>(sector, kHiddenSectorsOffset), sectors};
}

std::optional<FatBootSector> ParseFatBootSector(std::span<const uint8_t> sector) {
  if (sector.size() < 512 || !HasBootJump(sector) || !HasBootSignature(sector)) {
    return std::nullopt;
  }
  if (HasMagic(sector, 3, "NTFS    ") || HasMagic(sector, 3, "EXFAT   ")) return std::nullopt;
  const uint16_t bps = *Le<uint16_t>(sector, 0x0B);
  const uint8_t spc = sector[0x0D];
  const uint16_t reserved = *Le<uint16_t>(sector, 0x0E);
  const uint8_t fats = sector[0x10];
  const uint16_t root_entries = *Le<uint16_t>(sector, 0x11);
  const uint16_t total16 = *Le<uint16_t>(sector, 0x13);
  const uint8_t media = sector[0x15];
  const uint16_t fat16_size = *Le<uint16_t>(sector, 0x16);
  const uint32_t total32 = *Le<uint32_t>(sector, 0x20);
  const uint32_t fat32_size = *Le<uint32_t>(sector, 0x24);
  if (bps < 512 || bps > 4096 || !IsPowerOfTwo(bps)) return std::nullopt;
  if (!IsPowerOfTwo(spc) || spc > 128) return std::nullopt;
  if (reserved == 0 || fats == 0 || fats > 4) return std::nullopt;
  if (media != 0xF0 && media < 0xF8) return std::nullopt;
  const uint64_t fat_size = fat16_size != 0 ? fat16_size : fat32_size;
  const uint64_t total = total16 != 0 ? total16 : total32;
  if (fat_size == 0 || total == 0) return std::nullopt;
  const uint64_t root_sectors = (uint64_t{root_entries} * 32 + bps - 1) / bps;
  const uint64_t meta = reserved + uint64_t{fats} * fat_size + root_sectors;
  if (meta >= total) return std::nullopt;
  const uint64_t clusters = (total - meta) / spc;
  FatBootSector out;
  out.type = clusters < 4085    ? FatType::kFat12
             : clusters < 65525 ? FatType::kFat16
                                : FatType::kFat32;
  if (out.type == FatType::kFat32) {
    // The specification: a FAT32 volume has BPB_FATSz16 = 0 and BPB_RootEntCnt = 0.
    if (fat16_size != 0 || root_entries != 0) return std::nullopt;
    const uint16_t backup = *Le<uint16_t>(sector, 0x32);
    if (backup != 0 && backup != 0xFFFF) {
      if (backup >= reserved) return std::nullopt;  // it lies in the reserved region
      out.backup_boot_sector = backup;
    }
  }
  out.bytes_per_sector = bps;
  out.hidden_sectors = *Le<uint32_t>(sector, kHiddenSectorsOffset);
  out.total_sectors = total;
  out.oem_name.assign(reinterpret_cast<const char*>(sector.data()) + 3, 8);
  while (!out.oem_name.empty() && (out.oem_name.back() == ' ' || out.oem_name.back() == '\0')) {
    out.oem_name.pop_back();
  }
  for (char& c : out.oem_name) {
    if (c < 0x20 || c > 0x7E) c = '?';
  }
  return out;
}

std::optional<ExfatBootSector> ParseExfatBootSector(std::span<const uint8_t> sector) {
  if (sector.size() < 512 || sector[0] != 0xEB || sector[1] != 0x76 || sector[2] != 0x90) {
    return std::nullopt;
  }
  if (!HasMagic(sector, 3, "EXFAT   ") || !HasBootSignature(sector)) return std::nullopt;
  if (!std::all_of(sector.begin() + 11, sector.begin() + 64, [](uint8_t b) { return b == 0; })) {
    return std::nullopt;
  }
  const uint8_t shift = sector[108];
  if (shift < 9 || shift > 12) return std::nullopt;
  const uint64_t length = *Le<uint64_t>(sector, 72);
  // VolumeLength: at least 2^20 / sector size (specification 3.1.6).
  if (length < (uint64_t{1} << (20 - shift))) return std::nullopt;
  return ExfatBootSector{*Le<uint64_t>(sector, kExfatPartitionOffsetOffset), length,
                         uint32_t{1} << shift};
}

uint32_t ExfatBootChecksum(std::span<const uint8_t> region, uint32_t bytes_per_sector) {
  const size_t n = std::min<size_t>(region.size(), size_t{11} * bytes_per_sector);
  uint32_t sum = 0;
  for (size_t i = 0; i < n; ++i) {
    if (i == 106 || i == 107 || i == 112) continue;
    sum = ((sum & 1) ? 0x80000000u : 0u) + (sum >> 1) + region[i];
  }
  return sum;
}

std::optional<std::string> SyslinuxBootSectorName(std::span<const uint8_t> sector) {
  if (!HasBootJump(sector) || !HasBootSignature(sector)) return std::nullopt;
  for (const char* name : {"SYSLINUX", "EXTLINUX", "ISOLINUX"}) {
    if (HasMagic(sector, 3, name)) return std::string(name);
  }
  return std::nullopt;
}

}  // namespace partalign
