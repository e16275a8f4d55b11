// SPDX-License-Identifier: GPL-3.0-or-later
// The bytes of a partition that its contents use: sorted, merged byte ranges, each with the
// reasons it is used (allocated blocks, a backup superblock, the journal, ...), rounded to the
// mover's chunks. The mover copies only these chunks (docs/mover.md §3, docs/used-map.md);
// the providers that fill a map from a filesystem's own free-space information live at the I/O
// edge (src/io/used/), the byte parsers they share in src/core/used/.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "partalign/util/units.h"

namespace partalign {

/// Why a range is copied. A range may have several reasons (their bits are OR'ed on merging).
enum class UsedReason : uint8_t {
  kWhole,             ///< the contents are not understood (or not trusted): everything
  kHead,              ///< the first 64 KiB, always: boot code, superblocks, labels
  kBeyondFilesystem,  ///< partition bytes after the filesystem's last block
  kSuperblock,        ///< primary and backup superblocks, group descriptors, AG headers
  kAllocated,         ///< blocks, clusters or extents the filesystem's own map marks in use
  kUninitGroup,       ///< ext4 groups whose bitmap is not initialised: their metadata
  kJournal,           ///< the filesystem's journal or log
  kFatTables,         ///< the reserved sectors, the FATs and the FAT12/16 root directory
  kSwapHeader,        ///< the first page of a swap area
  kLvmMetadata,       ///< an LVM2 PV's label and metadata areas
  kLvmExtents,        ///< physical extents allocated to a logical volume
  kBtrfsDevExtents,   ///< btrfs device extents (chunks allocated on this device)
};
inline constexpr size_t kUsedReasonCount = 12;

/// "allocated", "backup-superblock", ...: stable names for JSON and the journal header.
const char* ToString(UsedReason reason);

/// Bit of `reason` in UsedRange::reasons.
constexpr uint32_t ReasonBit(UsedReason reason) { return 1u << static_cast<uint32_t>(reason); }

/// The first 64 KiB of every partition are copied whatever its map says: they hold the boot
/// sector, the primary superblock of most filesystems (ext: byte 1024, XFS: 0, btrfs: 64 KiB is
/// the next byte), and block 0 of an ext fs with 1 KiB blocks is in no bitmap.
inline constexpr uint64_t kUsedHeadBytes = 64 * kKiB;

struct UsedRange {
  uint64_t offset_bytes = 0;  ///< from the start of the partition
  uint64_t length_bytes = 0;
  uint32_t reasons = 0;  ///< ReasonBit()s
  bool operator==(const UsedRange&) const = default;
};

/// A run of consecutive chunks of the mover (chunk m covers bytes [m·c, (m+1)·c)).
struct ChunkRun {
  uint64_t first_chunk = 0;
  uint64_t chunk_count = 0;
  bool operator==(const ChunkRun&) const = default;
};

/// The used bytes of a partition of `length_bytes`. Build it with Add(); ranges() is always
/// sorted and merged (overlapping or touching ranges become one, with both reasons).
class UsedMap {
 public:
  explicit UsedMap(uint64_t length_bytes = 0) : length_bytes_(length_bytes) {}
  /// Everything used (kWhole), with a note saying why.
  static UsedMap Whole(uint64_t length_bytes, std::string note);
  /// What a provider answers when it cannot (or must not) tell the used bytes of `type`:
  /// everything, noted as "TYPE: WHY; the whole partition is copied".
  static UsedMap WholeBecause(uint64_t length_bytes, const std::string& type,
                              const std::string& why);

  /// Marks [offset, offset + length) used; the part beyond the partition is ignored (a
  /// provider never needs to clip), and so is an empty range.
  void Add(uint64_t offset_bytes, uint64_t length_bytes, UsedReason reason);
  /// Something the user should know ("ext4 needs recovery: the whole partition is copied").
  void AddNote(std::string note) { notes_.push_back(std::move(note)); }

  uint64_t length_bytes() const { return length_bytes_; }
  const std::vector<UsedRange>& ranges() const;
  uint64_t used_bytes() const;
  /// Bytes marked for each reason (the union of that reason's ranges); 0 for unused reasons.
  std::array<uint64_t, kUsedReasonCount> BytesByReason() const;
  /// True when every byte is used (nothing to skip).
  bool IsWhole() const { return used_bytes() == length_bytes_; }
  const std::vector<std::string>& notes() const { return notes_; }

  /// What filled the map ("ext4: libext2fs block bitmap"), for reports and the journal.
  std::string source;

 private:
  void Normalize() const;

  uint64_t length_bytes_ = 0;
  std::vector<std::string> notes_;
  // Ranges as added, per reason; normalised lazily into merged_.
  std::array<std::vector<UsedRange>, kUsedReasonCount> added_;
  mutable std::vector<UsedRange> merged_;
  mutable bool dirty_ = false;
};

/// The chunks of `chunk_bytes` that hold any used byte: sorted runs, merged. A chunk that holds
/// a single used byte is copied whole ("rounded to chunks").
std::vector<ChunkRun> ChunkRunsOf(const UsedMap& map, uint64_t chunk_bytes);

/// Chunks in `runs`.
uint64_t ChunkTotal(const std::vector<ChunkRun>& runs);

}  // namespace partalign
