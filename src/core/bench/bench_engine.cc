// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/bench/bench_engine.h"

namespace partalign {

uint64_t TrialResult::ios() const {
  uint64_t total = 0;
  for (const StreamResult& s : streams) total += s.ios;
  return total;
}

uint64_t TrialResult::bytes() const {
  uint64_t total = 0;
  for (const StreamResult& s : streams) total += s.bytes;
  return total;
}

Result<TrialResult> RunSingleTrial(BenchEngine& engine, IoPattern pattern, uint64_t block_size,
                                   uint32_t queue_depth, uint64_t duration_ns,
                                   OffsetGenerator& offsets, LatencyHistogram& latency) {
  const TrialStream stream{pattern, block_size, &offsets, &latency};
  return engine.RunTrial({{&stream, 1}, queue_depth, duration_ns, {}});
}

}  // namespace partalign
