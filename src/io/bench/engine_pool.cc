#include "io/bench/engine_pool.h"

#include <cerrno>

#include <fmt/format.h>

namespace partalign {

Result<EnginePool> EnginePool::Make(int fd, const std::string& path, uint32_t max_queue_depth,
                                    uint64_t pool_bytes) {
  EnginePool p;
  p.fd_ = fd;
  p.path_ = path;
  p.max_queue_depth_ = max_queue_depth;
  p.pool_ = AlignedBuffer(static_cast<size_t>(pool_bytes));
  if (!p.pool_.data()) {
    return ErrnoError(ENOMEM, fmt::format("cannot allocate {} bytes of I/O buffers", pool_bytes));
  }
  p.pool_.FillPseudoRandom();
  return p;
}

Status EnginePool::Check(const TrialSpec& spec, std::string_view engine) const {
  if (spec.queue_depth == 0 || spec.queue_depth > max_queue_depth_ ||
      spec.block_size * spec.queue_depth > pool_.size()) {
    return MakeError(
        fmt::format("{} engine set up for QD{} and {} bytes of buffers, asked for {} x {} bytes",
                    engine, max_queue_depth_, pool_.size(), spec.queue_depth, spec.block_size));
  }
  return {};
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
