// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/move/pipeline.h"

#include <algorithm>
#include <thread>

namespace partalign {

Result<uint64_t> Pipeline::Run(const std::vector<Stage>& stages,
                               const std::function<bool()>& stop_requested) {
  {
    std::lock_guard lock(mutex_);
    finished_.assign(stages.size(), 0);
    limit_ = item_count_;
    failed_ = false;
    error_ = {};
  }
  std::vector<std::thread> threads;
  for (size_t s = 1; s < stages.size(); ++s) {
    threads.emplace_back(
        [this, s, &stages, &stop_requested] { RunStage(s, stages[s], stop_requested); });
  }
  RunStage(0, stages[0], stop_requested);
  for (std::thread& t : threads) t.join();
  if (!error_) return error_.error();
  return finished_.back();
}

uint64_t Pipeline::Finished(size_t stage) {
  std::lock_guard lock(mutex_);
  return finished_[stage];
}

bool Pipeline::WaitFinished(size_t stage, uint64_t item) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return finished_[stage] > item || failed_ || item >= limit_; });
  return finished_[stage] > item;
}

void Pipeline::RunStage(size_t stage, const Stage& run,
                        const std::function<bool()>& stop_requested) {
  const size_t last = std::min(release_stage_, finished_.size() - 1);
  for (uint64_t item = 0;; ++item) {
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] {
        if (failed_ || item >= limit_) return true;
        if (stage > 0) return finished_[stage - 1] > item;
        return item < depth_ || finished_[last] > item - depth_;
      });
      if (failed_ || item >= limit_) break;
    }
    if (stage == 0 && stop_requested && stop_requested()) {
      std::lock_guard lock(mutex_);
      limit_ = item;
      changed_.notify_all();
      break;
    }
    Status status = run(item);
    std::lock_guard lock(mutex_);
    if (!status) {
      if (!failed_) error_ = std::move(status);
      failed_ = true;
    } else {
      finished_[stage] = item + 1;
    }
    changed_.notify_all();
    if (failed_) break;
  }
}

}  // namespace partalign
