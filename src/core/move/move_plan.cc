#include "partalign/move/move_plan.h"

#include <algorithm>

#include <fmt/format.h>

namespace partalign {
namespace {

bool AddOverflows(uint64_t a, uint64_t b) { return a > UINT64_MAX - b; }

struct Interval {
  uint64_t begin = 0;
  uint64_t end = 0;
};

bool Overlaps(const Interval& a, const Interval& b) { return a.begin < b.end && b.begin < a.end; }

}  // namespace

Status ValidateMove(const MoveGeometry& move, uint64_t device_size_bytes,
                    uint64_t logical_sector_size, std::span<const TableUpdate> table) {
  const uint64_t sector = logical_sector_size;
  if (sector == 0) return MakeError("the device reports a logical sector size of 0");
  if (move.length_bytes == 0) return MakeError("the length of the move is 0");
  if (move.source_bytes == move.dest_bytes) {
    return MakeError(
        fmt::format("source and destination are both byte {}: nothing to move", move.source_bytes));
  }
  const std::pair<const char*, uint64_t> aligned[] = {{"source offset", move.source_bytes},
                                                      {"destination offset", move.dest_bytes},
                                                      {"length", move.length_bytes}};
  for (const auto& [name, value] : aligned) {
    if (value % sector != 0) {
      return MakeError(fmt::format("{} {} is not a multiple of the logical sector size ({})", name,
                                   value, sector));
    }
  }
  if (AddOverflows(move.source_bytes, move.length_bytes) ||
      move.source_bytes + move.length_bytes > device_size_bytes) {
    return MakeError(fmt::format("source range {}+{} ends beyond the end of the device ({} bytes)",
                                 move.source_bytes, move.length_bytes, device_size_bytes));
  }
  if (AddOverflows(move.dest_bytes, move.length_bytes) ||
      move.dest_bytes + move.length_bytes > device_size_bytes) {
    return MakeError(
        fmt::format("destination range {}+{} ends beyond the end of the device ({} bytes)",
                    move.dest_bytes, move.length_bytes, device_size_bytes));
  }
  if (move.chunk_bytes < kMoveChunkAlignBytes || move.chunk_bytes > kMaxMoveChunkBytes ||
      move.chunk_bytes % kMoveChunkAlignBytes != 0 || move.chunk_bytes % sector != 0) {
    return MakeError(fmt::format(
        "chunk size {} must be a multiple of 4096 and of the sector size, between 4 KiB and {}",
        move.chunk_bytes, FormatSize(kMaxMoveChunkBytes)));
  }
  if (move.chunks_per_batch == 0) return MakeError("chunks per batch must be at least 1");
  if (move.ring_batches < 2) return MakeError("the journal ring needs at least 2 batches");

  // Table sectors may lie in the part of the source the move vacates (a DOS extended
  // partition's head EBR moving up with its first logical partition), never in the
  // destination: the forward pass writes only the destination, and the table is written after
  // the data is moved; a rollback puts the old table bytes back (which are the source's data
  // there) before the rollback pass rewrites the same data (docs/mover.md, I7).
  const Interval written{move.dest_bytes, move.dest_bytes + move.length_bytes};
  std::vector<Interval> seen;
  for (const TableUpdate& update : table) {
    const uint64_t length = update.old_bytes.size();
    if (length == 0 || update.new_bytes.size() != length) {
      return MakeError(
          fmt::format("table update at byte {}: old and new bytes must be non-empty and equally "
                      "long ({} vs {})",
                      update.offset_bytes, update.old_bytes.size(), update.new_bytes.size()));
    }
    if (update.offset_bytes % sector != 0 || length % sector != 0) {
      return MakeError(fmt::format(
          "table update at byte {} (+{}) is not aligned to the logical sector size ({})",
          update.offset_bytes, length, sector));
    }
    if (AddOverflows(update.offset_bytes, length) ||
        update.offset_bytes + length > device_size_bytes) {
      return MakeError(fmt::format("table update at byte {} (+{}) ends beyond the device",
                                   update.offset_bytes, length));
    }
    const Interval range{update.offset_bytes, update.offset_bytes + length};
    if (Overlaps(range, written)) {
      return MakeError(fmt::format(
          "table update at byte {} (+{}) overlaps the destination {}..{}: table sectors must lie "
          "outside the partition's new place",
          update.offset_bytes, length, written.begin, written.end));
    }
    for (const Interval& other : seen) {
      if (Overlaps(range, other)) {
        return MakeError(
            fmt::format("table updates at bytes {} and {} overlap", other.begin, range.begin));
      }
    }
    seen.push_back(range);
  }
  return {};
}

uint64_t ChunkCount(const MoveGeometry& move) {
  return (move.length_bytes + move.chunk_bytes - 1) / move.chunk_bytes;
}

ChunkExtent ChunkExtentOf(const MoveGeometry& move, uint64_t chunk) {
  const uint64_t position = chunk * move.chunk_bytes;
  return {position, std::min(move.chunk_bytes, move.length_bytes - position)};
}

bool Descending(const Segment& segment) { return segment.dest_base > segment.source_base; }

Segment ForwardSegment(const MoveGeometry& move) {
  return {move.source_bytes, move.dest_bytes, 0, ChunkCount(move)};
}

Segment RollbackSegment(const MoveGeometry& move, uint64_t forward_done) {
  const Segment forward = ForwardSegment(move);
  // The forward pass did the highest chunks when descending, the lowest when ascending.
  const uint64_t first = Descending(forward) ? forward.chunk_count - forward_done : 0;
  return {move.dest_bytes, move.source_bytes, first, forward_done};
}

uint64_t ChunkAt(const Segment& segment, uint64_t index) {
  return Descending(segment) ? segment.first_chunk + segment.chunk_count - 1 - index
                             : segment.first_chunk + index;
}

uint64_t BatchCount(const Segment& segment, uint32_t chunks_per_batch) {
  return (segment.chunk_count + chunks_per_batch - 1) / chunks_per_batch;
}

std::optional<uint64_t> FirstOverwriter(const MoveGeometry& move, const Segment& segment,
                                        uint64_t index) {
  if (segment.chunk_count == 0) return std::nullopt;
  const ChunkExtent chunk = ChunkExtentOf(move, ChunkAt(segment, index));
  const uint64_t segment_begin = segment.first_chunk * move.chunk_bytes;
  const uint64_t segment_end =
      std::min((segment.first_chunk + segment.chunk_count) * move.chunk_bytes, move.length_bytes);
  const uint64_t lo = chunk.position_bytes;
  const uint64_t hi = lo + chunk.length_bytes;
  if (Descending(segment)) {
    // A write of position q lands on the source of position q + shift. The first writer (the
    // highest chunk, as the order descends) is the one holding position hi - shift - 1.
    const uint64_t shift = segment.dest_base - segment.source_base;
    if (hi < shift + 1 || hi - shift - 1 < segment_begin) return std::nullopt;
    const uint64_t writer_chunk = (hi - shift - 1) / move.chunk_bytes;
    return segment.first_chunk + segment.chunk_count - 1 - writer_chunk;
  }
  // Ascending: a write of position q lands on the source of position q - shift; the first writer
  // (the lowest chunk) is the one holding position lo + shift.
  const uint64_t shift = segment.source_base - segment.dest_base;
  if (lo + shift >= segment_end) return std::nullopt;
  return (lo + shift) / move.chunk_bytes - segment.first_chunk;
}

bool NeedsSavedCopy(const MoveGeometry& move, const Segment& segment, uint64_t index) {
  std::optional<uint64_t> writer = FirstOverwriter(move, segment, index);
  if (!writer) return false;
  return BatchOf(*writer, move.chunks_per_batch) <
         BatchOf(index, move.chunks_per_batch) + move.ring_batches;
}

}  // namespace partalign
