#include "io/bench/psync_engine.h"

#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "io/bench/bench_clock.h"

namespace partalign {
namespace {

// What one thread measured in a trial.
struct WorkerResult {
  uint64_t ios = 0;
  uint64_t end_ns = 0;  ///< completion time of its last counted I/O
  std::string error;
};

}  // namespace

Result<std::unique_ptr<PsyncEngine>> PsyncEngine::Create(int fd, const std::string& path,
                                                         uint32_t max_queue_depth,
                                                         uint64_t pool_bytes) {
  std::unique_ptr<PsyncEngine> engine(new PsyncEngine());
  Result<EnginePool> pool = EnginePool::Make(fd, path, max_queue_depth, pool_bytes);
  if (!pool) return pool.error();
  engine->pool_ = std::move(*pool);
  return engine;
}

Result<TrialResult> PsyncEngine::RunTrial(const TrialSpec& spec, OffsetGenerator& offsets,
                                          LatencyHistogram& latency) {
  if (Status s = pool_.Check(spec, "psync"); !s) return s.error();
  const bool write = IsWrite(spec.pattern);
  const size_t length = spec.block_size;
  const uint32_t threads = spec.queue_depth;
  std::mutex offsets_mutex;  // shared generator; uncontended at QD1
  const uint64_t start = MonotonicNs();
  const uint64_t deadline = start + spec.duration_ns;

  // One synchronous I/O after another until the first completion at or after the deadline.
  auto work = [&](uint32_t index, LatencyHistogram& histogram, WorkerResult& out) {
    char* buffer = pool_.Buffer(index, spec.block_size);
    for (;;) {
      uint64_t offset;
      if (threads == 1) {
        offset = offsets.Next();
      } else {
        std::lock_guard<std::mutex> lock(offsets_mutex);
        offset = offsets.Next();
      }
      const uint64_t before = MonotonicNs();
      const int fd = pool_.fd();
      const ssize_t n = write ? ::pwrite(fd, buffer, length, static_cast<off_t>(offset))
                              : ::pread(fd, buffer, length, static_cast<off_t>(offset));
      const uint64_t after = MonotonicNs();
      if (n < 0 && errno == EINTR) continue;
      if (n != static_cast<ssize_t>(length)) {
        out.error = pool_.IoError(n < 0 ? -errno : n, write, offset, length);
        return;
      }
      histogram.Record(after - before);
      ++out.ios;
      out.end_ns = after;
      if (after >= deadline) return;
    }
  };

  std::vector<WorkerResult> results(threads);
  std::vector<LatencyHistogram> histograms(threads - 1);
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (uint32_t i = 1; i < threads; ++i) {
    pool.emplace_back(work, i, std::ref(histograms[i - 1]), std::ref(results[i]));
  }
  work(0, latency, results[0]);
  for (std::thread& t : pool) t.join();
  for (const LatencyHistogram& h : histograms) latency.Merge(h);

  TrialResult result;
  for (const WorkerResult& w : results) {
    if (!w.error.empty()) return MakeError(w.error);
    result.ios += w.ios;
    result.measured_ns = std::max(result.measured_ns, w.end_ns - start);
  }
  result.bytes = result.ios * length;
  result.wall_ns = MonotonicNs() - start;
  return result;
}

}  // namespace partalign
