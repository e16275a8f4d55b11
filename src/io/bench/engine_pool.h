// SPDX-License-Identifier: GPL-3.0-or-later
// What both benchmark engines keep: the target's descriptor and one page-aligned buffer pool,
// set up once, plus the checks and messages they share.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "io/block/mapped_buffer.h"
#include "partalign/bench/bench_engine.h"
#include "partalign/util/result.h"

namespace partalign {

class EnginePool {
 public:
  EnginePool() = default;

  /// Allocates `pool_bytes` of buffers filled with pseudo-random data (what writes carry).
  static Result<EnginePool> Make(int fd, const std::string& path, uint32_t max_queue_depth,
                                 uint64_t pool_bytes);

  /// Fails when `spec` needs a deeper queue or more buffer space than was set up, or is not a
  /// trial (no stream, too many, an order that leaves a stream out). Returns the buffer stride
  /// of its slots: the largest block size of its streams.
  Result<uint64_t> Check(const TrialSpec& spec, std::string_view engine) const;

  /// The buffer of I/O slot `slot` when slots are `stride` bytes apart; aligned to the stride's
  /// largest power-of-two factor, at least the 512-byte sector, since the pool is page-aligned.
  char* Buffer(uint32_t slot, uint64_t stride) const {
    return pool_.data() + static_cast<size_t>(slot) * stride;
  }

  /// "cannot read '/dev/loop0' at byte 4096: Input/output error" for result < 0 (a negative
  /// errno), else "short read of ... : N of M bytes".
  std::string IoError(int64_t result, bool write, uint64_t offset, uint64_t length) const;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  uint32_t max_queue_depth() const { return max_queue_depth_; }
  const MappedBuffer& pool() const { return pool_; }

 private:
  int fd_ = -1;
  std::string path_;
  uint32_t max_queue_depth_ = 0;
  MappedBuffer pool_;
};

/// Which stream the next I/O of a trial belongs to: stream 0 for one stream, else the entries
/// of the trial's order, cyclically.
class StreamPicker {
 public:
  explicit StreamPicker(const TrialSpec& spec)
      : order_(spec.order), single_(spec.streams.size() == 1) {}
  uint8_t Next() {
    if (single_) return 0;
    const uint8_t stream = order_[position_];
    position_ = position_ + 1 == order_.size() ? 0 : position_ + 1;
    return stream;
  }

 private:
  std::span<const uint8_t> order_;
  bool single_;
  size_t position_ = 0;
};

}  // namespace partalign
