// SPDX-License-Identifier: GPL-3.0-or-later
// A staged pipeline: each stage runs on its own thread and handles items 0, 1, 2, ... in order;
// item i enters stage s once stage s-1 has finished it. At most `depth` items are in flight
// (item i enters stage 0 once the last stage has finished item i - depth), so a caller can give
// each in-flight item one of `depth` buffers: buffer i % depth.
//
// The mover runs read -> journal -> write -> commit this way, so that reading batch b+2,
// journaling b+1 and writing b overlap; the scan and verify passes run read -> hash.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "partalign/util/result.h"

namespace partalign {

class Pipeline {
 public:
  using Stage = std::function<Status(uint64_t item)>;

  /// Item i enters stage 0 once stage `release_stage` has finished item i - depth (by default
  /// the last stage): the buffer of item i - depth is free again after that stage.
  Pipeline(uint64_t item_count, uint64_t depth, size_t release_stage = SIZE_MAX)
      : item_count_(item_count), depth_(depth), release_stage_(release_stage) {}

  /// How many items `stage` has finished (they finish in order); for stages that work ahead on
  /// what an earlier stage has already finished.
  uint64_t Finished(size_t stage);

  /// Runs every item through `stages`. `stop_requested` is asked before an item enters stage 0;
  /// once it says yes, no new item starts and those in flight finish. Returns the first error of
  /// any stage (the others stop after their current item), else how many items went through.
  Result<uint64_t> Run(const std::vector<Stage>& stages,
                       const std::function<bool()>& stop_requested);

  /// For a stage that depends on another one's progress (the journal stage may reuse ring space
  /// only after the commit stage): blocks until `stage` has finished `item`. False when that
  /// will not happen (the pipeline failed or stopped before the item).
  bool WaitFinished(size_t stage, uint64_t item);

 private:
  void RunStage(size_t stage, const Stage& run, const std::function<bool()>& stop_requested);

  const uint64_t item_count_;
  const uint64_t depth_;
  const size_t release_stage_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<uint64_t> finished_;  // per stage: items finished (they finish in order)
  uint64_t limit_ = 0;              // items that will enter the pipeline
  bool failed_ = false;
  Status error_;
};

}  // namespace partalign
