// SPDX-License-Identifier: GPL-3.0-or-later
// The flush-ordered way of a small shift: its geometry checked against a brute-force search of
// every write that can happen before a chunk is committed (no write may reach an uncommitted
// source), and the choice between it and saved copies by the measured costs.
#include "partalign/move/move_way.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>

#include <fmt/format.h>

#include "core/move/step_bytes.h"

namespace partalign {
namespace {

constexpr uint64_t kSector = 512;

using test::DestOf;
using test::Interval;
using test::SourceOf;

bool Overlap(const Interval& a, const Interval& b) { return a.begin < b.end && b.begin < a.end; }

// The first violation in `segment`: a write of step j that lands on the source of a step i
// while i may still be uncommitted (j >= i within the window of in-flight batches), or an
// earlier step's write on a later step's unread source. Empty when there is none.
std::string BruteForceViolation(const MoveGeometry& m, const Segment& s) {
  for (uint64_t i = 0; i < s.chunk_count; ++i) {
    const Interval source = SourceOf(m, s, i);
    for (uint64_t j = 0; j < s.chunk_count; ++j) {
      const bool in_window = j >= i && BatchOf(j, m.chunks_per_batch) <
                                           BatchOf(i, m.chunks_per_batch) + m.ring_batches;
      if ((in_window || j < i) && Overlap(DestOf(m, s, j), source)) {
        return fmt::format("the write of step {} lands on the source of step {}", j, i);
      }
    }
  }
  return {};
}

MoveGeometry Range(uint64_t source, uint64_t dest, uint64_t length) {
  MoveGeometry m;
  m.source_bytes = source;
  m.dest_bytes = dest;
  m.length_bytes = length;
  return m;
}

TEST(FlushOrderedGeometryTest, NoWriteInAnyWindowReachesAnUncommittedSourceBruteForce) {
  std::mt19937_64 rng(41);
  int built = 0;
  for (int round = 0; round < 400; ++round) {
    const uint64_t sector = (round % 4 == 3) ? 4096 : kSector;
    const uint64_t shift = sector * (1 + rng() % (round % 2 ? 120 : 2100));
    const uint64_t length = sector * (1 + rng() % 3000);
    const uint64_t low = sector * (rng() % 64);
    const bool up = rng() % 2;
    const MoveGeometry move =
        up ? Range(low, low + shift, length) : Range(low + shift, low, length);
    SCOPED_TRACE(fmt::format("{} -> {}, {} bytes, sector {}", move.source_bytes, move.dest_bytes,
                             length, sector));
    const std::optional<MoveGeometry> ordered = FlushOrderedGeometry(move, sector);
    if (!ordered) {
      // Only where no saved copy is needed, or where the shift leaves no room for two chunks.
      EXPECT_TRUE(SavedCopyBytes(move) == 0 || shift < 2 * 4096) << shift;
      continue;
    }
    ++built;
    EXPECT_TRUE(ValidateMove(*ordered, 1ull << 40, sector));
    EXPECT_EQ(ordered->source_bytes, move.source_bytes);
    EXPECT_EQ(ordered->dest_bytes, move.dest_bytes);
    EXPECT_EQ(ordered->length_bytes, move.length_bytes);
    EXPECT_EQ(ordered->chunk_bytes % 4096, 0u);
    EXPECT_EQ(ordered->chunk_bytes % sector, 0u);
    EXPECT_LE(ordered->chunk_bytes, kDefaultMoveChunkBytes);
    EXPECT_EQ(SavedCopyBytes(*ordered), 0u);
    const Segment forward = ForwardSegment(*ordered);
    EXPECT_EQ(BruteForceViolation(*ordered, forward), "");
    // A rollback from any point of the forward pass.
    const uint64_t done = rng() % (forward.chunk_count + 1);
    EXPECT_EQ(BruteForceViolation(*ordered, RollbackSegment(*ordered, done)), "") << done;
  }
  EXPECT_GT(built, 100);
}

TEST(FlushOrderedGeometryTest, SixtyThreeToTwentyFortyEightTakes128KiBChunksSevenInFlight) {
  // 1985 sectors: 1016320 bytes; a quarter is 254080: 128 KiB is the largest power of two
  // below it, and 7 of them fit in the shift.
  const MoveGeometry move = Range(63 * kSector, 2048 * kSector, 1ull << 30);
  const std::optional<MoveGeometry> ordered = FlushOrderedGeometry(move, kSector);
  ASSERT_TRUE(ordered);
  EXPECT_EQ(ordered->chunk_bytes, 128u * 1024);
  EXPECT_EQ(ordered->chunks_per_batch, 1u);
  EXPECT_EQ(ordered->ring_batches, 7u);
  // The default geometry saves a copy of every chunk of that move.
  EXPECT_EQ(SavedCopyBytes(move), move.length_bytes);
}

TEST(FlushOrderedGeometryTest, LargeShiftsKeepFourMebibyteChunksInSeveralBatches) {
  // 60 MiB: 15 chunks of 4 MiB between a chunk and its first overwriter; the default ring (4
  // batches of 4) would need saved copies.
  const MoveGeometry move = Range(1ull << 20, 61ull << 20, 1ull << 30);
  ASSERT_GT(SavedCopyBytes(move), 0u);
  const std::optional<MoveGeometry> ordered = FlushOrderedGeometry(move, kSector);
  ASSERT_TRUE(ordered);
  EXPECT_EQ(ordered->chunk_bytes, kDefaultMoveChunkBytes);
  EXPECT_EQ(ordered->chunks_per_batch, 1u);
  EXPECT_EQ(ordered->ring_batches, 15u);
  // 64 MiB, the default ring: nothing to save, so no second way to take.
  EXPECT_EQ(SavedCopyBytes(Range(1ull << 20, 65ull << 20, 1ull << 30)), 0u);
  EXPECT_FALSE(FlushOrderedGeometry(Range(1ull << 20, 65ull << 20, 1ull << 30), kSector));
}

TEST(FlushOrderedGeometryTest, NoneBelowTwoChunksOfTheShiftNorWhereNoCopyIsNeeded) {
  EXPECT_FALSE(FlushOrderedGeometry(Range(63 * kSector, 64 * kSector, 1ull << 30), kSector));
  EXPECT_FALSE(FlushOrderedGeometry(Range(0, 15 * kSector, 1ull << 30), kSector));
  EXPECT_TRUE(FlushOrderedGeometry(Range(0, 16 * kSector, 1ull << 30), kSector));
  // 4096-byte sectors: two sectors are two 4 KiB chunks.
  EXPECT_FALSE(FlushOrderedGeometry(Range(4096, 8192, 1ull << 30), 4096));
  EXPECT_TRUE(FlushOrderedGeometry(Range(4096, 3 * 4096, 1ull << 30), 4096));
  // No overlap, and a shift beyond the default ring (64 MiB): nothing to save.
  EXPECT_FALSE(FlushOrderedGeometry(Range(0, 2ull << 30, 1ull << 30), kSector));
  EXPECT_FALSE(FlushOrderedGeometry(Range(0, 200ull << 20, 1ull << 30), kSector));
  EXPECT_FALSE(FlushOrderedGeometry(Range(0, 0, 0), kSector));
}

TEST(RefinedCopySetTest, TheSameBytesInSmallerChunks) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    MoveGeometry move = Range(0, 1ull << 20, 4096 * (1 + rng() % 20000));
    const uint64_t total = RangeChunkCount(move);
    std::vector<ChunkRun> runs;
    for (uint64_t c = rng() % 3; c < total; c += 1 + rng() % 4) {
      const uint64_t n = std::min<uint64_t>(1 + rng() % 3, total - c);
      runs.push_back({c, n});
      c += n;
    }
    if (runs.empty()) continue;
    Result<CopySet> copy = CopySet::FromRuns(runs, total);
    ASSERT_TRUE(copy);
    move.copy = *copy;
    for (uint64_t chunk :
         {uint64_t{4096}, uint64_t{65536}, uint64_t{1} << 20, kDefaultMoveChunkBytes}) {
      Result<CopySet> refined = RefinedCopySet(move, chunk);
      ASSERT_TRUE(refined) << refined.error().message;
      MoveGeometry smaller = move;
      smaller.chunk_bytes = chunk;
      smaller.copy = *refined;
      EXPECT_EQ(CopiedBytes(smaller), CopiedBytes(move)) << chunk << " of " << move.length_bytes;
      // Byte for byte: every copied byte of the smaller chunks lies in a copied chunk.
      for (uint64_t k = 0; k < ChunkCount(smaller); ++k) {
        const ChunkExtent e = ChunkExtentOf(smaller, k);
        const uint64_t big = e.position_bytes / move.chunk_bytes;
        EXPECT_GE(move.copy.OrdinalsBelow(big + 1), move.copy.OrdinalsBelow(big) + 1);
      }
    }
  }
  // Every chunk: nothing to refine. A chunk that does not divide the move's: refused.
  MoveGeometry move = Range(0, 1ull << 20, 8ull << 20);
  EXPECT_TRUE(RefinedCopySet(move, 3ull << 20));
  move.copy = *CopySet::FromRuns({{1, 1}}, 2);
  EXPECT_FALSE(RefinedCopySet(move, 3ull << 20));
}

