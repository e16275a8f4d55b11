// SPDX-License-Identifier: GPL-3.0-or-later
// Per-I/O latency in a fixed log-linear histogram: recording is an index computation and an
// increment (no allocation in the I/O loop), and histograms of many trials merge by addition.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace partalign {

/// Nanosecond latencies, bucketed like fio's completion-latency histogram (fio stat.h,
/// FIO_IO_U_PLAT_BITS): values below 2^(kSubBits + 1) = 128 ns get one bucket each; every range
/// [2^e, 2^(e+1)) above is split into 2^kSubBits = 64 equal buckets. A bucket stands for its
/// midpoint, so a reported percentile is within 1/2^(kSubBits + 1) = 1/128 (0.8%) of the
/// recorded value it stands for. Values of 2^kMaxExponent ns (about 18 minutes) and more share
/// the last bucket.
class LatencyHistogram {
 public:
  static constexpr int kSubBits = 6;
  static constexpr uint64_t kSubBuckets = uint64_t{1} << kSubBits;
  static constexpr int kMaxExponent = 40;
  /// Linear part (2 * 64) + 64 buckets for each exponent from 7 to kMaxExponent - 1.
  static constexpr size_t kBuckets = static_cast<size_t>(kMaxExponent - kSubBits + 1) * kSubBuckets;

  void Record(uint64_t nanoseconds) {
    ++buckets_[BucketOf(nanoseconds)];
    ++count_;
    sum_ += nanoseconds;
    if (nanoseconds > max_) max_ = nanoseconds;
    if (nanoseconds < min_) min_ = nanoseconds;
  }

  void Merge(const LatencyHistogram& other);

  uint64_t count() const { return count_; }
  /// Exact minimum and maximum (0 when empty).
  uint64_t min() const { return count_ ? min_ : 0; }
  uint64_t max() const { return max_; }
  double mean() const { return count_ ? static_cast<double>(sum_) / count_ : 0.0; }

  /// The `fraction` quantile (0 < fraction <= 1) as the midpoint of the bucket that holds the
  /// ceil(fraction * count)-th smallest value, clamped to [min, max]; 0 when empty.
  double Quantile(double fraction) const;

  static size_t BucketOf(uint64_t nanoseconds);
  /// The smallest value that falls into `bucket`, and one past the largest.
  static uint64_t BucketLow(size_t bucket);
  static uint64_t BucketHigh(size_t bucket);

 private:
  std::array<uint64_t, kBuckets> buckets_{};
  uint64_t count_ = 0;
  uint64_t sum_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
};

}  // namespace partalign
