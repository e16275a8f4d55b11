// SPDX-License-Identifier: GPL-3.0-or-later
// The fallback benchmark engine for when io_uring is unavailable: pread()/pwrite() on the
// O_DIRECT descriptor, one I/O per call (a rewrite: pread, then pwrite of the same buffer),
// like fio's psync engine. Queue depths above 1 run as that many threads (fio's numjobs), each
// with its own buffer, taking the trial's streams in its order.
#pragma once

#include <memory>
#include <string>

#include "io/bench/engine_pool.h"
#include "partalign/bench/bench_engine.h"
#include "partalign/util/result.h"

namespace partalign {

class PsyncEngine final : public BenchEngine {
 public:
  static Result<std::unique_ptr<PsyncEngine>> Create(int fd, const std::string& path,
                                                     uint32_t max_queue_depth, uint64_t pool_bytes);

  std::string name() const override { return "psync"; }
  Result<TrialResult> RunTrial(const TrialSpec& spec) override;

 private:
  PsyncEngine() = default;

  EnginePool pool_;
};

}  // namespace partalign