// Stream and ordered rates in MiB/s, as MeasureDeviceCosts returns them.
DeviceCosts Costs(double stream, double ordered) {
  return {stream * 1024 * 1024, ordered * 1024 * 1024, 128 * 1024};
}

// 1 GiB moved 63 -> 2048 (or further), its first 308 MiB copied (77 chunks of 4 MiB).
MoveGeometry Partial(uint64_t dest_sector) {
  MoveGeometry move = Range(63 * kSector, dest_sector * kSector, 1ull << 30);
  move.copy = *CopySet::FromRuns({{0, 77}}, RangeChunkCount(move));
  return move;
}

TEST(ChooseMoveWayTest, TheCheaperWayByTheMeasuredCosts) {
  const MoveGeometry move = Partial(2048);
  const uint64_t copied = 308ull << 20;
  // This machine (docs/mover.md §5a): 1 GiB/s streamed, 317 MiB/s in 128 KiB chunks with
  // their three flushes: 616 MiB streamed (the data and its copies) take 0.60 s, the ordered
  // 308 MiB 0.97 s.
  const WayChoice slow_flush = ChooseMoveWay(move, kSector, Costs(1024, 317));
  EXPECT_EQ(slow_flush.way, MoveWay::kSavedCopies);
  EXPECT_EQ(slow_flush.move, move);
  EXPECT_EQ(slow_flush.copies_bytes, copied);
  EXPECT_EQ(slow_flush.ordered_windows, 352u);
  EXPECT_EQ(slow_flush.ordered_copies_bytes, 0u);
  EXPECT_NEAR(slow_flush.copies_seconds, 616.0 / 1024, 1e-9);
  EXPECT_NEAR(slow_flush.ordered_seconds, 308.0 / 317, 1e-9);
  // A device whose flushes cost little: 0.51 s against 0.60 s. The same bytes are copied.
  const WayChoice fast_flush = ChooseMoveWay(move, kSector, Costs(1024, 600));
  EXPECT_EQ(fast_flush.way, MoveWay::kFlushOrdered);
  EXPECT_EQ(fast_flush.move.chunk_bytes, 128u * 1024);
  EXPECT_EQ(fast_flush.move.source_bytes, move.source_bytes);
  EXPECT_EQ(CopiedBytes(fast_flush.move), copied);
  EXPECT_EQ(SavedCopyBytes(fast_flush.move), 0u);
  // 16 MiB: 73 chunks need copies (the lowest 4 have no overwriter): 600 MiB streamed, 0.59 s.
  const MoveGeometry far = Partial(63 + 32768);
  EXPECT_EQ(ChooseMoveWay(far, kSector, Costs(1024, 600)).way, MoveWay::kFlushOrdered);
  EXPECT_EQ(ChooseMoveWay(far, kSector, Costs(1024, 400)).way, MoveWay::kSavedCopies);
  EXPECT_EQ(ChooseMoveWay(far, kSector, Costs(1024, 400)).copies_bytes, 73ull * 4 << 20);
}

