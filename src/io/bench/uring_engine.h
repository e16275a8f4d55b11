// SPDX-License-Identifier: GPL-3.0-or-later
// The io_uring benchmark engine (liburing): O_DIRECT reads, writes or rewrites (a read, then a
// write of the same buffer to the same offset once the read has completed) from one registered
// buffer pool, the target registered as a fixed file, up to 128 I/Os in flight, the I/Os of a
// trial's streams interleaved in the trial's order. Each batch of completions is replaced at
// once; the engine sleeps only when nothing has completed.
#pragma once

#include <liburing.h>

#include <memory>
#include <string>
#include <vector>

#include "io/bench/engine_pool.h"
#include "partalign/bench/bench_engine.h"
#include "partalign/util/result.h"

namespace partalign {

class UringEngine final : public BenchEngine {
 public:
  /// `fd` must stay open while the engine lives. A trial may keep up to `max_queue_depth` I/Os
  /// in flight as long as queue depth x block size fits in `pool_bytes`. Fails when io_uring
  /// is unavailable (old kernel, disabled by sysctl kernel.io_uring_disabled, seccomp), with
  /// the reason.
  static Result<std::unique_ptr<UringEngine>> Create(int fd, const std::string& path,
                                                     uint32_t max_queue_depth, uint64_t pool_bytes);
  ~UringEngine() override;

  std::string name() const override;
  Result<TrialResult> RunTrial(const TrialSpec& spec) override;

 private:
  UringEngine() = default;

  io_uring ring_{};
  bool ring_ready_ = false;
  EnginePool pool_;
  bool fixed_buffers_ = false;
  bool fixed_file_ = false;
  /// What a slot's I/O in flight is doing.
  enum class Phase : uint8_t { kTransfer, kRewriteRead, kRewriteWrite };
  std::vector<uint64_t> submitted_ns_;  ///< per slot, when its I/O was submitted
  std::vector<uint64_t> offset_of_;     ///< per slot: where it goes (and for error messages)
  std::vector<uint8_t> stream_of_;      ///< per slot: the stream its I/O belongs to
  std::vector<Phase> phase_;            ///< per slot
};

}  // namespace partalign
