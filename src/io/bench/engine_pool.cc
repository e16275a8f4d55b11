// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/bench/engine_pool.h"

#include <algorithm>
#include <cerrno>
#include <vector>

#include <fmt/format.h>

namespace partalign {

Result<EnginePool> EnginePool::Make(int fd, const std::string& path, uint32_t max_queue_depth,
                                    uint64_t pool_bytes) {
  EnginePool p;
  p.fd_ = fd;
  p.path_ = path;
  p.max_queue_depth_ = max_queue_depth;
  p.pool_ = MappedBuffer(static_cast<size_t>(pool_bytes));
  if (!p.pool_.data()) {
    return ErrnoError(ENOMEM, fmt::format("cannot allocate {} bytes of I/O buffers", pool_bytes));
  }
  p.pool_.FillPseudoRandom();
  return p;
}

Result<uint64_t> EnginePool::Check(const TrialSpec& spec, std::string_view engine) const {
  if (spec.streams.empty() || spec.streams.size() > kMaxGroupCells) {
    return MakeError(fmt::format("{} engine: a trial needs 1 to {} streams, got {}", engine,
                                 kMaxGroupCells, spec.streams.size()));
  }
  uint64_t stride = 0;
  for (const TrialStream& s : spec.streams) {
    if (!s.offsets || !s.latency || s.block_size == 0) {
      return MakeError(fmt::format("{} engine: a stream without offsets or block size", engine));
    }
    stride = std::max(stride, s.block_size);
  }
  if (spec.streams.size() > 1) {
    std::vector<bool> seen(spec.streams.size(), false);
    for (uint8_t s : spec.order) {
      if (s >= spec.streams.size()) {
        return MakeError(fmt::format("{} engine: the order names stream {} of {}", engine, s,
                                     spec.streams.size()));
      }
      seen[s] = true;
    }
    if (std::find(seen.begin(), seen.end(), false) != seen.end()) {
      return MakeError(fmt::format("{} engine: the order leaves a stream out", engine));
    }
  }
  if (spec.queue_depth == 0 || spec.queue_depth > max_queue_depth_ ||
      stride * spec.queue_depth > pool_.size()) {
    return MakeError(
        fmt::format("{} engine set up for QD{} and {} bytes of buffers, asked for {} x {} bytes",
                    engine, max_queue_depth_, pool_.size(), spec.queue_depth, stride));
  }
  return stride;
}

std::string EnginePool::IoError(int64_t result, bool write, uint64_t offset,
                                uint64_t length) const {
  const char* verb = write ? "write" : "read";
  if (result < 0) {
    return ErrnoError(static_cast<int>(-result),
                      fmt::format("cannot {} '{}' at byte {}", verb, path_, offset))
        .message;
  }
  return fmt::format("short {} of '{}' at byte {}: {} of {} bytes", verb, path_, offset, result,
                     length);
}

}  // namespace partalign
