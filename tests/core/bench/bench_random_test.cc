// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/bench/bench_random.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace partalign {
namespace {

TEST(SplitMix64Test, MatchesTheReferenceImplementation) {
  // First outputs of prng.di.unimi.it/splitmix64.c seeded with 1234567.
  SplitMix64 mix(1234567);
  EXPECT_EQ(mix.Next(), 6457827717110365317u);
  EXPECT_EQ(mix.Next(), 3203168211198807973u);
  EXPECT_EQ(mix.Next(), 9817491932198370423u);
}

TEST(Xoshiro256Test, MatchesTheReferenceImplementation) {
  // xoshiro256** 1.0 from the state {1, 2, 3, 4} (the rand_xoshiro crate's test vector).
  Xoshiro256 rng = Xoshiro256::FromState({1, 2, 3, 4});
  EXPECT_EQ(rng.Next(), 11520u);
  EXPECT_EQ(rng.Next(), 0u);
  EXPECT_EQ(rng.Next(), 1509978240u);
  EXPECT_EQ(rng.Next(), 1215971899390074240u);
}

TEST(Xoshiro256Test, SameSeedSameSequenceOtherSeedOtherSequence) {
  Xoshiro256 a(42), b(42), c(43);
  std::vector<uint64_t> va, vb, vc;
  for (int i = 0; i < 100; ++i) {
    va.push_back(a.Next());
    vb.push_back(b.Next());
    vc.push_back(c.Next());
  }
  EXPECT_EQ(va, vb);
  EXPECT_NE(va, vc);
}

TEST(Xoshiro256Test, BelowIsUniformAndInRange) {
  Xoshiro256 rng(7);
  constexpr uint64_t kBins = 10;
  constexpr int kDraws = 100000;
  std::vector<int> counts(kBins);
  for (int i = 0; i < kDraws; ++i) {
    uint64_t v = rng.Below(kBins);
    ASSERT_LT(v, kBins);
    ++counts[v];
  }
  // Chi-square with 9 degrees of freedom: 27.88 is its 0.999 quantile.
  double chi2 = 0;
  const double expected = static_cast<double>(kDraws) / kBins;
  for (int c : counts) chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi2, 27.88);
  EXPECT_EQ(rng.Below(1), 0u);
}

TEST(Xoshiro256Test, NormalHasMeanZeroAndUnitVariance) {
  Xoshiro256 rng(3);
  double sum = 0, sum2 = 0;
  constexpr int kDraws = 200000;
  for (int i = 0; i < kDraws; ++i) {
    double x = rng.NextNormal();
    sum += x;
    sum2 += x * x;
  }
  EXPECT_NEAR(sum / kDraws, 0.0, 0.01);
  EXPECT_NEAR(sum2 / kDraws, 1.0, 0.01);
}

TEST(OffsetGeneratorTest, RandomOffsetsAreAlignedAndInsideTheRange) {
  OffsetSpec spec{AccessOrder::kRandom, /*range_start=*/1000, /*range_bytes=*/1 << 20,
                  /*block_size=*/4096, /*offset_align=*/1536};
  Result<OffsetGenerator> gen = OffsetGenerator::Make(spec, 9);
  ASSERT_TRUE(gen);
  std::set<uint64_t> residues;
  uint64_t lowest = UINT64_MAX, highest = 0;
  for (int i = 0; i < 20000; ++i) {
    uint64_t off = gen->Next();
    ASSERT_EQ(off % 1536, 0u) << off;
    ASSERT_GE(off, 1000u);
    ASSERT_LE(off + 4096, 1000u + (1 << 20));
    residues.insert(off % 4096);
    lowest = std::min(lowest, off);
    highest = std::max(highest, off);
  }
  // Multiples of 1536 fall on all eight 512-byte positions of a 4 KiB page.
  EXPECT_EQ(residues.size(), 8u);
  EXPECT_EQ(lowest, 1536u);  // the first multiple of 1536 at or after byte 1000
  EXPECT_EQ(highest, (1000u + (1 << 20) - 4096) / 1536 * 1536);
}

TEST(OffsetGeneratorTest, SameSeedGivesTheSameOffsets) {
  OffsetSpec spec{AccessOrder::kRandom, 0, 1 << 30, 512, 512};
  OffsetGenerator a = *OffsetGenerator::Make(spec, 5);
  OffsetGenerator b = *OffsetGenerator::Make(spec, 5);
  OffsetGenerator c = *OffsetGenerator::Make(spec, 6);
  int same_as_c = 0;
  for (int i = 0; i < 1000; ++i) {
    uint64_t x = a.Next();
    ASSERT_EQ(x, b.Next());
    same_as_c += x == c.Next();
  }
  EXPECT_LT(same_as_c, 5);
}

TEST(OffsetGeneratorTest, SequentialAdvancesByBlockAndWraps) {
  OffsetSpec spec{AccessOrder::kSequential, 4096, 3 * 8192 + 100, 8192, 8192};
  OffsetGenerator gen = *OffsetGenerator::Make(spec, 1);
  // Aligned start 8192; blocks at 8192 and 16384 fit below 4096 + 24676 = 28772, 24576 does not.
  EXPECT_EQ(gen.Next(), 8192u);
  EXPECT_EQ(gen.Next(), 16384u);
  EXPECT_EQ(gen.Next(), 8192u);
}

TEST(OffsetGeneratorTest, AWindowCountsAlignmentsFromItsOrigin) {
  // A partition at sector 63 benchmarked through its disk: "4 KiB-aligned" means aligned
  // relative to its start, 32256 bytes into the disk, as on the partition's own device node.
  const uint64_t start = 63 * 512;
  for (AccessOrder order : {AccessOrder::kRandom, AccessOrder::kSequential}) {
    OffsetGenerator gen =
        *OffsetGenerator::Make({order, start, 1 << 20, 4096, 4096, /*origin=*/start}, 3);
    for (int i = 0; i < 1000; ++i) {
      const uint64_t offset = gen.Next();
      ASSERT_EQ((offset - start) % 4096, 0u) << offset;
      ASSERT_GE(offset, start);
      ASSERT_LE(offset + 4096, start + (1 << 20));
    }
  }
  // Counted from byte 0 of the disk, the first aligned offset lies after the partition start.
  EXPECT_EQ(
      OffsetGenerator::Make({AccessOrder::kSequential, start, 1 << 20, 4096, 4096}, 1)->Next(),
      32768u);
  EXPECT_FALSE(OffsetGenerator::Make({AccessOrder::kRandom, 4096, 1 << 20, 4096, 4096, 8192}, 1));
}

TEST(OffsetGeneratorTest, RangeTooSmallOrZeroSizesAreErrors) {
  EXPECT_FALSE(OffsetGenerator::Make({AccessOrder::kRandom, 0, 4095, 4096, 4096}, 1));
  EXPECT_FALSE(OffsetGenerator::Make({AccessOrder::kRandom, 1, 4096, 4096, 4096}, 1));
  EXPECT_FALSE(OffsetGenerator::Make({AccessOrder::kRandom, 0, 1 << 20, 0, 4096}, 1));
  EXPECT_FALSE(OffsetGenerator::Make({AccessOrder::kRandom, 0, 1 << 20, 4096, 0}, 1));
  EXPECT_TRUE(OffsetGenerator::Make({AccessOrder::kRandom, 0, 4096, 4096, 4096}, 1));
}

}  // namespace
}  // namespace partalign
