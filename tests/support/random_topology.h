// SPDX-License-Identifier: GPL-3.0-or-later
// Seeded random topologies from values that occur in practice (alignment-heuristics.md §1):
// 512e/4Kn sectors, RAID chunks and stripes, the 0xFFFF bridge value, alignment offsets, disks
// from a few MiB to 4 TiB with an extra share near libfdisk's small-device thresholds (4
// grains, 4 first LBAs). Shared by the explain and layout sweeps (tests/tools/). Header-only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "partalign/topology/topology.h"

namespace partalign::test {

/// A deterministic generator: mt19937_64's sequence is fixed by the standard; the mapping to
/// ranges is ours (std's distributions differ between library implementations).
class Draw {
 public:
  explicit Draw(uint64_t seed) : rng_(seed) {}
  uint64_t Below(uint64_t n) { return rng_() % n; }
  template <typename T>
  T Pick(const std::vector<T>& v) {
    return v[Below(v.size())];
  }
  bool Chance(int percent) { return Below(100) < static_cast<uint64_t>(percent); }
  /// Log-uniform in [lo, hi].
  uint64_t LogUniform(uint64_t lo, uint64_t hi) {
    double a = std::log2(static_cast<double>(lo));
    double b = std::log2(static_cast<double>(hi));
    double x = a + (b - a) * static_cast<double>(Below(1000000)) / 1e6;
    return std::clamp(static_cast<uint64_t>(std::exp2(x)), lo, hi);
  }

 private:
  std::mt19937_64 rng_;
};

struct TopologyDrawOptions {
  uint64_t min_disk_bytes = 16ull << 20;
  uint64_t max_disk_bytes = 4ull << 40;
  /// Percent of disks drawn just around libfdisk's 4-grain threshold.
  int threshold_percent = 25;
};

/// One topology (origin kAssumed: a block device reporting these values).
inline Topology DrawTopology(Draw& d, const TopologyDrawOptions& o = {}) {
  constexpr uint64_t kKiB = 1024, kMiB = 1024 * kKiB;
  Topology t;
  t.origin = TopologyOrigin::kAssumed;
  t.logical_sector_size = d.Chance(75) ? 512 : 4096;
  const uint64_t lbs = t.logical_sector_size;
  t.physical_sector_size = lbs == 4096 ? 4096 : d.Pick<uint64_t>({512, 4096, 4096});
  const uint64_t pbs = t.physical_sector_size;
  // Never 0: the kernel reports at least the logical sector (blk_validate_limits), and --assume
  // refuses min-io=0 as a topology no device has.
  t.minimum_io_size = d.Pick<uint64_t>({lbs, lbs, pbs, pbs, pbs, 64 * kKiB, 128 * kKiB, 192 * kKiB,
                                        256 * kKiB, 384 * kKiB, 512 * kKiB, kMiB});
  const uint64_t min_io = t.minimum_io_size;
  std::vector<uint64_t> opts{0,      0,        0,           kMiB,       4 * kMiB, 33553920,
                             196608, 33550336, 1536 * kKiB, 768 * kKiB, 3 * lbs,  8 * kMiB};
  if (min_io != 0) {
    for (uint64_t m : {1, 2, 3, 4, 6}) opts.push_back(m * min_io);
  }
  t.optimal_io_size = d.Pick(opts);
  if (t.optimal_io_size % lbs != 0) t.optimal_io_size = 0;  // the kernel reports sectors
  if (pbs > lbs && d.Chance(20)) {
    t.alignment_offset = d.Chance(50) ? pbs - lbs : lbs * (1 + d.Below(pbs / lbs - 1));
  }
  uint64_t size;
  if (d.Chance(o.threshold_percent)) {
    uint64_t io = std::max<uint64_t>({t.optimal_io_size, min_io, kMiB});
    uint64_t edge = 4 * io;
    size = edge - lbs + d.Below(3) * lbs;  // one sector below, at, or above the edge
  } else {
    size = d.LogUniform(o.min_disk_bytes, o.max_disk_bytes);
  }
  size = std::max(size, o.min_disk_bytes);
  t.size_bytes = size / lbs * lbs;
  return t;
}

}  // namespace partalign::test
