// SPDX-License-Identifier: GPL-3.0-or-later
// Which logical sector size a partition table was written for, from its on-disk bytes.
//
// A 4K-translating USB bridge writes every LBA in 4096-byte units; the same disk on SATA reads
// them as 512-byte units (alignment-heuristics.md §1.3). The GPT header says it plainly: it sits
// at LBA 1, i.e. at byte 512 or byte 4096. An MBR says it only when its entries overflow the
// disk at the current sector size but fit at another.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "partalign/topology/device.h"

namespace partalign {

/// How many bytes from the start of the disk the guess needs (covers a GPT header at LBA 1 for
/// sector sizes up to 64 KiB).
inline constexpr uint64_t kTableHeadBytes = 128 * 1024;

struct TableSectorSizeGuess {
  LabelType label = LabelType::kNone;
  std::optional<uint64_t> sector_size;
  std::string reason;  ///< one sentence with the evidence
};

/// `head` is the first kTableHeadBytes (or fewer, for a smaller disk) of the target.
TableSectorSizeGuess GuessTableSectorSize(std::span<const uint8_t> head,
                                          uint64_t logical_sector_size, uint64_t size_bytes);

/// What a DOS table read with one sector size points at: how many of its (non-extended)
/// partitions lie inside the disk, and how many of those start with a signature libblkid
/// knows (a filesystem, swap, LUKS, ...).
struct SectorSizeEvidence {
  uint64_t sector_size = 512;
  size_t partitions = 0;
  size_t signatures = 0;
};

/// A DOS table whose entries fit the disk at several sector sizes says nothing about the one
/// it was written for (a 4096-byte table read with 512-byte sectors points at 1/8 of every
/// place, still inside the disk). Its partitions' contents do: the size at which strictly more
/// partitions start with a signature than at `current`, or nullopt when `current` is as good
/// as any (or no size finds one).
std::optional<uint64_t> SectorSizeFromContents(const std::vector<SectorSizeEvidence>& evidence,
                                               uint64_t current);

}  // namespace partalign
