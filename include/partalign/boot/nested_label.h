// SPDX-License-Identifier: GPL-3.0-or-later
// Labels that describe partitions by their own absolute offsets, outside the MBR/GPT:
// - a BSD disklabel in a DOS slice (FreeBSD 0xA5, OpenBSD 0xA6, NetBSD 0xA9, BSDI 0xB7): in
//   the slice's second sector, `p_offset` of each BSD partition is an absolute sector (Linux
//   block/partitions/msdos.c, parse_bsd; util-linux libfdisk/src/bsd.c), so moving the slice
//   means rewriting them (and the label's XOR checksum) with it;
// - LDM, Windows' dynamic disks: the real extents live in the LDM database at the disk's end
//   (Linux block/partitions/ldm.c), the MBR/GPT entries are not authoritative.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace partalign {

/// BSD_DISKMAGIC (d_magic and d_magic2).
inline constexpr uint32_t kBsdDiskMagic = 0x82564557;
/// Where the label's partition array starts (struct disklabel, 16-byte entries).
inline constexpr uint64_t kBsdPartitionsOffset = 148;
inline constexpr uint64_t kBsdPartitionEntryBytes = 16;

struct BsdPartitionEntry {
  uint32_t size_sectors = 0;
  uint32_t offset_sectors = 0;  ///< absolute
  uint8_t fstype = 0;
  bool operator==(const BsdPartitionEntry&) const = default;
};

struct BsdDisklabel {
  /// Where the label starts in the sector that holds it (0, or 64 for old i386 labels).
  uint64_t offset_in_sector = 0;
  uint32_t sector_size = 0;
  std::vector<BsdPartitionEntry> partitions;  ///< d_npartitions entries
  /// The label's bytes (d_magic to the end of the partition array): what the checksum covers.
  uint64_t size_bytes() const {
    return kBsdPartitionsOffset + partitions.size() * kBsdPartitionEntryBytes;
  }
  bool operator==(const BsdDisklabel&) const = default;
};

/// True for the DOS types of BSD slices: 0xA5 (FreeBSD), 0xA6 (OpenBSD), 0xA9 (NetBSD), 0xB7
/// (BSDI).
bool IsBsdSliceType(std::string_view dos_type_code);

/// A BSD disklabel in `sector` (the slice's second sector) at offset 0 or 64: both magics, at
/// most 22 partitions (NetBSD's MAXPARTITIONS, the largest), the array inside the sector, a
/// checksum that XORs to zero.
std::optional<BsdDisklabel> ParseBsdDisklabel(std::span<const uint8_t> sector);

/// The label's XOR checksum (dkcksum): the 16-bit words of `label` (d_magic to the end of its
/// partition array) with d_checksum taken as 0.
uint16_t BsdDisklabelChecksum(std::span<const uint8_t> label);

/// The label bytes (d_magic to the end of the partition array) of `sector`'s label with every
/// partition that lies inside [old_start, old_start + old_size) shifted by `delta_sectors` and
/// the checksum recomputed; nullopt when a shifted offset leaves 32 bits or lands outside the
/// new slice [new_start, new_start + new_size).
std::optional<std::vector<uint8_t>> ShiftBsdDisklabel(std::span<const uint8_t> sector,
                                                      const BsdDisklabel& label, uint64_t old_start,
                                                      uint64_t old_size, uint64_t new_start,
                                                      uint64_t new_size);

/// True for the partition types of LDM: DOS 0x42, GPT "LDM metadata"
/// (5808C8AA-7E8F-42E0-85D2-E1E90434CFB3) and "LDM data" (AF9B60A0-1431-4F62-BC68-3311714A69AD).
bool IsLdmPartitionType(std::string_view type_code);

/// The LDM private header ("PRIVHEAD" at the start of `sector`; on an MBR disk in sector 6).
bool IsLdmPrivateHeader(std::span<const uint8_t> sector);

/// Where an MBR dynamic disk keeps its first private header (ldm.c: OFF_PRIV1).
inline constexpr uint64_t kLdmPrivateHeaderSector = 6;

}  // namespace partalign
