// SPDX-License-Identifier: GPL-3.0-or-later
// The two safe ways of a small shift, and which one a move takes (docs/mover.md §5a). A chunk
// whose source a write can reach before the chunk is committed needs a saved copy in the
// journal (one more write of its bytes); the other way orders the writes by flushes instead:
// chunks of at most a fraction of the shift and a window of in-flight chunks that fits in the
// shift, so that no write ever reaches an uncommitted source and no chunk needs a copy, at
// the price of a commit (three flushes) every few chunks. Which one is cheaper depends on the
// storage: how fast it takes large writes against how fast it takes a chunk and its flushes,
// both measured at the start of the move (io/move/device_costs.h).
// Pure arithmetic on the geometry and the measured costs.
#pragma once

#include <optional>
#include <string>

#include "partalign/move/move_plan.h"
#include "partalign/util/result.h"

namespace partalign {

enum class MoveWay {
  kSavedCopies,   ///< the default geometry: saved copies where a write can reach a source
  kFlushOrdered,  ///< chunks and window within the shift: no saved copy, a commit per window
};

/// "saved copies", "flush-ordered".
const char* ToString(MoveWay way);

/// What the start of a move measured on the journal's storage: how fast it takes a stream of
/// large writes with a flush at the end (the saved-copies way: the data and its copies), and
/// how fast it takes the flush-ordered way's pattern: one chunk written, then flushed, then a
/// 4 KiB block written and flushed twice (the digests and the state), chunk after chunk.
struct DeviceCosts {
  double stream_bytes_per_second = 0;
  double ordered_bytes_per_second = 0;
  uint64_t ordered_chunk_bytes = 0;  ///< the chunk the ordered pattern was measured with
  uint64_t ordered_cycles = 0;       ///< chunks of the ordered pattern measured
  /// 2 when the stream pattern was measured again and stream_bytes_per_second is the faster
  /// of the two (MeasureDeviceCosts, when the first would have chosen the flush-ordered way).
  uint32_t stream_samples = 1;
};

/// The geometry of `move` (its range; copy set and batch fields are replaced) in which no step
/// of its forward pass nor of any rollback pass needs a saved copy when every chunk is copied:
/// chunks of at most a quarter of the shift (a power-of-two multiple of 4 KiB that divides the
/// move's chunk, and a multiple of the sector) and a window of chunks_per_batch x ring_batches
/// chunks within the shift. nullopt when the
/// shift is below two such chunks (a write would reach its own chunk's source), and when the
/// default geometry needs no saved copy anyway (no overlap, or a shift beyond its ring).
std::optional<MoveGeometry> FlushOrderedGeometry(const MoveGeometry& move,
                                                 uint64_t logical_sector_size);

/// The bytes of saved copies the forward pass of `move` writes (every step that needs one).
uint64_t SavedCopyBytes(const MoveGeometry& move);

/// The copy set of `move` in chunks of `chunk_bytes` (a divisor of move.chunk_bytes): the same
/// bytes, each chunk cut into move.chunk_bytes / chunk_bytes (the range's last one shorter).
Result<CopySet> RefinedCopySet(const MoveGeometry& move, uint64_t chunk_bytes);

/// Which way a move takes, with the estimate that chose it.
struct WayChoice {
  MoveWay way = MoveWay::kSavedCopies;
  MoveGeometry move;  ///< the geometry of that way (the copy set still to be chosen)
  /// The estimates (seconds of writing and flushing): the copied bytes and their saved copies
  /// at the measured stream rate; the copied bytes at the measured ordered rate (and the few
  /// copies it still needs at the stream rate). Zero when not estimated.
  double copies_seconds = 0;
  double ordered_seconds = 0;
  uint64_t copies_bytes = 0;  ///< saved copies the saved-copies way writes
  /// The flush-ordered way's geometry (its copy set refined), when it exists and is weighed.
  std::optional<MoveGeometry> ordered;
  uint64_t ordered_windows = 0;       ///< commits of `ordered` (estimate); 0 without it
  uint64_t ordered_copies_bytes = 0;  ///< saved copies it still writes (next to copy-set gaps)
  std::optional<MoveWay> forced;      ///< asked for (--way), not chosen by the estimate
  bool measured = false;              ///< costs were measured
};

/// The two ways of `move` (the default geometry and its copy set) before anything is measured:
/// the saved copies it needs, and the flush-ordered geometry with what it still costs; the
/// way is saved copies, or the flush-ordered one when `forced` and it exists. Walks every step
/// of the move a few times: once per move, then DecideMoveWay with what was measured.
WayChoice ConsiderMoveWays(const MoveGeometry& move, uint64_t logical_sector_size,
                           std::optional<MoveWay> forced = std::nullopt);

/// `considered` with its estimates by `costs` and, unless it was forced, the cheaper way taken.
WayChoice DecideMoveWay(WayChoice considered, const std::optional<DeviceCosts>& costs);

/// Whether `so_far`, a measurement not finished, already decides the way of `considered`: one
/// way's estimate is at least kClearWayMargin times the other's, a gap too wide for the rest
/// of the measurement to be worth its flushes (they are most of its time: 0.4 ms each on the
/// test machine, a rotation or more on a rotating disk). False when nothing is weighed or a way is
/// forced.
inline constexpr double kClearWayMargin = 2.0;
bool WayIsClear(const WayChoice& considered, const DeviceCosts& so_far);

/// DecideMoveWay(ConsiderMoveWays(...)): chooses the way of `move`: the flush-ordered one
/// (its copy set refined: the same bytes) when it exists and its commits and remaining copies
/// cost less than the saved copies' writes by `costs`; `forced` takes that way when it exists
/// (a forced flush-ordered way that does not exist leaves saved copies, and the line says so).
/// No costs and nothing forced: saved copies.
WayChoice ChooseMoveWay(const MoveGeometry& move, uint64_t logical_sector_size,
                        const std::optional<DeviceCosts>& costs,
                        std::optional<MoveWay> forced = std::nullopt);

/// One line for the move's output: "way: saved copies (about 308 MiB of saved copies, 0.37 s
/// writing at 1.6 GiB/s; instead of flush-ordered: chunks of 128 KiB, 7 in flight, 0.97 s
/// writing at 317 MiB/s with a flush after each chunk)"; the saved copies' rate followed by
/// "(the faster of two measurements)" when DeviceCosts::stream_samples is 2.
std::string DescribeWay(const WayChoice& choice, const std::optional<DeviceCosts>& costs);

}  // namespace partalign
