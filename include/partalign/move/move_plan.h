// SPDX-License-Identifier: GPL-3.0-or-later
// The geometry of a journaled data move: which chunks exist, in which order they are copied,
// which batch and journal slot each one uses, and which ones need a saved copy in the journal
// before their write. Pure arithmetic; docs/mover.md explains why each rule keeps every byte
// recoverable.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "partalign/used/used_map.h"
#include "partalign/util/byte_extent.h"
#include "partalign/util/result.h"
#include "partalign/util/units.h"

namespace partalign {

/// Chunk of the copy. Large enough that per-request overhead vanishes (sfdisk --move-data uses
/// about 1 MiB, alignment-heuristics.md §3.8; it took hours on small steps, util-linux#848),
/// small enough that a batch of them fits comfortably in memory.
inline constexpr uint64_t kDefaultMoveChunkBytes = 4 * kMiB;
/// Chunks are multiples of 4 KiB so that every journal offset is 4 KiB-aligned: O_DIRECT on the
/// journal's file system may require its block size (ext4 on a 4Kn disk does).
inline constexpr uint64_t kMoveChunkAlignBytes = 4096;
inline constexpr uint64_t kMaxMoveChunkBytes = 256 * kMiB;
/// Chunks per batch: one journal fdatasync and one device flush per batch.
inline constexpr uint32_t kDefaultChunksPerBatch = 4;
/// Batches whose saved copies the journal ring holds at once. Batch b may be journaled once batch
/// b - ring_batches is committed, so up to this many batches are in flight between their saved
/// copy and their commit: 64 MiB, enough to hide flush latencies of tens of milliseconds. A
/// ring of 8 (128 MiB) moved no faster, loaded or not, and its larger journal file cost its
/// creation and its removal (docs/mover.md §10).
inline constexpr uint32_t kDefaultRingBatches = 4;

/// A move whose shift is below this and that copies at most kSmallCopyBytes (below) gets
/// small chunks and batches (SizedForItsCopy). Below this shift the flush-ordered way's chunks
/// are below 1 MiB whatever the move's chunk (docs/mover.md §5a), so the chunk is free to be
/// chosen for the copy alone; from it up, 4 MiB chunks let that way take up to 4 MiB ones.
inline constexpr uint64_t kSmallShiftBytes = 4 * kMiB;
/// See kSmallShiftBytes: on the test machine 4 MiB batches of 1 MiB chunks moved a 1 GiB
/// partition 25% full (293 MiB copied) faster than 16 MiB batches of 4 MiB chunks (308 MiB
/// copied), and a full one no faster (slower beside a compile), so the geometry changes between
/// the two (docs/mover.md §10).
inline constexpr uint64_t kSmallCopyBytes = 512 * kMiB;
inline constexpr uint64_t kSmallMoveChunkBytes = 1 * kMiB;
inline constexpr uint32_t kSmallMoveChunksPerBatch = 4;
inline constexpr uint32_t kSmallMoveRingBatches = 8;

/// Which chunks of the range a move copies: every one (the default), or the runs a used map
/// selected (docs/mover.md §3). The mover works on **copied chunks**: the k-th copied chunk
/// (its ordinal k) is what "chunk k" means in the journal, the digest table and the ring.
class CopySet {
 public:
  /// Every chunk.
  CopySet() = default;
  /// Only the chunks of `runs`: sorted, disjoint, non-empty runs (touching runs are merged).
  /// Empty `runs` would copy nothing and are refused, as are runs beyond `total_chunks`.
  static Result<CopySet> FromRuns(std::vector<ChunkRun> runs, uint64_t total_chunks);

  bool all() const { return runs_.empty(); }
  /// The runs; empty when every chunk is copied.
  const std::vector<ChunkRun>& runs() const { return runs_; }
  /// Copied chunks, of a range of `total_chunks`.
  uint64_t Count(uint64_t total_chunks) const { return all() ? total_chunks : count_; }
  /// The chunk (index from the range start) of copied chunk `ordinal`.
  uint64_t ChunkOf(uint64_t ordinal) const;
  /// The number of copied chunks whose index is below `chunk` (the ordinal of the first copied
  /// chunk at or after it).
  uint64_t OrdinalsBelow(uint64_t chunk) const;

