// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/bench/bench_random.h"

#include <cmath>
#include <numbers>

#include <fmt/format.h>

namespace partalign {
namespace {

constexpr uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

uint64_t SplitMix64::Next() {
  // Constants from the reference implementation (prng.di.unimi.it/splitmix64.c).
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Xoshiro256::Xoshiro256(uint64_t seed) {
  // The authors' recommended seeding: fill the state from SplitMix64, never all zero.
  SplitMix64 mix(seed);
  for (uint64_t& word : s_) word = mix.Next();
}

Xoshiro256 Xoshiro256::FromState(const std::array<uint64_t, 4>& state) {
  Xoshiro256 rng;
  rng.s_ = state;
  return rng;
}

uint64_t Xoshiro256::Next() {
  // xoshiro256** 1.0, the shift and rotation constants of the paper.
  const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

uint64_t Xoshiro256::Below(uint64_t bound) {
  // Values below `threshold` belong to an incomplete last interval of 2^64 mod bound numbers;
  // rejecting them makes every residue equally likely.
  const uint64_t threshold = (0 - bound) % bound;
  for (;;) {
    uint64_t r = Next();
    if (r >= threshold) return r % bound;
  }
}

double Xoshiro256::NextDouble() {
  // The top 53 bits fill a double's mantissa exactly.
  return static_cast<double>(Next() >> 11) * 0x1.0p-53;
}

double Xoshiro256::NextNormal() {
  // Box-Muller; 1 - u keeps the logarithm's argument in (0, 1].
  const double u = 1.0 - NextDouble();
  const double v = NextDouble();
  return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * std::numbers::pi * v);
}

uint64_t DeriveSeed(uint64_t seed, uint64_t index) {
  SplitMix64 mix(seed ^ (index * 0xd1b54a32d192ed03ULL));
  return mix.Next();
}

Result<OffsetGenerator> OffsetGenerator::Make(const OffsetSpec& spec, uint64_t seed) {
  if (spec.block_size == 0 || spec.offset_align == 0) {
    return MakeError("block size and offset alignment must be greater than 0");
  }
  if (spec.origin > spec.range_start) {
    return MakeError(fmt::format("the offset origin {} lies after the range's start {}",
                                 spec.origin, spec.range_start));
  }
  const uint64_t end = spec.range_start + spec.range_bytes;
  const uint64_t first = spec.origin + (spec.range_start - spec.origin + spec.offset_align - 1) /
                                           spec.offset_align * spec.offset_align;
  if (end < first || end - first < spec.block_size) {
    return MakeError(
        fmt::format("a {}-byte block aligned to {} bytes does not fit in {} bytes at byte {}",
                    spec.block_size, spec.offset_align, spec.range_bytes, spec.range_start));
  }
  // Aligned offsets o with first <= o and o + block_size <= end.
  const uint64_t slots = (end - spec.block_size - first) / spec.offset_align + 1;
  return OffsetGenerator(spec, seed, first, slots);
}

uint64_t OffsetGenerator::Next() {
  if (spec_.order == AccessOrder::kRandom) {
    return first_ + rng_.Below(slots_) * spec_.offset_align;
  }
  const uint64_t offset = cursor_;
  cursor_ += spec_.block_size;
  if (cursor_ + spec_.block_size > spec_.range_start + spec_.range_bytes) cursor_ = first_;
  return offset;
}

}  // namespace partalign
