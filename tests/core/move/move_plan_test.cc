// SPDX-License-Identifier: GPL-3.0-or-later
// The mover's geometry: chunking, processing order, rollback segments and which chunks need a
// saved copy - checked against a brute-force search over every pair of chunks.
#include "partalign/move/move_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <string>

#include <fmt/format.h>

#include "core/move/step_bytes.h"

namespace partalign {
namespace {

constexpr uint64_t kSector = 512;

MoveGeometry Move(uint64_t source, uint64_t dest, uint64_t length, uint64_t chunk,
                  uint32_t per_batch = 2, uint32_t ring = 2) {
  return {source, dest, length, chunk, per_batch, ring};
}

using test::DestOf;
using test::Interval;
using test::SourceOf;

bool Overlap(Interval a, Interval b) { return a.begin < b.end && b.begin < a.end; }

std::optional<uint64_t> BruteFirstOverwriter(const MoveGeometry& m, const Segment& s,
                                             uint64_t step) {
  for (uint64_t w = 0; w < s.chunk_count; ++w) {
    if (Overlap(DestOf(m, s, w), SourceOf(m, s, step))) return w;
  }
  return std::nullopt;
}

TEST(MovePlanTest, ChunksCoverTheRangeExactlyOnce) {
  const MoveGeometry m = Move(0, 4096, 10 * 4096 + 512, 4096);
  ASSERT_EQ(ChunkCount(m), 11u);
  uint64_t covered = 0;
  for (uint64_t c = 0; c < ChunkCount(m); ++c) {
    const ChunkExtent e = ChunkExtentOf(m, c);
    EXPECT_EQ(e.position_bytes, covered);
    covered += e.length_bytes;
  }
  EXPECT_EQ(covered, m.length_bytes);
  EXPECT_EQ(ChunkExtentOf(m, 10).length_bytes, 512u);
}

TEST(MovePlanTest, MovingUpCopiesFromTheTopDown) {
  const Segment s = ForwardSegment(Move(63 * kSector, 2048 * kSector, 5 * 4096, 4096));
  EXPECT_TRUE(Descending(s));
  EXPECT_EQ(ChunkAt(s, 0), 4u);
  EXPECT_EQ(ChunkAt(s, 4), 0u);
  const Segment down = ForwardSegment(Move(2048 * kSector, 63 * kSector, 5 * 4096, 4096));
  EXPECT_FALSE(Descending(down));
  EXPECT_EQ(ChunkAt(down, 0), 0u);
}

TEST(MovePlanTest, RollbackMovesTheDoneChunksBackTheOtherWay) {
  const MoveGeometry up = Move(8 * kSector, 9 * kSector, 10 * 4096, 4096);
  const Segment back = RollbackSegment(up, 3);  // chunks 9, 8, 7 were moved
  EXPECT_EQ(back.source_base, up.dest_bytes);
  EXPECT_EQ(back.dest_base, up.source_bytes);
  EXPECT_FALSE(Descending(back));
  EXPECT_EQ(ChunkAt(back, 0), 7u);
  EXPECT_EQ(ChunkAt(back, 2), 9u);
  const MoveGeometry down = Move(9 * kSector, 8 * kSector, 10 * 4096, 4096);
  const Segment back_up = RollbackSegment(down, 3);  // chunks 0, 1, 2 were moved
  EXPECT_TRUE(Descending(back_up));
  EXPECT_EQ(ChunkAt(back_up, 0), 2u);
  EXPECT_EQ(ChunkAt(back_up, 2), 0u);
}

// For the forward segment and rollbacks of several lengths: FirstOverwriter is the brute-force
// answer, and never a step before the one whose source it overwrites.
void ExpectFirstOverwritersMatch(const MoveGeometry& m, const std::string& label) {
  std::vector<Segment> segments{ForwardSegment(m)};
  for (uint64_t done : {uint64_t{1}, ChunkCount(m) / 2, ChunkCount(m)}) {
    segments.push_back(RollbackSegment(m, done));
  }
  for (const Segment& s : segments) {
    for (uint64_t step = 0; step < s.chunk_count; ++step) {
      const std::optional<uint64_t> brute = BruteFirstOverwriter(m, s, step);
      EXPECT_EQ(FirstOverwriter(m, s, step), brute) << label << " step " << step;
      if (brute) {
        EXPECT_GE(*brute, step) << "a write reaches a source not yet read";
      }
    }
  }
}

// The heart of the safety argument: no write ever reaches the source of a chunk processed
// later (so every chunk is read intact), and FirstOverwriter is what a search over all pairs
// finds - for forward and rollback segments, shifts below, at and above the chunk size.
TEST(MovePlanTest, FirstOverwriterMatchesBruteForce) {
  const uint64_t shifts[] = {512, 3584, 4096, 4608, 8192, 12800, 40960, 200000 / 512 * 512};
  for (uint64_t shift : shifts) {
    for (bool up : {true, false}) {
      for (uint64_t length : {uint64_t{4096}, uint64_t{7 * 4096 + 1024}, uint64_t{16 * 4096}}) {
        const uint64_t low = 16 * kSector;
        const MoveGeometry m = up ? Move(low, low + shift, length, 4096, 2, 3)
                                  : Move(low + shift, low, length, 4096, 2, 3);
        ExpectFirstOverwritersMatch(
            m, fmt::format("shift {} {} length {}", shift, up ? "up" : "down", length));
      }
    }
  }
}

CopySet RandomCopySet(uint64_t total, std::mt19937_64& rng) {
  std::vector<ChunkRun> runs;
  for (uint64_t c = 0; c < total; ++c) {
    if (rng() % 3 != 0) continue;  // about a third of the chunks, in runs of random length
    if (!runs.empty() && runs.back().first_chunk + runs.back().chunk_count == c) {
      ++runs.back().chunk_count;
    } else {
      runs.push_back({c, 1});
    }
  }
  if (runs.empty()) runs.push_back({total / 2, 1});
  Result<CopySet> set = CopySet::FromRuns(runs, total);
  EXPECT_TRUE(set) << set.error().message;
  return *set;
}

// The same, when only some chunks are copied (a used map): writers are copied chunks only, and
// a step's source may be reached by no copied chunk at all.
// Moves of 24 chunks and a quarter by each of `shifts`, up and down, in 12 rounds: `check` gets
// each (with a random copy set from round `first_copy_round` on) and a name for it.
void ForEachShiftedMove(uint64_t seed, std::span<const uint64_t> shifts, int first_copy_round,
                        const std::function<void(const MoveGeometry&, const std::string&)>& check) {
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 12; ++round) {
    for (uint64_t shift : shifts) {
      for (bool up : {true, false}) {
        const uint64_t low = 16 * kSector;
        const uint64_t length = 24 * 4096 + 1024;
        MoveGeometry m = up ? Move(low, low + shift, length, 4096, 2, 3)
                            : Move(low + shift, low, length, 4096, 2, 3);
        if (round >= first_copy_round) m.copy = RandomCopySet(RangeChunkCount(m), rng);
        check(m, fmt::format("shift {} {} round {}", shift, up ? "up" : "down", round));
      }
    }
  }
}

TEST(MovePlanTest, FirstOverwriterMatchesBruteForceWithACopySet) {
  const uint64_t shifts[] = {512, 4096, 4608, 12800, 40960};
  ForEachShiftedMove(20261123, shifts, 0, [](const MoveGeometry& m, const std::string& what) {
    ExpectFirstOverwritersMatch(m, what);
  });
}

// What a rollback must put back from the journal: every byte the forward pass writes (the
// copied chunks' destinations) outside the source range, sector by sector (inside it, what no
// copied chunk's source covers is unused: the rollback leaves it as written); more ranges than
// the journal keeps apart are joined only over bytes that are unwritten.
TEST(MovePlanTest, DestinationOutsideSourceMatchesBruteForce) {
  const uint64_t shifts[] = {512, 4096, 4608, 12800, 40960, 200 * 4096};
  ForEachShiftedMove(20261203, shifts, 1, [](const MoveGeometry& m, const std::string& what) {
    std::set<uint64_t> written;  // sectors
    for (uint64_t c = 0; c < ChunkCount(m); ++c) {
      const ChunkExtent e = ChunkExtentOf(m, c);
      for (uint64_t at = e.position_bytes; at < e.position_bytes + e.length_bytes; at += kSector) {
        written.insert((m.dest_bytes + at) / kSector);
      }
    }
    std::set<uint64_t> want;
    for (uint64_t sector : written) {
      const uint64_t at = sector * kSector;
      if (at < m.source_bytes || at >= m.source_bytes + m.length_bytes) want.insert(sector);
    }
    // A shift writes at most the shift outside its source.
    ASSERT_LE(want.size() * kSector, ShiftBytes(m)) << what;
    std::set<uint64_t> got;
    uint64_t previous_end = 0;
    for (const ByteExtent& r : DestinationOutsideSource(m)) {
      ASSERT_GT(r.length_bytes, 0u) << what;
      ASSERT_GE(r.offset_bytes, previous_end) << what;  // sorted, disjoint
      previous_end = r.end();
      for (uint64_t at = r.offset_bytes; at < r.end(); at += kSector) got.insert(at / kSector);
    }
    ASSERT_EQ(got, want) << what;
  });
  // A fragmented copy set far from its source: at most the ranges the journal keeps apart,
  // covering every byte to put back, and nothing outside the destination.
  MoveGeometry far = Move(0, 1 << 30, 1000 * 4096, 4096);
  std::vector<ChunkRun> runs;
  for (uint64_t c = 0; c < 1000; c += 3) runs.push_back({c, 1});
  Result<CopySet> copy = CopySet::FromRuns(runs, RangeChunkCount(far));
  ASSERT_TRUE(copy);
  far.copy = *copy;
  const std::vector<ByteExtent> joined = DestinationOutsideSource(far);
  ASSERT_EQ(joined.size(), kMaxDestinationOutsideSourceRanges);
  EXPECT_EQ(joined.front().offset_bytes, far.dest_bytes);
  EXPECT_EQ(joined.back().end(), far.dest_bytes + 999 * 4096 + 4096);
  for (uint64_t c = 0; c < 1000; c += 3) {
    const uint64_t at = far.dest_bytes + c * 4096;
    EXPECT_TRUE(std::any_of(
        joined.begin(), joined.end(),
        [&](const ByteExtent& r) { return r.offset_bytes <= at && at + 4096 <= r.end(); }))
        << "chunk " << c;
  }
}

// What the journal keeps for a rollback: the ranges DestinationOutsideSource names, up to
// kMaxDestinationOutsideSourceBytes; one sector more is refused, naming the bytes (exactly:
// "64.00 MiB" alone would not say that it is more than 64 MiB).
TEST(MovePlanTest, TheJournalKeepsAtMost64MiBOutsideTheSource) {
  // Forward by 64 MiB: the destination's last 64 MiB lie beyond the source.
  const MoveGeometry within = Move(kMiB, 65 * kMiB, 100 * kMiB, 4 * kMiB);
  Result<std::vector<ByteExtent>> kept = KeptDestinationOutsideSource(within);
  ASSERT_TRUE(kept) << kept.error().message;
  EXPECT_EQ(*kept, DestinationOutsideSource(within));
  ASSERT_EQ(kept->size(), 1u);
  EXPECT_EQ((*kept)[0].offset_bytes, 101 * kMiB);
  EXPECT_EQ((*kept)[0].length_bytes, kMaxDestinationOutsideSourceBytes);
  EXPECT_TRUE(CheckDestinationOutsideSource(within));
  // One sector further.
  const MoveGeometry beyond = Move(kMiB, 65 * kMiB + kSector, 100 * kMiB, 4 * kMiB);
  Result<std::vector<ByteExtent>> refused = KeptDestinationOutsideSource(beyond);
  ASSERT_FALSE(refused);
  const std::string want = fmt::format(
      "the move writes 64.00 MiB (67109376 bytes) outside its source (byte {} to {}), which a "
      "rollback must put back; the journal keeps at most 64 MiB of them: the move is refused; "
      "nothing was written",
      101 * kMiB, 165 * kMiB + kSector);
  EXPECT_EQ(refused.error().message, want);
  Status checked = CheckDestinationOutsideSource(beyond);
  ASSERT_FALSE(checked);
  EXPECT_EQ(checked.error().message, want);
}

TEST(MovePlanTest, CopySetMapsOrdinalsToChunks) {
  Result<CopySet> set = CopySet::FromRuns({{0, 2}, {2, 1}, {7, 3}}, 12);
  ASSERT_TRUE(set);
  ASSERT_EQ(set->runs().size(), 2u);  // touching runs merge
  EXPECT_EQ(set->Count(12), 6u);
  const uint64_t chunks[] = {0, 1, 2, 7, 8, 9};
  for (uint64_t k = 0; k < 6; ++k) EXPECT_EQ(set->ChunkOf(k), chunks[k]);
  EXPECT_EQ(set->OrdinalsBelow(0), 0u);
  EXPECT_EQ(set->OrdinalsBelow(3), 3u);
  EXPECT_EQ(set->OrdinalsBelow(6), 3u);
  EXPECT_EQ(set->OrdinalsBelow(8), 4u);
  EXPECT_EQ(set->OrdinalsBelow(12), 6u);
  // Every chunk selected is the plain move.
  Result<CopySet> all = CopySet::FromRuns({{0, 5}, {5, 7}}, 12);
  ASSERT_TRUE(all);
  EXPECT_TRUE(all->all());
  // Copied bytes: the range's short last chunk counts short.
  MoveGeometry m = Move(0, 4096, 10 * 4096 + 512, 4096);
  m.copy = *CopySet::FromRuns({{1, 1}, {10, 1}}, 11);
  EXPECT_EQ(ChunkCount(m), 2u);
  EXPECT_EQ(CopiedBytes(m), 4096u + 512u);
  EXPECT_EQ(ChunkExtentOf(m, 1).position_bytes, 10u * 4096);
  EXPECT_EQ(RangeChunkCount(m), 11u);
}

TEST(MovePlanTest, BadCopySetsAreRefused) {
  struct Case {
    std::vector<ChunkRun> runs;
    const char* expected;
  };
  const Case cases[] = {
      {{}, "no chunk"},
      {{{3, 0}}, "empty"},
      {{{5, 2}, {1, 1}}, "not sorted"},
      {{{1, 3}, {2, 2}}, "not sorted"},
      {{{9, 4}}, "beyond"},
      {{{UINT64_MAX, 2}}, "beyond"},
  };
  for (const Case& c : cases) {
    Result<CopySet> set = CopySet::FromRuns(c.runs, 12);
    ASSERT_FALSE(set) << c.expected;
    EXPECT_NE(set.error().message.find(c.expected), std::string::npos) << set.error().message;
  }
  MoveGeometry m = Move(4096, 8192, 65536, 4096);
  m.copy = *CopySet::FromRuns({{30, 4}}, 40);  // made for another range
  Status status = ValidateMove(m, 1 << 20, 512);
  ASSERT_FALSE(status);
  EXPECT_NE(status.error().message.find("beyond the 16 chunks"), std::string::npos)
      << status.error().message;
}

TEST(MovePlanTest, SavedCopiesFollowTheShift) {
  // Shift below a chunk: every chunk overwrites its own source.
  const MoveGeometry small = Move(63 * kSector, 64 * kSector, 32 * 4096, 4096, 2, 2);
  const Segment s = ForwardSegment(small);
  for (uint64_t i = 0; i < s.chunk_count; ++i) EXPECT_TRUE(NeedsSavedCopy(small, s, i));
  // Shift beyond ring_batches * chunks_per_batch chunks: the batch is committed before any
  // write reaches its source, so nothing is copied.
  const MoveGeometry large = Move(8 * kSector, 8 * kSector + 5 * 4096, 32 * 4096, 4096, 2, 2);
  const Segment l = ForwardSegment(large);
  for (uint64_t i = 0; i < l.chunk_count; ++i) EXPECT_FALSE(NeedsSavedCopy(large, l, i));
  // In between, exactly the chunks whose first overwriter is within the ring window.
  const MoveGeometry mid = Move(8 * kSector, 8 * kSector + 3 * 4096, 32 * 4096, 4096, 2, 2);
  const Segment d = ForwardSegment(mid);
  std::set<bool> seen;
  for (uint64_t i = 0; i < d.chunk_count; ++i) {
    const std::optional<uint64_t> w = FirstOverwriter(mid, d, i);
    const bool expected = w && *w / 2 < i / 2 + 2;
    EXPECT_EQ(NeedsSavedCopy(mid, d, i), expected) << "step " << i;
    seen.insert(expected);
  }
  EXPECT_EQ(seen.size(), 2u) << "the middle case should need some copies but not all";
}

MoveGeometry BenchMove() {  // scripts/bench-move's: 1 GiB from sector 63 to 2048
  MoveGeometry m;
  m.source_bytes = 63 * kSector;
  m.dest_bytes = 2048 * kSector;
  m.length_bytes = kGiB;
  return m;
}

void ExpectGeometry(const MoveGeometry& g, uint64_t chunk, uint32_t per_batch, uint32_t ring) {
  EXPECT_EQ(g.chunk_bytes, chunk);
  EXPECT_EQ(g.chunks_per_batch, per_batch);
  EXPECT_EQ(g.ring_batches, ring);
}

TEST(MovePlanTest, SmallShiftsOfSmallCopiesGetSmallChunksAndBatches) {
  // 290 MiB used in one run from the start (with a few KiB near the end, as ext4's backups):
  // 1 MiB chunks copy 291 MiB where 4 MiB ones copy 296.
  UsedMap used(kGiB);
  used.Add(0, 290 * kMiB, UsedReason::kAllocated);
  used.Add(kGiB - 6 * kMiB + 4096, 4096, UsedReason::kSuperblock);
  const MoveGeometry small = SizedForItsCopy(BenchMove(), used);
  ExpectGeometry(small, kMiB, 4, 8);
  EXPECT_EQ(CopiedBytes(small), 291 * kMiB);
  EXPECT_EQ(small.source_bytes, 63 * kSector);
  EXPECT_EQ(small.dest_bytes, 2048 * kSector);
  EXPECT_EQ(small.length_bytes, kGiB);
  // Moving down: the same shift, the same geometry.
  MoveGeometry down = BenchMove();
  std::swap(down.source_bytes, down.dest_bytes);
  ExpectGeometry(SizedForItsCopy(down, used), kMiB, 4, 8);
  // Every byte of 512 MiB: small; of 1 GiB, more than kSmallCopyBytes: the defaults.
  MoveGeometry half = BenchMove();
  half.length_bytes = kSmallCopyBytes;
  ExpectGeometry(SizedForItsCopy(half, std::nullopt), kMiB, 4, 8);
  EXPECT_TRUE(SizedForItsCopy(half, std::nullopt).copy.all());
  const MoveGeometry defaults;
  ExpectGeometry(SizedForItsCopy(BenchMove(), std::nullopt), defaults.chunk_bytes,
                 defaults.chunks_per_batch, defaults.ring_batches);
  // A shift of 4 MiB or more: the defaults, with the copy set at their chunk.
  MoveGeometry far = BenchMove();
  far.dest_bytes = far.source_bytes + kSmallShiftBytes;
  const MoveGeometry sized = SizedForItsCopy(far, used);
  ExpectGeometry(sized, defaults.chunk_bytes, defaults.chunks_per_batch, defaults.ring_batches);
  EXPECT_EQ(CopiedBytes(sized), 296 * kMiB);
}

TEST(MovePlanTest, AFragmentedUsedMapWritesOnlyTheShiftOutsideItsSource) {
  // 4 KiB used every 2 MiB: at 1 MiB, 512 runs of one chunk, each written a shift further,
  // onto unused blocks of the partition: nothing outside the source to keep, and 1 MiB chunks
  // copy half of what 4 MiB ones would (one run of every chunk).
  UsedMap used(kGiB);
  for (uint64_t at = 0; at < kGiB; at += 2 * kMiB) used.Add(at, 4096, UsedReason::kAllocated);
  const MoveGeometry sized = SizedForItsCopy(BenchMove(), used);
  ExpectGeometry(sized, kMiB, 4, 8);
  EXPECT_EQ(CopiedBytes(sized), kSmallCopyBytes);
  EXPECT_EQ(sized.copy.runs().size(), 512u);
  EXPECT_TRUE(DestinationOutsideSource(sized).empty());
  // 4 KiB every 4 MiB and the last 4 KiB (ext4's last backup): the last chunk is written past
  // the source's end: the shift, and only it. (Before, every run's shift counted: 257 runs
  // kept 249 MiB of destination, more than the mover keeps, and such a move was refused.)
  UsedMap sparse(kGiB);
  for (uint64_t at = 0; at < kGiB; at += 4 * kMiB) sparse.Add(at, 4096, UsedReason::kAllocated);
  sparse.Add(kGiB - 4096, 4096, UsedReason::kSuperblock);
  const MoveGeometry last = SizedForItsCopy(BenchMove(), sparse);
  ExpectGeometry(last, kMiB, 4, 8);
  EXPECT_EQ(last.copy.runs().size(), 257u);
  const std::vector<ByteExtent> outside = DestinationOutsideSource(last);
  ASSERT_EQ(outside.size(), 1u);
  EXPECT_EQ(outside[0].offset_bytes, last.source_bytes + kGiB);
  EXPECT_EQ(outside[0].length_bytes, ShiftBytes(last));
  // Moved down, the first chunk is written before the source's start.
  MoveGeometry down = BenchMove();
  std::swap(down.source_bytes, down.dest_bytes);
  const std::vector<ByteExtent> before = DestinationOutsideSource(SizedForItsCopy(down, sparse));
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0].offset_bytes, down.dest_bytes);
  EXPECT_EQ(before[0].length_bytes, ShiftBytes(down));
  // Every byte of 1 GiB: more than kSmallCopyBytes, the defaults.
  UsedMap full(kGiB);
  full.Add(0, kGiB, UsedReason::kAllocated);
  const MoveGeometry defaults;
  ExpectGeometry(SizedForItsCopy(BenchMove(), full), defaults.chunk_bytes,
                 defaults.chunks_per_batch, defaults.ring_batches);
}

