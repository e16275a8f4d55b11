// SPDX-License-Identifier: GPL-3.0-or-later
// Alignment arithmetic in bytes, and partalign's own recommendation: the grain and offset at
// which partitions should start on a given topology, with the reasons.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partalign/topology/topology.h"
#include "partalign/util/result.h"

namespace partalign {

/// Largest multiple of `grain` that is <= value (grain > 0).
constexpr uint64_t AlignDown(uint64_t value, uint64_t grain) { return value / grain * grain; }
/// Smallest multiple of `grain` that is >= value (grain > 0).
constexpr uint64_t AlignUp(uint64_t value, uint64_t grain) {
  return (value + grain - 1) / grain * grain;
}
constexpr uint64_t Gcd(uint64_t a, uint64_t b) {
  while (b != 0) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}
/// Least common multiple; 0 if either is 0. Wraps when it does not fit: see CheckedLcm.
constexpr uint64_t Lcm(uint64_t a, uint64_t b) { return a == 0 || b == 0 ? 0 : a / Gcd(a, b) * b; }
/// Least common multiple, or nullopt when it does not fit in 64 bits; 0 if either is 0.
constexpr std::optional<uint64_t> CheckedLcm(uint64_t a, uint64_t b) {
  if (a == 0 || b == 0) return uint64_t{0};
  uint64_t out = 0;
  if (__builtin_mul_overflow(a / Gcd(a, b), b, &out)) return std::nullopt;
  return out;
}

/// Where partitions should start: byte offsets `offset_bytes + k * grain_bytes`.
struct Alignment {
  uint64_t grain_bytes = 0;
  /// In [0, grain_bytes): the alignment offset of the device, so that starts land on physical
  /// sector boundaries of drives whose LBA 0 is not physically aligned.
  uint64_t offset_bytes = 0;

  bool IsAligned(uint64_t byte_offset) const {
    return byte_offset >= offset_bytes && (byte_offset - offset_bytes) % grain_bytes == 0;
  }
  /// The first aligned byte offset >= value.
  uint64_t Up(uint64_t value) const;
  /// The last aligned byte offset <= value (offset_bytes when value < offset_bytes is
  /// impossible to satisfy: callers check value >= offset_bytes).
  uint64_t Down(uint64_t value) const;
  bool operator==(const Alignment&) const = default;
};

/// The largest optimal I/O size partalign treats as a real stripe. Values above are not
/// stripes anyone uses for partition placement and would waste space at the start.
inline constexpr uint64_t kMaxSaneOptimalIo = 256ull * 1024 * 1024;

/// True when the optimal I/O size is a value worth aligning to: reported, not the 0xFFFF
/// bridge value, a multiple of the physical sector and of the minimum I/O size, not absurd.
bool IsSaneOptimalIo(const Topology& topology);

struct AlignmentRecommendation {
  Alignment alignment;
  /// Short sentences, each naming the values it used, in the order the rule applied them.
  std::vector<std::string> reasons;
};

/// Refuses a grain (the requested one, or 1 MiB) whose least common multiple with what the
/// topology requires (physical sector, minimum I/O, sane optimal I/O) does not fit in 64 bits,
/// naming the values: "--grain 1000000 with physical sector 4096 and minimum I/O 4294966784
/// needs a grain larger than 2^64 bytes". RecommendAlignment assumes this passed.
Status CheckGrainFits(const Topology& topology, std::optional<uint64_t> user_grain_bytes = {});

/// partalign's rule: 1 MiB (or `user_grain_bytes`), raised to a common multiple of the physical
/// sector size, the minimum I/O size and a sane optimal I/O size, shifted by the alignment
/// offset. Never aligns to the bogus 33553920; never returns a grain smaller than the topology
/// requires (a user grain that is not a multiple of the requirement is raised to the least
/// common multiple, and a reason says so).
AlignmentRecommendation RecommendAlignment(const Topology& topology,
                                           std::optional<uint64_t> user_grain_bytes = {});

}  // namespace partalign
