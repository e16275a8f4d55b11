// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/table/table_sector_size.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace partalign {
namespace {

// UEFI 2.x, 5.3.2: the GPT header begins with the signature "EFI PART" and holds its own LBA
// (MyLBA) at byte 24, which is 1 for the primary header.
constexpr char kSectorSizeGptSignature[8] = {'E', 'F', 'I', ' ', 'P', 'A', 'R', 'T'};
constexpr size_t kGptMyLbaOffset = 24;

// MBR: four 16-byte entries at byte 446, boot signature 0x55 0xAA at byte 510.
constexpr size_t kSectorSizeMbrEntriesOffset = 446;
constexpr size_t kMbrEntrySize = 16;
constexpr uint8_t kMbrTypeProtective = 0xEE;

uint64_t LeAt(std::span<const uint8_t> bytes, size_t offset, size_t width) {
  uint64_t value = 0;
  for (size_t i = 0; i < width; ++i) value |= static_cast<uint64_t>(bytes[offset + i]) << (8 * i);
  return value;
}

bool HasGptHeaderAt(std::span<const uint8_t> head, uint64_t offset) {
  if (offset + kGptMyLbaOffset + 8 > head.size()) return false;
  return std::memcmp(head.data() + offset, kSectorSizeGptSignature,
                     sizeof(kSectorSizeGptSignature)) == 0 &&
         LeAt(head, offset + kGptMyLbaOffset, 8) == 1;
}

}  // namespace

TableSectorSizeGuess GuessTableSectorSize(std::span<const uint8_t> head,
                                          uint64_t logical_sector_size, uint64_t size_bytes) {
  TableSectorSizeGuess guess;
  // GPT: the primary header is at LBA 1 of whatever sector size it was written with.
  for (uint64_t ss = 512; ss <= 64 * 1024; ss *= 2) {
    if (!HasGptHeaderAt(head, ss)) continue;
    guess.label = LabelType::kGpt;
    guess.sector_size = ss;
    guess.reason = ss == logical_sector_size
                       ? fmt::format("GPT header found at LBA 1 (byte {})", ss)
                       : fmt::format(
                             "GPT header found at byte {}, which is LBA 1 only for "
                             "{}-byte sectors",
                             ss, ss);
    return guess;
  }
  if (head.size() < 512 || head[510] != 0x55 || head[511] != 0xAA) return guess;

  uint64_t max_end_lba = 0;
  bool protective = false;
  bool any = false;
  for (size_t i = 0; i < 4; ++i) {
    size_t entry = kSectorSizeMbrEntriesOffset + i * kMbrEntrySize;
    uint8_t type = head[entry + 4];
    uint64_t start = LeAt(head, entry + 8, 4);
    uint64_t count = LeAt(head, entry + 12, 4);
    if (type == 0 || count == 0) continue;
    any = true;
    if (type == kMbrTypeProtective) protective = true;
    // An extended partition's extent covers its logical partitions, so primaries are enough.
    max_end_lba = std::max(max_end_lba, start + count);
  }
  if (protective) {
    guess.label = LabelType::kGpt;
    guess.reason = "protective MBR, but no GPT header at LBA 1 for any sector size";
    return guess;
  }
  if (!any) return guess;  // a boot sector or an empty MBR: nothing to infer from
  guess.label = LabelType::kDos;
  if (max_end_lba * logical_sector_size <= size_bytes) {
    guess.sector_size = logical_sector_size;
    guess.reason =
        fmt::format("all MBR entries fit the disk with {}-byte sectors", logical_sector_size);
    return guess;
  }
  for (uint64_t ss = 512; ss < logical_sector_size; ss *= 2) {
    if (max_end_lba * ss <= size_bytes) {
      guess.sector_size = ss;
      guess.reason = fmt::format(
          "MBR entries end at LBA {}, beyond the disk with {}-byte sectors but inside it with "
          "{}-byte sectors",
          max_end_lba, logical_sector_size, ss);
      return guess;
    }
  }
  guess.reason =
      fmt::format("MBR entries end at LBA {}, beyond the disk at any sector size", max_end_lba);
  return guess;
}

std::optional<uint64_t> SectorSizeFromContents(const std::vector<SectorSizeEvidence>& evidence,
                                               uint64_t current) {
  size_t at_current = 0;
  for (const SectorSizeEvidence& e : evidence) {
    if (e.sector_size == current) at_current = e.signatures;
  }
  std::optional<uint64_t> best;
  size_t best_signatures = at_current;
  for (const SectorSizeEvidence& e : evidence) {
    if (e.sector_size != current && e.signatures > best_signatures) {
      best = e.sector_size;
      best_signatures = e.signatures;
    }
  }
  return best;
}

}  // namespace partalign