TEST(ChooseMoveWayTest, AGapInTheCopySetStillGetsItsFewSavedCopies) {
  // A 16 MiB shift (4 MiB chunks, 4 in flight), chunks 0-9 and 11-19 copied: the steps just
  // above the gap are 3 steps from their overwriter, not 4. The engine writes their copies;
  // the estimate counts them.
  MoveGeometry move = Range(63 * kSector, (63 + 32768) * kSector, 80ull << 20);
  move.copy = *CopySet::FromRuns({{0, 10}, {11, 9}}, RangeChunkCount(move));
  const WayChoice choice = ChooseMoveWay(move, kSector, std::nullopt, MoveWay::kFlushOrdered);
  ASSERT_EQ(choice.way, MoveWay::kFlushOrdered);
  EXPECT_EQ(CopiedBytes(choice.move), CopiedBytes(move));
  EXPECT_EQ(choice.ordered_copies_bytes, SavedCopyBytes(choice.move));
  EXPECT_GT(choice.ordered_copies_bytes, 0u);
  EXPECT_LE(choice.ordered_copies_bytes, 16u << 20);
  EXPECT_LT(choice.ordered_copies_bytes, SavedCopyBytes(move));
}

TEST(ChooseMoveWayTest, NotMeasuredIsSavedCopiesAndForcedIsTakenWhereItExists) {
  const MoveGeometry move = Range(63 * kSector, 2048 * kSector, 1ull << 30);
  EXPECT_EQ(ChooseMoveWay(move, kSector, std::nullopt).way, MoveWay::kSavedCopies);
  const WayChoice ordered = ChooseMoveWay(move, kSector, std::nullopt, MoveWay::kFlushOrdered);
  EXPECT_EQ(ordered.way, MoveWay::kFlushOrdered);
  EXPECT_NE(DescribeWay(ordered, std::nullopt).find("asked for with --way"), std::string::npos);
  const WayChoice copies = ChooseMoveWay(move, kSector, Costs(100, 1000), MoveWay::kSavedCopies);
  EXPECT_EQ(copies.way, MoveWay::kSavedCopies);
  // One sector: no flush-ordered way; forcing it says so.
  const MoveGeometry one = Range(63 * kSector, 64 * kSector, 1ull << 30);
  const WayChoice impossible = ChooseMoveWay(one, kSector, std::nullopt, MoveWay::kFlushOrdered);
  EXPECT_EQ(impossible.way, MoveWay::kSavedCopies);
  EXPECT_EQ(DescribeWay(impossible, std::nullopt),
            "way: saved copies (--way ordered is impossible here; about 1 GiB of saved copies; no "
            "flush-ordered way: the shift is below two 4 KiB chunks)");
  // A shift beyond the ring needs no saved copy: forcing the ordered way says it has nothing
  // to order.
  const MoveGeometry far = Range(0, 200ull << 20, 1ull << 30);
  const WayChoice needless = ChooseMoveWay(far, kSector, std::nullopt, MoveWay::kFlushOrdered);
  EXPECT_EQ(needless.way, MoveWay::kSavedCopies);
  EXPECT_EQ(DescribeWay(needless, std::nullopt),
            "way: no chunk needs a saved copy (no write reaches a source before it is committed; "
            "--way ordered has nothing to order)");
}

