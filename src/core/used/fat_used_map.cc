// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/used/fat_used_map.h"
#include "partalign/util/units.h"

#include <algorithm>

#include <fmt/format.h>

namespace partalign {
namespace {

/// The FAT specification's limits: fewer clusters than these make FAT12, then FAT16.
constexpr uint64_t kMaxFat12Clusters = 4084;
constexpr uint64_t kMaxFat16Clusters = 65524;
/// FAT32 entries use 28 bits; cluster numbers above this are reserved.
constexpr uint64_t kMaxFat32Clusters = 0x0FFFFFF5;
/// How much of a FAT is read at once.
constexpr uint64_t kFatPieceBytes = 1 << 20;
/// "Clean shutdown" bits in FAT entry 1 (Microsoft's specification, "FAT Volume Initialization"):
/// clear means the volume was not unmounted cleanly. FAT12 has none.
constexpr uint32_t kFat16CleanBit = 0x8000;
constexpr uint32_t kFat32CleanBit = 0x08000000;

// Entry `n` of a FAT whose bytes [piece_first_byte, ...) are in `piece` (the caller made sure
// the entry lies inside it).
uint32_t Entry(const FatGeometry& g, std::span<const uint8_t> piece, uint64_t piece_first_byte,
               uint64_t n) {
  switch (g.fat_bits) {
    case 12: {
      const uint64_t at = n + n / 2 - piece_first_byte;
      const uint32_t pair = Le16(&piece[at]);
      return n % 2 == 0 ? pair & 0xfff : pair >> 4;
    }
    case 16:
      return Le16(&piece[2 * n - piece_first_byte]);
    default:
      return Le32(&piece[4 * n - piece_first_byte]) & 0x0fffffff;
  }
}

// Byte of the FAT where entry n starts (FAT12: the byte holding its low bits).
uint64_t EntryByte(uint32_t bits, uint64_t n) { return bits == 12 ? n + n / 2 : n * bits / 8; }

}  // namespace

Result<FatGeometry> ParseFatBootSector(std::span<const uint8_t> s, uint64_t partition_bytes) {
  if (s.size() < 512) return MakeError("the boot sector is shorter than 512 bytes");
  if (s[510] != 0x55 || s[511] != 0xaa) return MakeError("the boot sector has no 55 AA signature");
  FatGeometry g;
  g.bytes_per_sector = Le16(&s[11]);
  g.sectors_per_cluster = s[13];
  g.reserved_sectors = Le16(&s[14]);
  g.fat_count = s[16];
  const uint32_t root_entries = Le16(&s[17]);
  const uint32_t total16 = Le16(&s[19]);
  const uint32_t fat16 = Le16(&s[22]);
  const uint32_t total32 = Le32(&s[32]);
  if (!IsPowerOfTwo(g.bytes_per_sector) || g.bytes_per_sector < 512 || g.bytes_per_sector > 4096) {
    return MakeError(
        fmt::format("bytes per sector {} is not 512, 1024, 2048 or 4096", g.bytes_per_sector));
  }
  if (!IsPowerOfTwo(g.sectors_per_cluster)) {
    return MakeError(
        fmt::format("sectors per cluster {} is not a power of two", g.sectors_per_cluster));
  }
  if (g.reserved_sectors == 0) return MakeError("the reserved sector count is 0");
  if (g.fat_count == 0) return MakeError("the FAT count is 0");
  g.fat_sectors = fat16 != 0 ? fat16 : Le32(&s[36]);
  if (g.fat_sectors == 0) return MakeError("the FAT size is 0");
  g.total_sectors = total16 != 0 ? total16 : total32;
  const uint64_t bps = g.bytes_per_sector;
  if (g.total_sectors == 0 || g.total_sectors > partition_bytes / bps) {
    return MakeError(
        fmt::format("the filesystem's {} sectors of {} bytes do not fit the {}-byte "
                    "partition",
                    g.total_sectors, bps, partition_bytes));
  }
  g.root_dir_sectors = static_cast<uint32_t>((root_entries * 32 + bps - 1) / bps);
  // Every count below is bounded by total_sectors (< 2^32), so no sum overflows.
  const uint64_t meta = g.reserved_sectors + g.fat_count * g.fat_sectors + g.root_dir_sectors;
  if (meta >= g.total_sectors) {
    return MakeError(
        fmt::format("the reserved sectors, FATs and root directory ({} sectors) fill "
                    "the whole filesystem ({} sectors)",
                    meta, g.total_sectors));
  }
  g.cluster_count = (g.total_sectors - meta) / g.sectors_per_cluster;
  g.fat_bits = g.cluster_count <= kMaxFat12Clusters   ? 12
               : g.cluster_count <= kMaxFat16Clusters ? 16
                                                      : 32;
  if (g.fat_bits == 32 && (root_entries != 0 || fat16 != 0)) {
    return MakeError("a FAT32 filesystem with a FAT16 root directory or FAT size");
  }
  if (g.fat_bits == 32 && g.cluster_count > kMaxFat32Clusters) {
    return MakeError(fmt::format("{} clusters are more than FAT32 can number", g.cluster_count));
  }
  if (EntryByte(g.fat_bits, g.cluster_count + 2) + 2 > g.fat_sectors * bps) {
    return MakeError(
        fmt::format("a FAT of {} sectors cannot hold {} clusters", g.fat_sectors, g.cluster_count));
  }
  g.data_offset_bytes = meta * bps;
  return g;
}

UsedMap FatUsedMap(const ByteSource& source) {
  const uint64_t length = source.size_bytes();
  Result<std::vector<uint8_t>> boot = source.Read(0, std::min<uint64_t>(512, length));
  if (!boot)
    return UsedMap::WholeBecause(length, "vfat",
                                 "cannot read the boot sector (" + boot.error().message + ")");
  Result<FatGeometry> parsed = ParseFatBootSector(*boot, length);
  if (!parsed)
    return UsedMap::WholeBecause(length, "vfat",
                                 "the boot sector is not valid: " + parsed.error().message);
  const FatGeometry& g = *parsed;
  const uint64_t bps = g.bytes_per_sector;
  const uint64_t cluster_bytes = g.sectors_per_cluster * bps;
  // Only the part of each FAT that numbers a cluster is read.
  const uint64_t needed = EntryByte(g.fat_bits, g.cluster_count + 2) + 2;

  UsedMap map(length);
  map.source = fmt::format("vfat: FAT{} allocation tables", g.fat_bits);
  map.Add(0, kUsedHeadBytes, UsedReason::kHead);
  map.Add(0, g.data_offset_bytes, UsedReason::kFatTables);
  // After the last whole cluster: sectors no cluster holds, then what follows the filesystem.
  const uint64_t clusters_end = g.data_offset_bytes + g.cluster_count * cluster_bytes;
  map.Add(clusters_end, length - clusters_end, UsedReason::kBeyondFilesystem);

  std::vector<bool> used(g.cluster_count + 2, false);
  for (uint32_t fat = 0; fat < g.fat_count; ++fat) {
    const uint64_t fat_at = (g.reserved_sectors + fat * g.fat_sectors) * bps;
    uint64_t next = 0;  // first entry not yet looked at
    for (uint64_t piece_at = 0; piece_at < needed; piece_at += kFatPieceBytes) {
      // Pieces overlap by 4 bytes, so that an entry straddling two of them is whole in one.
      const uint64_t piece_len = std::min(kFatPieceBytes + 4, needed - piece_at);
      Result<std::vector<uint8_t>> piece = source.Read(fat_at + piece_at, piece_len);
      if (!piece) {
        return UsedMap::WholeBecause(
            length, "vfat", fmt::format("cannot read FAT {} ({})", fat + 1, piece.error().message));
      }
      if (fat == 0 && piece_at == 0) {
        const uint32_t entry1 = Entry(g, *piece, 0, 1);
        const bool dirty = (g.fat_bits == 16 && (entry1 & kFat16CleanBit) == 0) ||
                           (g.fat_bits == 32 && (entry1 & kFat32CleanBit) == 0);
        if (dirty) {
          return UsedMap::WholeBecause(length, "vfat",
                                       "it is marked dirty, not cleanly unmounted (run fsck.vfat)");
        }
      }
      for (; next < g.cluster_count + 2; ++next) {
        const uint64_t first = EntryByte(g.fat_bits, next);
        const uint64_t last = first + (g.fat_bits == 32 ? 3 : 1);
        if (last >= piece_at + piece->size()) break;
        if (next >= 2 && Entry(g, *piece, piece_at, next) != 0) used[next] = true;
      }
    }
  }
  for (uint64_t n = 2; n < g.cluster_count + 2; ++n) {
    if (used[n])
      map.Add(g.data_offset_bytes + (n - 2) * cluster_bytes, cluster_bytes, UsedReason::kAllocated);
  }
  return map;
}

}  // namespace partalign
