// SPDX-License-Identifier: GPL-3.0-or-later
// Seeded pseudo-random numbers and I/O offsets for the benchmark. Plain values: the same seed
// always gives the same sequence, on every machine, so a run can be repeated offset for offset.
#pragma once

#include <array>
#include <cstdint>

#include "partalign/util/result.h"

namespace partalign {

/// SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", 2014):
/// turns any 64-bit seed, including 0, into well-mixed state words for Xoshiro256.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next();

 private:
  uint64_t state_;
};

/// xoshiro256** (Blackman and Vigna, 2018): fast, 256 bits of state, passes BigCrush. Not for
/// cryptography. Copyable: copying the generator forks an identical stream.
class Xoshiro256 {
 public:
  explicit Xoshiro256(uint64_t seed);
  /// A generator with exactly this state (not all zero), for the reference test vectors.
  static Xoshiro256 FromState(const std::array<uint64_t, 4>& state);
  uint64_t Next();
  /// Uniform in [0, bound) without modulo bias (rejection of the short last interval);
  /// `bound` must be > 0.
  uint64_t Below(uint64_t bound);
  /// Uniform in [0, 1) with 53 random bits.
  double NextDouble();
  /// Standard normal (Box-Muller); for synthetic samples in tests and the fake engine.
  double NextNormal();

 private:
  Xoshiro256() = default;
  std::array<uint64_t, 4> s_{};
};

/// Derives the seed of an independent stream (cell `index` of a run seeded `seed`).
uint64_t DeriveSeed(uint64_t seed, uint64_t index);

enum class AccessOrder { kRandom, kSequential };

/// Where the I/Os of one workload go: inside [range_start, range_start + range_bytes), each
/// `block_size` long. Random offsets are `origin` plus multiples of `offset_align` (the origin
/// is byte 0 of the target, like fio's blockalign, or the start of a partition benchmarked
/// through its disk), drawn uniformly with replacement. Sequential offsets start at the first
/// aligned offset of the range and advance by `block_size`, wrapping to the start when the next
/// block would pass the end.
struct OffsetSpec {
  AccessOrder order = AccessOrder::kRandom;
  uint64_t range_start = 0;
  uint64_t range_bytes = 0;
  uint64_t block_size = 4096;
  uint64_t offset_align = 4096;
  /// At or before range_start.
  uint64_t origin = 0;
};

class OffsetGenerator {
 public:
  /// Fails when the range cannot hold one aligned block, a size is 0 or the origin lies after
  /// the range's start.
  static Result<OffsetGenerator> Make(const OffsetSpec& spec, uint64_t seed);

  /// The next offset in bytes. No allocation, no failure: safe in the I/O loop.
  uint64_t Next();

  const OffsetSpec& spec() const { return spec_; }

 private:
  OffsetGenerator(const OffsetSpec& spec, uint64_t seed, uint64_t first, uint64_t slots)
      : spec_(spec), rng_(seed), first_(first), slots_(slots), cursor_(first) {}

  OffsetSpec spec_;
  Xoshiro256 rng_;
  uint64_t first_;  ///< the lowest usable offset: the first aligned one in the range
  uint64_t slots_;  ///< random: number of aligned offsets a block fits at
  uint64_t cursor_;
};

}  // namespace partalign