TEST(MovePlanTest, ValidationNamesWhatIsWrong) {
  const uint64_t size = 1 << 20;
  struct Case {
    MoveGeometry move;
    std::vector<TableUpdate> table;
    const char* expected;  ///< substring of the error, or nullptr when valid
  };
  const std::vector<uint8_t> sector(512, 1);
  const Case cases[] = {
      {Move(4096, 8192, 65536, 4096), {}, nullptr},
      {Move(4096, 4096, 65536, 4096), {}, "nothing to move"},
      {Move(4096, 8192, 0, 4096), {}, "a move of 0 bytes from byte 4096 to byte 8192"},
      // A step that moves no data (a shrink) writes only its updates, anywhere on the disk.
      {Move(4096, 4096, 0, 4096), {{8192, sector, sector}}, nullptr},
      {Move(0, 0, 0, 4096), {{0, sector, sector}, {4096, sector, sector}}, nullptr},
      {Move(4100, 8192, 65536, 4096), {}, "source offset 4100 is not a multiple"},
      {Move(4096, 8192, 1000, 4096), {}, "length 1000"},
      {Move(4096, size - 4096, 65536, 4096), {}, "destination range"},
      {Move(size - 4096, 8192, 65536, 4096), {}, "source range"},
      {Move(4096, 8192, 65536, 6000), {}, "chunk size 6000"},
      {Move(4096, 8192, 65536, 4096, 1, 1), {}, "at least 2 batches"},
      {Move(4096, 8192, 65536, 4096), {{0, sector, sector}}, nullptr},
      // In the vacated part of the source (4096..8191): allowed; in the destination: not.
      {Move(4096, 8192, 65536, 4096), {{4096, sector, sector}}, nullptr},
      {Move(4096, 8192, 65536, 4096), {{8192, sector, sector}}, "overlaps the destination"},
      {Move(4096, 8192, 65536, 4096),
       {{65536 + 8192 - 512, sector, sector}},
       "overlaps the destination"},
      {Move(8192, 4096, 65536, 4096), {{65536 + 4096, sector, sector}}, nullptr},
      {Move(8192, 4096, 65536, 4096),
       {{65536 + 4096 - 512, sector, sector}},
       "overlaps the destination"},
      {Move(4096, 8192, 65536, 4096), {{0, sector, {}}}, "equally long"},
      {Move(4096, 8192, 65536, 4096), {{100, sector, sector}}, "not aligned"},
      {Move(4096, 8192, 65536, 4096), {{0, sector, sector}, {0, sector, sector}}, "overlap"},
      {Move(4096, 8192, 65536, 4096), {{size, sector, sector}}, "beyond the device"},
  };
  for (const Case& c : cases) {
    Status status = ValidateMove(c.move, size, 512, c.table);
    if (c.expected == nullptr) {
      EXPECT_TRUE(status) << status.error().message;
    } else {
      ASSERT_FALSE(status) << c.expected;
      EXPECT_NE(status.error().message.find(c.expected), std::string::npos)
          << status.error().message;
    }
  }
}

}  // namespace
}  // namespace partalign
