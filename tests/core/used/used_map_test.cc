// SPDX-License-Identifier: GPL-3.0-or-later
// The used map: ranges merge whatever order they come in, reasons survive merging, bytes are
// counted once, and rounding to chunks covers every used byte with as few runs as possible.
#include "partalign/used/used_map.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace partalign {
namespace {

TEST(UsedMapTest, RangesAreSortedAndMergedWithTheirReasons) {
  UsedMap map(1000);
  map.Add(500, 100, UsedReason::kAllocated);
  map.Add(0, 10, UsedReason::kHead);
  map.Add(550, 100, UsedReason::kJournal);    // overlaps the first
  map.Add(650, 10, UsedReason::kAllocated);   // touches the merged one
  map.Add(990, 100, UsedReason::kAllocated);  // clipped at the end
  map.Add(2000, 5, UsedReason::kAllocated);   // beyond: ignored
  map.Add(20, 0, UsedReason::kAllocated);     // empty: ignored
  const std::vector<UsedRange> expected = {
      {0, 10, ReasonBit(UsedReason::kHead)},
      {500, 160, ReasonBit(UsedReason::kAllocated) | ReasonBit(UsedReason::kJournal)},
      {990, 10, ReasonBit(UsedReason::kAllocated)},
  };
  EXPECT_EQ(map.ranges(), expected);
  EXPECT_EQ(map.used_bytes(), 180u);
  const auto by_reason = map.BytesByReason();
  EXPECT_EQ(by_reason[static_cast<size_t>(UsedReason::kAllocated)], 100u + 10u + 10u);
  EXPECT_EQ(by_reason[static_cast<size_t>(UsedReason::kJournal)], 100u);
  EXPECT_EQ(by_reason[static_cast<size_t>(UsedReason::kHead)], 10u);
  EXPECT_FALSE(map.IsWhole());
}

TEST(UsedMapTest, WholeMapsSayWhy) {
  const UsedMap map = UsedMap::Whole(4096, "crypto_LUKS: the contents are opaque");
  EXPECT_TRUE(map.IsWhole());
  ASSERT_EQ(map.notes().size(), 1u);
  EXPECT_EQ(map.ranges().front().reasons, ReasonBit(UsedReason::kWhole));
}

TEST(UsedMapTest, ChunkRunsCoverEveryUsedByteAndNothingElse) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 50; ++round) {
    const uint64_t length = 1 + rng() % 200000;
    const uint64_t chunk = 4096;
    UsedMap map(length);
    std::vector<bool> used(length, false);
    for (int i = 0; i < 20; ++i) {
      const uint64_t at = rng() % length;
      const uint64_t n = rng() % 9000;
      map.Add(at, n, static_cast<UsedReason>(rng() % kUsedReasonCount));
      for (uint64_t b = at; b < std::min(length, at + n); ++b) used[b] = true;
    }
    const std::vector<ChunkRun> runs = ChunkRunsOf(map, chunk);
    const uint64_t chunks = (length + chunk - 1) / chunk;
    std::vector<bool> selected(chunks, false);
    for (size_t r = 0; r < runs.size(); ++r) {
      ASSERT_GT(runs[r].chunk_count, 0u);
      if (r > 0) {
        ASSERT_GT(runs[r].first_chunk, runs[r - 1].first_chunk + runs[r - 1].chunk_count)
            << "runs must be sorted, disjoint and not touching";
      }
      for (uint64_t c = 0; c < runs[r].chunk_count; ++c) selected[runs[r].first_chunk + c] = true;
    }
    uint64_t used_bytes = 0;
    for (uint64_t c = 0; c < chunks; ++c) {
      bool any = false;
      for (uint64_t b = c * chunk; b < std::min(length, (c + 1) * chunk); ++b) {
        any = any || used[b];
        used_bytes += used[b] ? 1 : 0;
      }
      EXPECT_EQ(selected[c], any) << "chunk " << c << " round " << round;
    }
    EXPECT_EQ(map.used_bytes(), used_bytes);
    EXPECT_EQ(ChunkTotal(runs),
              static_cast<uint64_t>(std::count(selected.begin(), selected.end(), true)));
  }
}

}  // namespace
}  // namespace partalign
