// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/bench/latency_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace partalign {

size_t LatencyHistogram::BucketOf(uint64_t ns) {
  if (ns < 2 * kSubBuckets) return static_cast<size_t>(ns);
  const int exponent = std::bit_width(ns) - 1;  // 2^exponent <= ns, exponent >= kSubBits + 1
  if (exponent >= kMaxExponent) return kBuckets - 1;
  const int shift = exponent - kSubBits;
  // Group `exponent` starts at bucket (exponent - kSubBits + 1) * 64; ns >> shift is in [64, 128).
  return static_cast<size_t>(exponent - kSubBits + 1) * kSubBuckets + ((ns >> shift) - kSubBuckets);
}

uint64_t LatencyHistogram::BucketLow(size_t bucket) {
  if (bucket < 2 * kSubBuckets) return bucket;
  const uint64_t group = bucket / kSubBuckets;  // >= 2
  const int shift = static_cast<int>(group) - 1;
  return (kSubBuckets + bucket % kSubBuckets) << shift;
}

uint64_t LatencyHistogram::BucketHigh(size_t bucket) {
  if (bucket + 1 >= kBuckets) return UINT64_MAX;
  return BucketLow(bucket + 1);
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (size_t i = 0; i < kBuckets; ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  max_ = std::max(max_, other.max_);
  min_ = std::min(min_, other.min_);
}

double LatencyHistogram::Quantile(double fraction) const {
  if (count_ == 0) return 0.0;
  fraction = std::clamp(fraction, 0.0, 1.0);
  const uint64_t rank = std::max<uint64_t>(
      1, static_cast<uint64_t>(std::ceil(fraction * static_cast<double>(count_))));
  uint64_t seen = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    seen += buckets_[i];
    if (seen >= rank) {
      double mid =
          i < 2 * kSubBuckets
              ? static_cast<double>(i)
              : (static_cast<double>(BucketLow(i)) + static_cast<double>(BucketHigh(i) - 1)) / 2.0;
      return std::clamp(mid, static_cast<double>(min()), static_cast<double>(max_));
    }
  }
  return static_cast<double>(max_);
}

}  // namespace partalign
