// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/move/move_way.h"

#include <algorithm>

#include <fmt/format.h>

#include "partalign/util/units.h"

namespace partalign {
namespace {

bool AnyNeedsSavedCopy(const MoveGeometry& move, const Segment& segment) {
  for (uint64_t i = 0; i < segment.chunk_count; ++i) {
    if (NeedsSavedCopy(move, segment, i)) return true;
  }
  return false;
}

// Chunks of this many in-flight chunks per shift: enough overlap of a chunk's write with the
// previous one's commit (2 measured the same as 4 on the test machine, 8 slower: more flushes).
constexpr uint64_t kChunksPerShift = 4;

// The flush-ordered way cuts its window (the steps a shift holds) into this many batches: its
// geometry as measured in docs/mover.md §5a, kept when the saved copies' ring became 4 batches.
constexpr uint64_t kOrderedWindowBatches = 8;

std::string Rate(double bytes_per_second) {
  return fmt::format("{}/s", FormatSize(static_cast<uint64_t>(bytes_per_second)));
}

}  // namespace

const char* ToString(MoveWay way) {
  return way == MoveWay::kFlushOrdered ? "flush-ordered" : "saved copies";
}

uint64_t SavedCopyBytes(const MoveGeometry& move) {
  const Segment segment = ForwardSegment(move);
  uint64_t bytes = 0;
  for (uint64_t i = 0; i < segment.chunk_count; ++i) {
    if (NeedsSavedCopy(move, segment, i)) {
      bytes += ChunkExtentOf(move, ChunkAt(segment, i)).length_bytes;
    }
  }
  return bytes;
}

std::optional<MoveGeometry> FlushOrderedGeometry(const MoveGeometry& move,
                                                 uint64_t logical_sector_size) {
  MoveGeometry every = move;
  every.copy = CopySet();
  if (every.length_bytes == 0 || SavedCopyBytes(every) == 0) return std::nullopt;
  const uint64_t unit = std::max<uint64_t>(kMoveChunkAlignBytes, logical_sector_size);
  const uint64_t shift = ShiftBytes(move);
  // The largest power-of-two multiple of 4 KiB that divides the move's chunk and is at most a
  // quarter of the shift (half, for shifts below four 4 KiB chunks): a divisor, so that the
  // move's copy set refines into the smaller chunks exactly (RefinedCopySet) and the move
  // copies the same bytes whichever way it takes.
  const uint64_t most = shift / kChunksPerShift >= unit ? shift / kChunksPerShift : shift / 2;
  uint64_t chunk = 0;
  for (uint64_t c = kMoveChunkAlignBytes; c <= most && c <= move.chunk_bytes; c *= 2) {
    if (move.chunk_bytes % c == 0 && c % logical_sector_size == 0) chunk = c;
  }
  if (chunk == 0) return std::nullopt;
  // A write of step i + k lands on the source of step i for k = shift / chunk at the earliest
  // (docs/mover.md §5a): a window of that many steps never reaches an uncommitted source.
  const uint64_t steps = shift / chunk;
  MoveGeometry ordered = every;
  ordered.chunk_bytes = chunk;
  ordered.chunks_per_batch =
      static_cast<uint32_t>(std::max<uint64_t>(1, steps / kOrderedWindowBatches));
  ordered.ring_batches = static_cast<uint32_t>(steps / ordered.chunks_per_batch);
  if (ordered.ring_batches < 2) return std::nullopt;
  // Proven, not assumed: no step of the forward pass, nor of the rollback of all of it,
  // needs a saved copy.
  const Segment forward = ForwardSegment(ordered);
  if (AnyNeedsSavedCopy(ordered, forward) ||
      AnyNeedsSavedCopy(ordered, RollbackSegment(ordered, forward.chunk_count))) {
    return std::nullopt;
  }
  return ordered;
}

Result<CopySet> RefinedCopySet(const MoveGeometry& move, uint64_t chunk_bytes) {
  if (move.copy.all()) return CopySet();
  if (chunk_bytes == 0 || move.chunk_bytes % chunk_bytes != 0) {
    return MakeError(
        fmt::format("chunk {} does not divide chunk {}", chunk_bytes, move.chunk_bytes));
  }
  const uint64_t factor = move.chunk_bytes / chunk_bytes;
  const uint64_t total = (move.length_bytes + chunk_bytes - 1) / chunk_bytes;
  std::vector<ChunkRun> runs;
  for (const ChunkRun& run : move.copy.runs()) {
    const uint64_t first = run.first_chunk * factor;
    const uint64_t end = std::min(total, (run.first_chunk + run.chunk_count) * factor);
    if (first < end) runs.push_back({first, end - first});
  }
  return CopySet::FromRuns(std::move(runs), total);
}

WayChoice ConsiderMoveWays(const MoveGeometry& move, uint64_t logical_sector_size,
                           std::optional<MoveWay> forced) {
  WayChoice choice;
  choice.move = move;
  choice.forced = forced;
  if (move.length_bytes == 0) return choice;
  choice.copies_bytes = SavedCopyBytes(move);
  // Nothing to save (a shift beyond the ring, or a copy set whose gaps are wider than the
  // shift): the saved-copies way writes none either, unless the other one is asked for.
  if (choice.copies_bytes == 0 && forced != MoveWay::kFlushOrdered) return choice;
  std::optional<MoveGeometry> ordered = FlushOrderedGeometry(move, logical_sector_size);
  if (!ordered) return choice;
  Result<CopySet> copy = RefinedCopySet(move, ordered->chunk_bytes);
  if (!copy) return choice;
  ordered->copy = std::move(*copy);
  const uint64_t window = ordered->chunk_bytes * ordered->chunks_per_batch *
                          static_cast<uint64_t>(ordered->ring_batches);
  choice.ordered_windows = std::max<uint64_t>(1, (CopiedBytes(move) + window - 1) / window);
  // Steps next to a gap of the copy set are fewer steps from their overwriter than the
  // shift says: those few still need a saved copy.
  choice.ordered_copies_bytes = SavedCopyBytes(*ordered);
  choice.ordered = std::move(ordered);
  if (forced == MoveWay::kFlushOrdered) {
    choice.way = MoveWay::kFlushOrdered;
    choice.move = *choice.ordered;
  }
  return choice;
}

WayChoice DecideMoveWay(WayChoice choice, const std::optional<DeviceCosts>& costs) {
  choice.measured = costs.has_value();
  const double stream = costs ? costs->stream_bytes_per_second : 0;
  const double ordered_rate = costs ? costs->ordered_bytes_per_second : 0;
  if (choice.move.length_bytes == 0 || stream <= 0) return choice;
  // The saved-copies way's geometry: the one considered, whichever way a force took.
  const double copied = static_cast<double>(CopiedBytes(choice.move));
  choice.copies_seconds = (copied + static_cast<double>(choice.copies_bytes)) / stream;
  if (choice.ordered && ordered_rate > 0) {
    choice.ordered_seconds =
        copied / ordered_rate + static_cast<double>(choice.ordered_copies_bytes) / stream;
  }
  if (!choice.forced && choice.ordered_seconds > 0 &&
      choice.ordered_seconds < choice.copies_seconds) {
    choice.way = MoveWay::kFlushOrdered;
    choice.move = *choice.ordered;
  }
  return choice;
}

bool WayIsClear(const WayChoice& considered, const DeviceCosts& so_far) {
  if (considered.forced) return false;
  const WayChoice estimated = DecideMoveWay(considered, so_far);
  const double copies = estimated.copies_seconds;
  const double ordered = estimated.ordered_seconds;
  if (copies <= 0 || ordered <= 0) return false;
  return std::max(copies, ordered) >= kClearWayMargin * std::min(copies, ordered);
}

WayChoice ChooseMoveWay(const MoveGeometry& move, uint64_t logical_sector_size,
                        const std::optional<DeviceCosts>& costs, std::optional<MoveWay> forced) {
  return DecideMoveWay(ConsiderMoveWays(move, logical_sector_size, forced), costs);
}

std::string DescribeWay(const WayChoice& choice, const std::optional<DeviceCosts>& costs) {
  if (choice.move.length_bytes == 0) return "way: no data moves";
  if (choice.copies_bytes == 0 && choice.way == MoveWay::kSavedCopies && !choice.ordered) {
    return fmt::format(
        "way: no chunk needs a saved copy (no write reaches a source before it is committed{})",
        choice.forced == MoveWay::kFlushOrdered ? "; --way ordered has nothing to order" : "");
  }
  std::string ordered;
  if (!choice.ordered) {
    ordered = "no flush-ordered way: the shift is below two 4 KiB chunks";
  } else {
    const MoveGeometry& g = *choice.ordered;
    ordered = fmt::format("chunks of {}, {} in flight", FormatSize(g.chunk_bytes),
                          g.chunks_per_batch * static_cast<uint64_t>(g.ring_batches));
    if (choice.ordered_seconds > 0) {
      ordered += fmt::format(", {:.2f} s writing at {} with its flushes", choice.ordered_seconds,
                             Rate(costs->ordered_bytes_per_second));
    }
  }
  std::string copies = fmt::format("about {} of saved copies", FormatSize(choice.copies_bytes));
  if (choice.copies_seconds > 0) {
    copies += fmt::format(", {:.2f} s writing at {}{}", choice.copies_seconds,
                          Rate(costs->stream_bytes_per_second),
                          costs->stream_samples > 1 ? " (the faster of two measurements)" : "");
  }
  const char* why = !choice.forced                 ? (choice.measured ? "" : "not measured; ")
                    : *choice.forced == choice.way ? "asked for with --way; "
                                                   : "--way ordered is impossible here; ";
  if (choice.way == MoveWay::kFlushOrdered) {
    return fmt::format("way: flush-ordered, no saved copies ({}{}; instead of {})", why, ordered,
                       copies);
  }
  return fmt::format("way: saved copies ({}{}; {}{})", why, copies,
                     choice.ordered ? "instead of flush-ordered: " : "", ordered);
}

}  // namespace partalign
