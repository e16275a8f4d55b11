// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/bench/psync_engine.h"

#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "io/bench/bench_clock.h"

namespace partalign {

Result<std::unique_ptr<PsyncEngine>> PsyncEngine::Create(int fd, const std::string& path,
                                                         uint32_t max_queue_depth,
                                                         uint64_t pool_bytes) {
  std::unique_ptr<PsyncEngine> engine(new PsyncEngine());
  Result<EnginePool> pool = EnginePool::Make(fd, path, max_queue_depth, pool_bytes);
  if (!pool) return pool.error();
  engine->pool_ = std::move(*pool);
  return engine;
}

Result<TrialResult> PsyncEngine::RunTrial(const TrialSpec& spec) {
  Result<uint64_t> stride = pool_.Check(spec, "psync");
  if (!stride) return stride.error();
  const uint32_t threads = spec.queue_depth;
  // The order, the offset streams, the histograms and the results are shared by the threads;
  // the lock is uncontended at QD1 and held only between I/Os.
  std::mutex mutex;
  StreamPicker picker(spec);
  TrialResult result;
  size_t streams_seen = 0;
  std::string error;
  const uint64_t begin = MonotonicNs();
  const uint64_t deadline = begin + spec.duration_ns;

  // Synchronous I/Os one after another until the first completion at or after the deadline
  // once every stream has one.
  auto work = [&](uint32_t index) {
    char* buffer = pool_.Buffer(index, *stride);
    const int fd = pool_.fd();
    for (;;) {
      uint8_t s;
      uint64_t offset;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (!error.empty()) return;
        s = picker.Next();
        offset = spec.streams[s].offsets->Next();
      }
      const TrialStream& stream = spec.streams[s];
      const size_t length = stream.block_size;
      const bool rewrite = IsRewrite(stream.pattern);
      auto transfer = [&](bool write) {
        for (;;) {
          const ssize_t n = write ? ::pwrite(fd, buffer, length, static_cast<off_t>(offset))
                                  : ::pread(fd, buffer, length, static_cast<off_t>(offset));
          if (n < 0 && errno == EINTR) continue;
          if (n == static_cast<ssize_t>(length)) return std::string();
          return pool_.IoError(n < 0 ? -errno : n, write, offset, length);
        }
      };
      const uint64_t before = MonotonicNs();
      // A rewrite writes back only what it read in full.
      std::string failed = transfer(IsWrite(stream.pattern));
      if (failed.empty() && rewrite) failed = transfer(/*write=*/true);
      const uint64_t after = MonotonicNs();
      std::lock_guard<std::mutex> lock(mutex);
      if (!failed.empty()) {
        if (error.empty()) error = failed;
        return;
      }
      StreamResult& r = result.streams[s];
      stream.latency->Record(after - before);
      r.latency_ns += after - before;
      ++r.latency_ios;
      if (stream.samples && stream.samples->size() < stream.samples->capacity()) {
        stream.samples->push_back(after - before);
      }
      streams_seen += r.ios == 0;
      ++r.ios;
      r.bytes += length;
      result.measured_ns = std::max(result.measured_ns, after - begin);
      if (after >= deadline && streams_seen == spec.streams.size()) return;
    }
  };

  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (uint32_t i = 1; i < threads; ++i) pool.emplace_back(work, i);
  work(0);
  for (std::thread& t : pool) t.join();
  if (!error.empty()) return MakeError(error);
  result.wall_ns = MonotonicNs() - begin;
  return result;
}

}  // namespace partalign
