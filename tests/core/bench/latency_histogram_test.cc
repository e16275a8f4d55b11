// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/bench/latency_histogram.h"

#include <gtest/gtest.h>

#include <cmath>

#include "partalign/bench/bench_random.h"

namespace partalign {
namespace {

TEST(LatencyHistogramTest, SmallValuesAreExact) {
  for (uint64_t v = 0; v < 128; ++v) {
    EXPECT_EQ(LatencyHistogram::BucketOf(v), v);
    EXPECT_EQ(LatencyHistogram::BucketLow(v), v);
    EXPECT_EQ(LatencyHistogram::BucketHigh(v), v + 1);
  }
}

TEST(LatencyHistogramTest, BucketsTileTheRangeWithTheDocumentedError) {
  // Every value lies in its bucket, and the bucket's midpoint is within 1/128 of it.
  Xoshiro256 rng(11);
  for (int i = 0; i < 100000; ++i) {
    const int bits = 7 + static_cast<int>(rng.Below(33));  // values from 2^7 to 2^40
    const uint64_t v = (uint64_t{1} << (bits - 1)) + rng.Below(uint64_t{1} << (bits - 1));
    const size_t b = LatencyHistogram::BucketOf(v);
    ASSERT_LT(b, LatencyHistogram::kBuckets);
    const uint64_t low = LatencyHistogram::BucketLow(b);
    const uint64_t high = LatencyHistogram::BucketHigh(b);
    ASSERT_LE(low, v);
    ASSERT_LT(v, high);
    const double mid = (static_cast<double>(low) + static_cast<double>(high - 1)) / 2;
    ASSERT_LE(std::fabs(mid - static_cast<double>(v)) / static_cast<double>(v), 1.0 / 128) << v;
  }
  for (size_t b = 0; b + 1 < LatencyHistogram::kBuckets; ++b) {
    ASSERT_EQ(LatencyHistogram::BucketHigh(b), LatencyHistogram::BucketLow(b + 1)) << b;
  }
}

TEST(LatencyHistogramTest, HugeValuesShareTheLastBucket) {
  EXPECT_EQ(LatencyHistogram::BucketOf(UINT64_MAX), LatencyHistogram::kBuckets - 1);
  EXPECT_EQ(LatencyHistogram::BucketOf(uint64_t{1} << 40), LatencyHistogram::kBuckets - 1);
  LatencyHistogram h;
  h.Record(uint64_t{1} << 50);
  EXPECT_EQ(h.Quantile(0.5), static_cast<double>(uint64_t{1} << 50));  // clamped to the max
}

TEST(LatencyHistogramTest, QuantilesOfAUniformSampleAreWithinTheErrorBound) {
  LatencyHistogram h;
  for (uint64_t v = 1; v <= 100000; ++v) h.Record(v * 10);  // 10 ns .. 1 ms
  EXPECT_EQ(h.count(), 100000u);
  EXPECT_EQ(h.min(), 10u);
  EXPECT_EQ(h.max(), 1000000u);
  EXPECT_NEAR(h.mean(), 500005.0, 1e-6);
  EXPECT_NEAR(h.Quantile(0.5), 500000, 500000 / 128.0);
  EXPECT_NEAR(h.Quantile(0.99), 990000, 990000 / 128.0);
  EXPECT_NEAR(h.Quantile(1.0), 1000000, 1000000 / 128.0);
}

TEST(LatencyHistogramTest, MergeAddsCounts) {
  LatencyHistogram a, b;
  for (int i = 0; i < 100; ++i) a.Record(1000);
  for (int i = 0; i < 300; ++i) b.Record(9000);
  a.Merge(b);
  EXPECT_EQ(a.count(), 400u);
  EXPECT_EQ(a.min(), 1000u);
  EXPECT_EQ(a.max(), 9000u);
  EXPECT_NEAR(a.Quantile(0.2), 1000, 1000 / 128.0);
  EXPECT_NEAR(a.Quantile(0.5), 9000, 9000 / 128.0);
}

TEST(LatencyHistogramTest, EmptyHistogramReportsZero) {
  LatencyHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.Quantile(0.5), 0.0);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.mean(), 0.0);
}

}  // namespace
}  // namespace partalign