TEST(ChooseMoveWayTest, AMeasurementEndsEarlyOnlyWhenOneWayCostsTwiceTheOther) {
  const WayChoice considered = ConsiderMoveWays(Partial(2048), kSector);
  // Saved copies 0.60 s; the ordered way 2.05 s (slow flushes), 0.97 s, 0.15 s.
  EXPECT_TRUE(WayIsClear(considered, Costs(1024, 150)));
  EXPECT_FALSE(WayIsClear(considered, Costs(1024, 317)));
  EXPECT_TRUE(WayIsClear(considered, Costs(1024, 2000)));
  // At the margin (twice 616 MiB at 1 GiB/s is 1.203 s): 1.21 s is clear, 1.19 s is not.
  EXPECT_TRUE(WayIsClear(considered, Costs(1024, 308.0 / 1.21)));
  EXPECT_FALSE(WayIsClear(considered, Costs(1024, 308.0 / 1.19)));
  // Nothing to weigh: no ordered rate, a forced way, no flush-ordered way.
  EXPECT_FALSE(WayIsClear(considered, Costs(1024, 0)));
  EXPECT_FALSE(WayIsClear(ConsiderMoveWays(Partial(2048), kSector, MoveWay::kSavedCopies),
                          Costs(1024, 150)));
  const MoveGeometry one = Range(63 * kSector, 64 * kSector, 1ull << 30);
  EXPECT_FALSE(WayIsClear(ConsiderMoveWays(one, kSector), Costs(1024, 150)));
}

TEST(ChooseMoveWayTest, TheLineSaysBothEstimates) {
  const DeviceCosts costs = Costs(1024, 317);
  const WayChoice choice = ChooseMoveWay(Partial(2048), kSector, costs);
  EXPECT_EQ(DescribeWay(choice, costs),
            "way: saved copies (about 308 MiB of saved copies, 0.60 s writing at 1 GiB/s; "
            "instead of flush-ordered: chunks of 128 KiB, 7 in flight, 0.97 s writing at 317 "
            "MiB/s with its flushes)");
  const MoveGeometry far = Range(0, 200ull << 20, 1ull << 30);
  EXPECT_EQ(DescribeWay(ChooseMoveWay(far, kSector, costs), costs),
            "way: no chunk needs a saved copy (no write reaches a source before it is committed)");
  // The stream measured twice (MeasureDeviceCosts: the first said the ordered way): the line
  // says that its rate is the faster of the two.
  DeviceCosts twice = Costs(1024, 700);
  twice.stream_samples = 2;
  EXPECT_EQ(DescribeWay(ChooseMoveWay(Partial(2048), kSector, twice), twice),
            "way: flush-ordered, no saved copies (chunks of 128 KiB, 7 in flight, 0.44 s writing "
            "at 700 MiB/s with its flushes; instead of about 308 MiB of saved copies, 0.60 s "
            "writing at 1 GiB/s (the faster of two measurements))");
}

}  // namespace
}  // namespace partalign
