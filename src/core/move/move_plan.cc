// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/move/move_plan.h"

#include <algorithm>

#include <fmt/format.h>

namespace partalign {
namespace {

bool AddOverflows(uint64_t a, uint64_t b) { return a > UINT64_MAX - b; }

struct ByteInterval {
  uint64_t begin = 0;
  uint64_t end = 0;
};

bool Overlaps(const ByteInterval& a, const ByteInterval& b) {
  return a.begin < b.end && b.begin < a.end;
}

}  // namespace

std::vector<ByteExtent> DestinationOutsideSource(const MoveGeometry& move) {
  if (move.length_bytes == 0) return {};
  // The copied runs, relative to the range start: the forward pass writes them at the
  // destination, a rollback pass rewrites them at the source - and nothing else.
  std::vector<ByteInterval> runs;
  if (move.copy.all()) {
    runs.push_back({0, move.length_bytes});
  } else {
    for (const ChunkRun& run : move.copy.runs()) {
      runs.push_back(
          {run.first_chunk * move.chunk_bytes,
           std::min(move.length_bytes, (run.first_chunk + run.chunk_count) * move.chunk_bytes)});
    }
  }
  // Each destination run minus the source range. Inside the range, what no copied chunk's
  // source covers is a block the used map says the partition does not use: the forward pass
  // leaves such blocks at the destination as they were, a rollback those at the source as the
  // forward pass wrote them. Neither holds data (docs/mover.md §4).
  const ByteInterval source{move.source_bytes, move.source_bytes + move.length_bytes};
  std::vector<ByteInterval> out;
  for (const ByteInterval& run : runs) {
    const ByteInterval written{move.dest_bytes + run.begin, move.dest_bytes + run.end};
    if (written.begin < source.begin) {
      out.push_back({written.begin, std::min(written.end, source.begin)});
    }
    if (written.end > source.end) out.push_back({std::max(written.begin, source.end), written.end});
  }
  std::sort(out.begin(), out.end(),
            [](const ByteInterval& a, const ByteInterval& b) { return a.begin < b.begin; });
  std::vector<ByteInterval> merged;
  for (const ByteInterval& i : out) {
    if (!merged.empty() && merged.back().end == i.begin) {
      merged.back().end = i.end;
    } else {
      merged.push_back(i);
    }
  }
  out = std::move(merged);
  // Too many ranges: join the two neighbours with the smallest gap between them, again. The
  // ranges lie on one side of the source range (a destination is as long as its source), so
  // the bytes of a gap are outside it and unwritten: their old bytes are what they hold.
  while (out.size() > kMaxDestinationOutsideSourceRanges) {
    size_t best = 0;
    for (size_t i = 1; i + 1 < out.size(); ++i) {
      if (out[i + 1].begin - out[i].end < out[best + 1].begin - out[best].end) best = i;
    }
    out[best].end = out[best + 1].end;
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
  std::vector<ByteExtent> extents;
  for (const ByteInterval& i : out) extents.push_back({i.begin, i.end - i.begin});
  return extents;
}

Result<std::vector<ByteExtent>> KeptDestinationOutsideSource(const MoveGeometry& move) {
  std::vector<ByteExtent> ranges = DestinationOutsideSource(move);
  const uint64_t total = TotalBytes(ranges);
  if (total <= kMaxDestinationOutsideSourceBytes) return ranges;
  // FormatSize rounds to two decimals only when the size is not exact in its unit: a few KiB
  // over the limit would read "writes 64.00 MiB ... at most 64 MiB", so the bytes go with it.
  std::string written = FormatSize(total);
  if (written.find('.') != std::string::npos) written += fmt::format(" ({} bytes)", total);
  return MakeError(fmt::format(
      "the move writes {} outside its source (byte {} to {}), which a rollback must put back; "
      "the journal keeps at most {} of them: the move is refused; nothing was written",
      written, ranges.front().offset_bytes, ranges.back().end(),
      FormatSize(kMaxDestinationOutsideSourceBytes)));
}

Status CheckDestinationOutsideSource(const MoveGeometry& move) {
  Result<std::vector<ByteExtent>> kept = KeptDestinationOutsideSource(move);
  if (!kept) return kept.error();
  return {};
}

Status ValidateMove(const MoveGeometry& move, uint64_t device_size_bytes,
                    uint64_t logical_sector_size, std::span<const TableUpdate> table) {
  const uint64_t sector = logical_sector_size;
  if (sector == 0) return MakeError("the device reports a logical sector size of 0");
  // A step that moves no data (length 0, one offset) writes only its updates: a shrink's
  // changes inside a partition and its table (docs/mover.md, "Steps that move no data").
  const bool moves_data = move.length_bytes != 0;
  if (!moves_data && move.source_bytes != move.dest_bytes) {
    return MakeError(fmt::format("a move of 0 bytes from byte {} to byte {}", move.source_bytes,
                                 move.dest_bytes));
  }
  if (moves_data && move.source_bytes == move.dest_bytes) {
    return MakeError(
        fmt::format("source and destination are both byte {}: nothing to move", move.source_bytes));
  }
  if (!moves_data && !move.copy.all()) {
    return MakeError("a step that moves no data has no chunks to copy");
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
  if (!move.copy.all()) {
    const ChunkRun& last = move.copy.runs().back();
    if (last.first_chunk + last.chunk_count > RangeChunkCount(move)) {
      return MakeError(fmt::format(
          "the chunks to copy end at chunk {}, beyond the {} chunks of {} bytes in the range",
          last.first_chunk + last.chunk_count, RangeChunkCount(move), move.chunk_bytes));
    }
  }

  // Table sectors may lie in the part of the source the move vacates (a DOS extended
  // partition's head EBR moving up with its first logical partition), never in the
  // destination: the forward pass writes only the destination, and the table is written after
  // the data is moved; a rollback puts the old table bytes back (which are the source's data
  // there) before the rollback pass rewrites the same data (docs/mover.md, I7).
  const ByteInterval written{move.dest_bytes, move.dest_bytes + move.length_bytes};
  std::vector<ByteInterval> seen;
  // 0: a table update, 1: a record in the moved data, 2: restore-only bytes.
  auto kind_of = [](const TableUpdate& u) { return u.restore_only ? 2 : u.in_data ? 1 : 0; };
  std::vector<int> seen_kind;
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
    const ByteInterval range{update.offset_bytes, update.offset_bytes + length};
    if (update.restore_only) {
      if (update.old_bytes != update.new_bytes || range.begin < written.begin ||
          range.end > written.end) {
        return MakeError(
            fmt::format("restore-only update at byte {} (+{}) must hold equal old and new bytes "
                        "and lie in the destination {}..{}",
                        update.offset_bytes, length, written.begin, written.end));
      }
    } else if (update.in_data) {
      // Inside the destination, in chunks the move copies: the data's own bytes are there
      // when the table is written.
      if (range.begin < written.begin || range.end > written.end) {
        return MakeError(
            fmt::format("record update at byte {} (+{}) lies outside the destination {}..{}",
                        update.offset_bytes, length, written.begin, written.end));
      }
      const uint64_t first = (range.begin - written.begin) / move.chunk_bytes;
      const uint64_t last = (range.end - 1 - written.begin) / move.chunk_bytes;
      for (uint64_t c = first; c <= last && !move.copy.all(); ++c) {
        if (move.copy.OrdinalsBelow(c + 1) == move.copy.OrdinalsBelow(c)) {
          return MakeError(
              fmt::format("record update at byte {} lies in chunk {}, which the move does not copy",
                          update.offset_bytes, c));
        }
      }
    } else if (Overlaps(range, written)) {
      return MakeError(fmt::format(
          "table update at byte {} (+{}) overlaps the destination {}..{}: table sectors must lie "
          "outside the partition's new place",
          update.offset_bytes, length, written.begin, written.end));
    }
    for (size_t k = 0; k < seen.size(); ++k) {
      const ByteInterval& other = seen[k];
      // A record at the new place may lie where the destination held other bytes before the
      // move: the rollback puts the record's old bytes back first, those bytes last.
      if (seen_kind[k] != kind_of(update) && seen_kind[k] != 0 && kind_of(update) != 0) continue;
      if (Overlaps(range, other)) {
        return MakeError(
            fmt::format("table updates at bytes {} and {} overlap", other.begin, range.begin));
      }
    }
    seen.push_back(range);
    seen_kind.push_back(kind_of(update));
  }
  return {};
}

Result<CopySet> CopySet::FromRuns(std::vector<ChunkRun> runs, uint64_t total_chunks) {
  CopySet set;
  uint64_t end = 0;
  for (const ChunkRun& run : runs) {
    if (run.chunk_count == 0) return MakeError("a run of chunks to copy is empty");
    if (!set.runs_.empty() && run.first_chunk < end) {
      return MakeError(
          fmt::format("the runs of chunks to copy are not sorted and disjoint "
                      "(a run starts at chunk {}, the previous one ends at {})",
                      run.first_chunk, end));
    }
    if (run.first_chunk > total_chunks || run.chunk_count > total_chunks - run.first_chunk) {
      return MakeError(
          fmt::format("a run of chunks to copy ({}+{}) ends beyond the {} chunks "
                      "of the range",
                      run.first_chunk, run.chunk_count, total_chunks));
    }
    if (!set.runs_.empty() && run.first_chunk == end) {
      set.runs_.back().chunk_count += run.chunk_count;
    } else {
      set.first_ordinal_.push_back(set.count_);
      set.runs_.push_back(run);
    }
    set.count_ += run.chunk_count;
    end = run.first_chunk + run.chunk_count;
  }
  if (set.count_ == 0) return MakeError("the used map selects no chunk to copy");
  if (set.count_ == total_chunks) return CopySet();  // every chunk: the plain move
  return set;
}

uint64_t CopySet::ChunkOf(uint64_t ordinal) const {
  if (all()) return ordinal;
  // The last run whose first ordinal is <= ordinal.
  const auto it = std::upper_bound(first_ordinal_.begin(), first_ordinal_.end(), ordinal);
  const size_t run = static_cast<size_t>(it - first_ordinal_.begin()) - 1;
  return runs_[run].first_chunk + (ordinal - first_ordinal_[run]);
}

uint64_t CopySet::OrdinalsBelow(uint64_t chunk) const {
  if (all()) return chunk;
  // The last run that starts at or below `chunk`.
  const auto it = std::upper_bound(runs_.begin(), runs_.end(), chunk,
                                   [](uint64_t c, const ChunkRun& r) { return c < r.first_chunk; });
  if (it == runs_.begin()) return 0;
  const size_t run = static_cast<size_t>(it - runs_.begin()) - 1;
  return first_ordinal_[run] + std::min(chunk - runs_[run].first_chunk, runs_[run].chunk_count);
}

uint64_t ShiftBytes(const MoveGeometry& move) {
  return move.dest_bytes > move.source_bytes ? move.dest_bytes - move.source_bytes
                                             : move.source_bytes - move.dest_bytes;
}

MoveGeometry SizedForItsCopy(MoveGeometry move, const std::optional<UsedMap>& used) {
  const auto with = [&](uint64_t chunk, uint32_t per_batch,
                        uint32_t ring) -> std::optional<MoveGeometry> {
    MoveGeometry g = move;
    g.chunk_bytes = chunk;
    g.chunks_per_batch = per_batch;
    g.ring_batches = ring;
    g.copy = CopySet();
    if (used) {
      Result<CopySet> copy = CopySet::FromRuns(ChunkRunsOf(*used, chunk), RangeChunkCount(g));
      if (!copy) return std::nullopt;
      g.copy = std::move(*copy);
    }
    return g;
  };
  const std::optional<MoveGeometry> normal =
      with(kDefaultMoveChunkBytes, kDefaultChunksPerBatch, kDefaultRingBatches);
  if (!normal) return move;  // the caller's own copy set reports the used map's problem
  if (ShiftBytes(move) >= kSmallShiftBytes) return *normal;
  const std::optional<MoveGeometry> small =
      with(kSmallMoveChunkBytes, kSmallMoveChunksPerBatch, kSmallMoveRingBatches);
  if (!small || CopiedBytes(*small) > kSmallCopyBytes) return *normal;
  // The bytes each geometry moves (read, saved, written, read back: 4 per copied byte at a
  // small shift) and keeps of the destination outside the source (read, then written twice in
  // the journal for the old and twice for the new bytes; at most the shift, below 4 MiB here:
  // always within what the mover keeps).
  const uint64_t small_outside = TotalBytes(DestinationOutsideSource(*small));
  const uint64_t normal_outside = TotalBytes(DestinationOutsideSource(*normal));
  return 4 * CopiedBytes(*small) + 5 * small_outside <=
                 4 * CopiedBytes(*normal) + 5 * normal_outside
             ? *small
             : *normal;
}

uint64_t RangeChunkCount(const MoveGeometry& move) {
  return (move.length_bytes + move.chunk_bytes - 1) / move.chunk_bytes;
}

uint64_t ChunkCount(const MoveGeometry& move) { return move.copy.Count(RangeChunkCount(move)); }

ChunkExtent ChunkExtentOf(const MoveGeometry& move, uint64_t chunk) {
  const uint64_t position = move.copy.ChunkOf(chunk) * move.chunk_bytes;
  return {position, std::min(move.chunk_bytes, move.length_bytes - position)};
}

uint64_t CopiedBytes(const MoveGeometry& move) {
  const uint64_t count = ChunkCount(move);
  if (count == 0) return 0;
  // Every copied chunk is whole except the range's last chunk, when it is copied.
  return (count - 1) * move.chunk_bytes + ChunkExtentOf(move, count - 1).length_bytes;
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
  const uint64_t lo = chunk.position_bytes;
  const uint64_t hi = lo + chunk.length_bytes;
  const uint64_t first = segment.first_chunk;
  const uint64_t end = segment.first_chunk + segment.chunk_count;  // ordinals [first, end)
  if (Descending(segment)) {
    // A write of position q lands on the source of position q + shift: the writers of [lo, hi)
    // hold positions [lo - shift, hi - shift). The first one (the order descends) is the highest
    // copied chunk of the segment at or below the one holding hi - shift - 1.
    const uint64_t shift = segment.dest_base - segment.source_base;
    if (hi < shift + 1) return std::nullopt;
    const uint64_t below = move.copy.OrdinalsBelow((hi - shift - 1) / move.chunk_bytes + 1);
    if (below == 0 || below - 1 < first) return std::nullopt;
    const uint64_t writer = std::min(below - 1, end - 1);
    const ChunkExtent w = ChunkExtentOf(move, writer);
    if (lo >= shift && w.position_bytes + w.length_bytes <= lo - shift) return std::nullopt;
    return end - 1 - writer;
  }
  // Ascending: a write of position q lands on the source of position q - shift; the writers hold
  // [lo + shift, hi + shift), the first one is the lowest copied chunk of the segment holding a
  // position at or above lo + shift.
  const uint64_t shift = segment.source_base - segment.dest_base;
  if (lo + shift >= move.length_bytes) return std::nullopt;
  const uint64_t writer = std::max(move.copy.OrdinalsBelow((lo + shift) / move.chunk_bytes), first);
  if (writer >= end) return std::nullopt;
  if (ChunkExtentOf(move, writer).position_bytes >= hi + shift) return std::nullopt;
  return writer - first;
}

bool NeedsSavedCopy(const MoveGeometry& move, const Segment& segment, uint64_t index) {
  std::optional<uint64_t> writer = FirstOverwriter(move, segment, index);
  if (!writer) return false;
  return BatchOf(*writer, move.chunks_per_batch) <
         BatchOf(index, move.chunks_per_batch) + move.ring_batches;
}

}  // namespace partalign
