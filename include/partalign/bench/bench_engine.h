// The small interface between the benchmark's pure core and the I/O engines of the edge
// (src/io/bench/uring_engine.h, src/io/bench/psync_engine.h) or a fake one in tests. The engine
// owns the clock; the core only sees the numbers an engine reports.
#pragma once

#include <cstdint>
#include <string>

#include "partalign/bench/bench_plan.h"
#include "partalign/bench/bench_random.h"
#include "partalign/bench/latency_histogram.h"
#include "partalign/util/result.h"

namespace partalign {

/// One trial of one cell: keep `queue_depth` I/Os of `block_size` bytes in flight for
/// `duration_ns`, at the offsets the generator yields.
struct TrialSpec {
  IoPattern pattern = IoPattern::kRandRead;
  uint64_t block_size = 4096;
  uint32_t queue_depth = 1;
  uint64_t duration_ns = 0;
};

/// The measurement window of a trial starts when the first I/Os are submitted and ends at the
/// first completion seen at or after the deadline; `ios` and `bytes` count the I/Os completed
/// inside it (at least one), so the queue is full for the whole window. I/Os still in flight
/// then are waited for but not counted; `wall_ns` includes that wait.
struct TrialResult {
  uint64_t ios = 0;
  uint64_t bytes = 0;
  uint64_t measured_ns = 0;
  uint64_t wall_ns = 0;
};

class BenchEngine {
 public:
  virtual ~BenchEngine() = default;
  /// "io_uring", "psync" or a fake's name, for the report.
  virtual std::string name() const = 0;
  /// Runs one trial, recording the latency of every counted I/O in `latency`. Fails on an I/O
  /// error or a short transfer, naming the offset.
  virtual Result<TrialResult> RunTrial(const TrialSpec& spec, OffsetGenerator& offsets,
                                       LatencyHistogram& latency) = 0;
};

}  // namespace partalign
