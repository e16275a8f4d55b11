// SPDX-License-Identifier: GPL-3.0-or-later
// GRUB on BIOS, as its sectors name places on the disk (GRUB 2: grub-core/boot/i386/pc/boot.S,
// diskboot.S, include/grub/offsets.h, util/setup.c):
// - boot.img, in the MBR (or a partition's first sector, for a chain-loaded GRUB), holds
//   `kernel_sector`, the absolute LBA of core.img's first sector, as a u64 at 0x5C;
// - core.img's first sector is diskboot.img, which loads the rest from a blocklist of 12-byte
//   entries {u64 start LBA, u16 sectors, u16 segment} growing down from 0x200 - 12, ended by
//   an entry of 0 sectors. grub-setup fills the segments consecutively from 0x820, one 0x20
//   paragraph per 512-byte sector: a check that what was parsed is a blocklist.
// GRUB Legacy's stage1 names its next stage by a u32 at 0x44 instead; it is recognised so
// that a move under it is refused, never rewritten.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace partalign {

/// Where boot.img keeps core.img's first sector (GRUB_BOOT_MACHINE_KERNEL_SECTOR).
inline constexpr uint64_t kGrubKernelSectorOffset = 0x5C;
/// Where diskboot.img's first (highest) blocklist entry sits (0x200 - GRUB_BOOT_MACHINE_LIST_SIZE).
inline constexpr uint64_t kGrubFirstBlocklistOffset = 0x200 - 12;
inline constexpr uint64_t kGrubBlocklistEntryBytes = 12;
/// GRUB Legacy stage1: the stage2 (or stage1.5) sector, u32 at 0x44.
inline constexpr uint64_t kGrubLegacyStage2SectorOffset = 0x44;

enum class GrubGeneration { kGrub2, kLegacy };

struct GrubBootImage {
  GrubGeneration generation = GrubGeneration::kGrub2;
  /// GRUB 2: kernel_sector; GRUB Legacy: stage2_sector.
  uint64_t next_sector = 0;
  bool operator==(const GrubBootImage&) const = default;
};

/// GRUB's boot.img (or GRUB Legacy's stage1) when `sector` is one: its jump (EB 63 for GRUB 2,
/// EB 48 for Legacy) and its messages ("GRUB ", "Geom", "Hard Disk", "Read", " Error").
std::optional<GrubBootImage> ParseGrubBootImage(std::span<const uint8_t> sector);

struct GrubBlock {
  uint64_t start_sector = 0;  ///< absolute LBA
  uint16_t sectors = 0;
  uint16_t segment = 0;
  uint64_t offset_in_sector = 0;  ///< where the entry sits in diskboot's sector
  bool operator==(const GrubBlock&) const = default;
};

struct GrubDiskboot {
  std::vector<GrubBlock> blocks;  ///< in load order (the first at 0x1F4)
  bool operator==(const GrubDiskboot&) const = default;
};

/// GRUB 2's diskboot.img (core.img's first sector) when `sector` is one: its messages
/// ("loading", "Geom", "Read", " Error") and a blocklist whose segments follow each other from
/// 0x820 as grub-setup writes them, at least one entry, none over the code.
std::optional<GrubDiskboot> ParseGrubDiskboot(std::span<const uint8_t> sector);

}  // namespace partalign