  bool operator==(const CopySet& other) const { return runs_ == other.runs_; }

 private:
  std::vector<ChunkRun> runs_;
  std::vector<uint64_t> first_ordinal_;  ///< ordinal of each run's first chunk
  uint64_t count_ = 0;
};

/// A move of `length_bytes` from device offset `source_bytes` to `dest_bytes`, and how it is cut
/// into chunks and batches. Positions below are relative to the start of the range.
struct MoveGeometry {
  uint64_t source_bytes = 0;
  uint64_t dest_bytes = 0;
  uint64_t length_bytes = 0;
  uint64_t chunk_bytes = kDefaultMoveChunkBytes;
  uint32_t chunks_per_batch = kDefaultChunksPerBatch;
  uint32_t ring_batches = kDefaultRingBatches;
  /// The chunks copied; the others hold nothing the partition's contents use.
  CopySet copy;
  bool operator==(const MoveGeometry&) const = default;
};

/// `move` with the chunk, batches and ring its shift and copy call for, and, with `used` (the
/// partition's used map; none for a move of every byte), the copy set the used map selects at
/// that chunk. A shift below kSmallShiftBytes copying at most kSmallCopyBytes: chunks of 1 MiB
/// (the used map selects them at that grain, so fewer bytes are copied), 4 in a batch, a ring of
/// 8 batches (32 MiB): the pipeline fills and drains in 4 MiB instead of 16 MiB, and the journal
/// file is half the size. Unless the finer grain leaves more bytes of the destination outside
/// the source than it saves in copies (DestinationOutsideSource: read and kept in the journal;
/// at most the shift at either grain). Every other move keeps the defaults above (4 MiB chunks,
/// batches of 4, a ring of 4).
MoveGeometry SizedForItsCopy(MoveGeometry move, const std::optional<UsedMap>& used);

/// Raw bytes written to the device when the move completes (`new_bytes`) or rolled back
/// (`old_bytes`): the partition-table sectors (MBR, GPT headers and entry arrays, EBRs) before
/// and after the change, and the records outside the table that name the partition's place
/// (a boot sector's hidden sectors, docs/boot-records.md). The caller (apply) computes them; the
/// mover only writes them.
struct TableUpdate {
  uint64_t offset_bytes = 0;
  std::vector<uint8_t> old_bytes;
  std::vector<uint8_t> new_bytes;
  /// A record inside the moved data, at its new place: its old bytes are the data the move
  /// puts there, so it lies inside the destination, in copied chunks. It is written with the
  /// table, once the data is moved and verified; a rollback puts the old bytes back only where
  /// the new ones were written (before the table write, the place holds other data).
  bool in_data = false;
  /// What the destination held before the move where the move writes bytes a rollback does not
  /// write back (DestinationOutsideSource): never written by the table write; a rollback
  /// puts it back once every chunk is back at its source, so that the rolled-back disk holds
  /// every byte the move wrote outside its source range as it was (docs/mover.md §4). Its new
  /// bytes equal its old ones.
  bool restore_only = false;
  bool operator==(const TableUpdate&) const = default;
};

/// At most this many ranges of the destination outside the source are kept apart: more (a
/// fragmented used map, moved beyond its source) are joined over their smallest gaps, which
/// holds a few unwritten bytes more in the journal and keeps its header small.
inline constexpr size_t kMaxDestinationOutsideSourceRanges = 64;
/// The most bytes of the destination outside the source the journal keeps (restore_only
/// updates, held in memory and twice in the journal): a move that would write more outside its
/// source (one moved beyond it, with more used bytes than this) is refused, as its rollback
/// could not put them back.
inline constexpr uint64_t kMaxDestinationOutsideSourceBytes = 64 * kMiB;

/// The bytes the move writes outside its source range, which a rollback does not write back:
/// the destinations of the copied chunks minus the source range, sorted, disjoint, at most
/// kMaxDestinationOutsideSourceRanges (joined over gaps the move does not write). Inside the
/// source range, a copied chunk's destination that no copied chunk's source covers is a block
/// the used map calls unused: a rollback leaves it as the forward pass wrote it, as a completed
/// move leaves the unused blocks of its destination as they were; it holds no data. So a shift
/// writes at most the shift outside its source, however fragmented its used map. Absolute
/// device offsets.
std::vector<ByteExtent> DestinationOutsideSource(const MoveGeometry& move);

/// DestinationOutsideSource, or the refusal of a move whose bytes there exceed
/// kMaxDestinationOutsideSourceBytes, naming them: its rollback could not put them back. The
/// mover checks it before it writes anything (and reads those ranges); `move` and apply before
/// they ask (CheckDestinationOutsideSource).
Result<std::vector<ByteExtent>> KeptDestinationOutsideSource(const MoveGeometry& move);
Status CheckDestinationOutsideSource(const MoveGeometry& move);

/// Checks a move against the device: sector alignment, bounds, chunk size, and table updates that
/// are sector-aligned, equally long, inside the device and disjoint from the destination range
/// and from each other (they may lie in the part of the source the move vacates); restore_only
/// updates lie in the destination and may overlap in_data ones. Errors name
/// the offending value.
Status ValidateMove(const MoveGeometry& move, uint64_t device_size_bytes,
                    uint64_t logical_sector_size, std::span<const TableUpdate> table = {});

/// How far the move shifts its bytes, either way.
uint64_t ShiftBytes(const MoveGeometry& move);
/// Chunks of the whole range, copied or not.
uint64_t RangeChunkCount(const MoveGeometry& move);
/// Copied chunks: what the passes, the digest table and the ring count.
uint64_t ChunkCount(const MoveGeometry& move);
/// Bytes of the copied chunks.
uint64_t CopiedBytes(const MoveGeometry& move);

/// Where copied chunk `chunk` (its ordinal) lies, relative to the range start.
struct ChunkExtent {
  uint64_t position_bytes = 0;
  uint64_t length_bytes = 0;
};
ChunkExtent ChunkExtentOf(const MoveGeometry& move, uint64_t chunk);

/// One pass of the mover over consecutive copied chunks (ordinals): the move itself, or the
/// rollback of its done part (the same chunks moved back). A chunk at position p is read at
/// source_base + p and written at dest_base + p.
struct Segment {
  uint64_t source_base = 0;
  uint64_t dest_base = 0;
  uint64_t first_chunk = 0;
  uint64_t chunk_count = 0;
  bool operator==(const Segment&) const = default;
};

/// Moving towards higher offsets copies from the highest chunk down, so that every chunk is read
/// before any write can reach it (the same rule as sfdisk's backward copy).
bool Descending(const Segment& segment);

Segment ForwardSegment(const MoveGeometry& move);
/// Moves back the first `forward_done` chunks the forward segment processed.
Segment RollbackSegment(const MoveGeometry& move, uint64_t forward_done);

/// The copied chunk (ordinal) processed at step `index` of `segment`.
uint64_t ChunkAt(const Segment& segment, uint64_t index);

uint64_t BatchCount(const Segment& segment, uint32_t chunks_per_batch);
inline uint64_t BatchOf(uint64_t index, uint32_t chunks_per_batch) {
  return index / chunks_per_batch;
}

/// The first step of `segment` whose write overwrites part of the source of step `index`, or
/// nullopt when no write of the segment ever does. Never smaller than `index`.
std::optional<uint64_t> FirstOverwriter(const MoveGeometry& move, const Segment& segment,
                                        uint64_t index);

/// True when step `index` must have a saved copy in the journal before the write that overwrites
/// its source: that write can happen before the step's own batch is committed (it is in the same
/// batch or one of the next ring_batches - 1 batches).
bool NeedsSavedCopy(const MoveGeometry& move, const Segment& segment, uint64_t index);

}  // namespace partalign
