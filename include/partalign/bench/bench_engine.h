// SPDX-License-Identifier: GPL-3.0-or-later
// The small interface between the benchmark's pure core and the I/O engines of the edge
// (src/io/bench/uring_engine.h, src/io/bench/psync_engine.h) or a fake one in tests. The engine
// owns the clock; the core only sees the numbers an engine reports.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "partalign/bench/bench_plan.h"
#include "partalign/bench/bench_random.h"
#include "partalign/bench/latency_histogram.h"
#include "partalign/util/result.h"

namespace partalign {

/// One cell's I/Os inside a trial: what they do, how long each is, where they go (the cell's
/// own offset stream) and where their latencies are recorded.
struct TrialStream {
  IoPattern pattern = IoPattern::kRandRead;
  uint64_t block_size = 4096;
  OffsetGenerator* offsets = nullptr;
  LatencyHistogram* latency = nullptr;
  /// When set: the latency of every I/O of the stream that completes (drained ones included)
  /// is appended while its capacity lasts; the engine never makes it grow (no allocation in
  /// the I/O loop).
  std::vector<uint64_t>* samples = nullptr;
};

/// One trial (a window): keep `queue_depth` I/Os in flight for `duration_ns`. With one stream
/// every I/O is that stream's. With several, each new I/O belongs to the stream named by the
/// next entry of `order` (used cyclically): the streams' I/Os are interleaved one by one, so
/// that whatever disturbs the device during the window disturbs all of them alike.
struct TrialSpec {
  std::span<const TrialStream> streams;
  uint32_t queue_depth = 1;
  uint64_t duration_ns = 0;
  std::span<const uint8_t> order;
};

/// What one stream did in a trial. `ios` and `bytes` count the I/Os completed inside the
/// measurement window; `latency_ns` sums the latency of every I/O of the stream that completed,
/// those drained after the window included (the slow I/Os still in flight at the deadline
/// would otherwise be missing from a mixed window's mean, more so for the slower stream).
/// A rewrite is one I/O: its read and its write, from the read's submission to the write's
/// completion.
struct StreamResult {
  uint64_t ios = 0;
  uint64_t bytes = 0;
  uint64_t latency_ns = 0;
  uint64_t latency_ios = 0;
};

/// The measurement window of a trial starts when the first I/Os are submitted and ends at the
/// first completion seen at or after the deadline once every stream has completed an I/O; the
/// I/Os completed inside it are counted (at least one), so the queue is full for the whole
/// window. I/Os still in flight then are waited for but not counted; `wall_ns` includes that
/// wait.
struct TrialResult {
  std::array<StreamResult, kMaxGroupCells> streams{};
  uint64_t measured_ns = 0;
  uint64_t wall_ns = 0;

  /// Summed over the streams.
  uint64_t ios() const;
  uint64_t bytes() const;
};

class BenchEngine {
 public:
  virtual ~BenchEngine() = default;
  /// "io_uring", "psync" or a fake's name, for the report.
  virtual std::string name() const = 0;
  /// Runs one trial, recording the latency of every counted I/O in its stream's histogram.
  /// Fails on an I/O error or a short transfer, naming the offset; a rewrite whose read fails
  /// writes nothing.
  virtual Result<TrialResult> RunTrial(const TrialSpec& spec) = 0;
};

/// A trial of one stream: `pattern` with `block_size` at `queue_depth` for `duration_ns`.
Result<TrialResult> RunSingleTrial(BenchEngine& engine, IoPattern pattern, uint64_t block_size,
                                   uint32_t queue_depth, uint64_t duration_ns,
                                   OffsetGenerator& offsets, LatencyHistogram& latency);

}  // namespace partalign
