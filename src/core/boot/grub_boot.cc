// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/boot/grub_boot.h"

#include <algorithm>
#include <string_view>

#include "partalign/util/byte_order.h"

namespace partalign {
namespace {

// Where `text` (NUL included when it ends with one) first occurs in `bytes` from `from`;
// nullopt when it does not.
std::optional<size_t> FindGrubText(std::span<const uint8_t> bytes, std::string_view text,
                                   size_t from = 0) {
  if (from > bytes.size()) return std::nullopt;
  auto it = std::search(bytes.begin() + static_cast<ptrdiff_t>(from), bytes.end(), text.begin(),
                        text.end(), [](uint8_t b, char c) { return b == static_cast<uint8_t>(c); });
  if (it == bytes.end()) return std::nullopt;
  return static_cast<size_t>(it - bytes.begin());
}

// The first segment grub-setup gives a block: GRUB_BOOT_I386_PC_KERNEL_SEG (0x800) + one
// 512-byte sector (0x20 paragraphs): diskboot itself is loaded at 0x800:0.
constexpr uint16_t kGrubFirstSegment = 0x820;
constexpr uint16_t kParagraphsPerSector = 512 >> 4;
// The BIOS boot area ends with the partition table at 0x1B8 (disk signature) in an MBR.
constexpr size_t kMbrCodeEnd = 0x1B8;

}  // namespace

std::optional<GrubBootImage> ParseGrubBootImage(std::span<const uint8_t> sector) {
  if (sector.size() < 512 || sector[0] != 0xEB) return std::nullopt;
  std::span<const uint8_t> code = sector.first(kMbrCodeEnd);
  // The messages are one block of NUL-terminated strings in both generations.
  std::optional<size_t> grub =
      FindGrubText(code, std::string_view("GRUB \0Geom\0Hard Disk\0Read\0 Error", 32));
  if (!grub) return std::nullopt;
  if (sector[1] == 0x63) {
    if (*grub < kGrubKernelSectorOffset + 8) return std::nullopt;
    return GrubBootImage{GrubGeneration::kGrub2, *Le<uint64_t>(sector, kGrubKernelSectorOffset)};
  }
  if (sector[1] == 0x48) {
    return GrubBootImage{GrubGeneration::kLegacy,
                         *Le<uint32_t>(sector, kGrubLegacyStage2SectorOffset)};
  }
  return std::nullopt;
}

std::optional<GrubDiskboot> ParseGrubDiskboot(std::span<const uint8_t> sector) {
  if (sector.size() < 512) return std::nullopt;
  std::span<const uint8_t> s = sector.first(512);
  std::optional<size_t> loading = FindGrubText(s, std::string_view("loading\0", 8));
  if (!loading) return std::nullopt;
  std::optional<size_t> error =
      FindGrubText(s, std::string_view("Geom\0Read\0 Error\0", 17), *loading);
  if (!error) return std::nullopt;
  const size_t code_end = *error + 17;
  GrubDiskboot out;
  uint16_t expected_segment = kGrubFirstSegment;
  for (uint64_t at = kGrubFirstBlocklistOffset; at >= code_end; at -= kGrubBlocklistEntryBytes) {
    const uint16_t sectors = *Le<uint16_t>(s, at + 8);
    if (sectors == 0) break;
    GrubBlock block{*Le<uint64_t>(s, at), sectors, *Le<uint16_t>(s, at + 10), at};
    if (block.start_sector == 0 || block.segment != expected_segment) return std::nullopt;
    const uint32_t next = uint32_t{expected_segment} + uint32_t{sectors} * kParagraphsPerSector;
    if (next > 0xFFFF) return std::nullopt;
    expected_segment = static_cast<uint16_t>(next);
    out.blocks.push_back(block);
    if (at < code_end + kGrubBlocklistEntryBytes) break;
  }
  if (out.blocks.empty()) return std::nullopt;
  return out;
}

}  // namespace partalign
