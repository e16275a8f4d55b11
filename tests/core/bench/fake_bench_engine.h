// SPDX-License-Identifier: GPL-3.0-or-later
// A simulated device for the benchmark's unit tests (fio's engines/null.c idea: an engine that
// pretends, to test the tool itself). Latencies are drawn from a seeded log-normal
// distribution; an I/O that crosses a 4 KiB boundary can cost extra; the whole machine can
// drift, and be faster or slower for a whole window (a noisy neighbour). Time is simulated, so
// the tests are fast and give the same result on every run.
#pragma once

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "partalign/bench/bench_engine.h"
#include "partalign/bench/bench_random.h"

namespace partalign::test {

struct FakeDevice {
  double base_ns = 50'000;        ///< median latency of an I/O that crosses no boundary
  double per_kib_ns = 100;        ///< transfer cost per KiB
  double crossing_penalty = 0.0;  ///< extra fraction for an I/O crossing a 4 KiB boundary
  double io_sigma = 0.3;          ///< log-normal spread of single I/Os
  double trial_sigma = 0.03;      ///< log-normal spread of whole windows (machine noise)
  double drift_per_trial = 0.0;   ///< the machine slows by this fraction every window
  /// At a queue depth above 1, I/Os complete in batches of the queue depth, as io_uring reaps
  /// them: each I/O of a batch is seen done when the whole batch is, so all of them report the
  /// batch's latency, whichever stream they belong to (the real engine's latencies at QD32).
  bool batch_reap = false;
  /// Every stall_every-th trial (0: none) the machine stops for stall_ns at its first I/O: the
  /// whole queue waits (the loop device's worker waiting for a CPU), so the trial's clock
  /// advances by all of it, and that I/O's latency grows by it.
  uint32_t stall_every = 0;
  double stall_ns = 0;
  /// An I/O finds the device's thread asleep with a probability drawn for each window,
  /// uniform in [wake_share_min, wake_share_max], and then waits wake_ns more: latencies in two
  /// modes whose shares change from window to window (a FUSE daemon, a USB bridge, a CPU in
  /// deep idle).
  double wake_share_min = 0.0;
  double wake_share_max = 0.0;
  double wake_ns = 0;
  uint64_t seed = 1;
};

class FakeEngine : public BenchEngine {
 public:
  explicit FakeEngine(FakeDevice device) : device_(device), rng_(device.seed) {}

  std::string name() const override { return "fake"; }

  Result<TrialResult> RunTrial(const TrialSpec& spec) override {
    if (fail_after_ >= 0 && trials_ >= fail_after_) return MakeError("fake I/O error");
    const double machine = std::exp(device_.trial_sigma * rng_.NextNormal()) *
                           std::pow(1.0 + device_.drift_per_trial, static_cast<double>(trials_));
    ++trials_;
    bool stall = device_.stall_every > 0 && trials_ % device_.stall_every == 0;
    const double wake_share =
        device_.wake_share_max > 0
            ? device_.wake_share_min +
                  (device_.wake_share_max - device_.wake_share_min) * rng_.NextDouble()
            : 0;
    TrialResult r;
    double now = 0;
    double last = 0;
    size_t position = 0;
    size_t seen = 0;
    const size_t streams = spec.streams.size();
    while (now < static_cast<double>(spec.duration_ns) || seen < streams) {
      const size_t s = streams == 1 ? 0 : spec.order[position++ % spec.order.size()];
      const TrialStream& stream = spec.streams[s];
      const uint64_t offset = stream.offsets->Next();
      const bool crosses = offset / 4096 != (offset + stream.block_size - 1) / 4096;
      last =
          (device_.base_ns + device_.per_kib_ns * static_cast<double>(stream.block_size) / 1024) *
          (crosses ? 1.0 + device_.crossing_penalty : 1.0) * machine *
          std::exp(device_.io_sigma * rng_.NextNormal()) * (IsRewrite(stream.pattern) ? 2 : 1);
      if (wake_share > 0 && rng_.NextDouble() < wake_share) last += device_.wake_ns;
      StreamResult& out = r.streams[s];
      seen += out.ios == 0;
      ++out.ios;
      out.bytes += stream.block_size;
      // Queue depth q: q I/Os in parallel, so each adds a q-th of its latency to the clock.
      now += last / spec.queue_depth;
      if (stall) {
        last += device_.stall_ns;
        now += device_.stall_ns;
        stall = false;
      }
      if (device_.batch_reap && spec.queue_depth > 1) {
        batch_.push_back({&stream, &out});
        batch_ns_ += last;
        if (batch_.size() == spec.queue_depth) FlushBatch();
      } else {
        Complete(stream, out, last);
      }
    }
    FlushBatch();
    r.measured_ns = static_cast<uint64_t>(now);
    r.wall_ns = static_cast<uint64_t>(now + last * wall_overhead_);
    return r;
  }

  /// One completed I/O's latency, recorded for its stream.
  static void Complete(const TrialStream& stream, StreamResult& out, double latency) {
    stream.latency->Record(static_cast<uint64_t>(latency));
    out.latency_ns += static_cast<uint64_t>(latency);
    ++out.latency_ios;
    if (stream.samples && stream.samples->size() < stream.samples->capacity()) {
      stream.samples->push_back(static_cast<uint64_t>(latency));
    }
  }

  /// Completes the pending batch: every I/O of it reports the batch's mean latency.
  void FlushBatch() {
    if (batch_.empty()) return;
    const double latency = batch_ns_ / static_cast<double>(batch_.size());
    for (const auto& [stream, out] : batch_) Complete(*stream, *out, latency);
    batch_.clear();
    batch_ns_ = 0;
  }

  /// Makes every trial report this many extra latencies of wall time (drain, overhead).
  void set_wall_overhead(double latencies) { wall_overhead_ = latencies; }
  /// Fails the trial with this index and every one after it.
  void set_fail_after(int trials) { fail_after_ = trials; }
  int trials() const { return trials_; }

 private:
  FakeDevice device_;
  Xoshiro256 rng_;
  int trials_ = 0;
  int fail_after_ = -1;
  double wall_overhead_ = 1.0;
  std::vector<std::pair<const TrialStream*, StreamResult*>> batch_;
  double batch_ns_ = 0;
};

}  // namespace partalign::test
