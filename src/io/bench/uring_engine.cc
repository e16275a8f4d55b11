#include "io/bench/uring_engine.h"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "io/bench/bench_clock.h"

namespace partalign {
namespace {

// The setup flags fio 3.33 uses for its io_uring engine (seen with strace): completions are
// run when the application enters the kernel instead of by interrupting it. Kernels before
// 6.1 reject them; the engine then retries without.
constexpr unsigned kPreferredSetupFlags =
    IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;

// The registered file's index in the ring's file table.
constexpr int kFixedFileIndex = 0;

}  // namespace

Result<std::unique_ptr<UringEngine>> UringEngine::Create(int fd, const std::string& path,
                                                         uint32_t max_queue_depth,
                                                         uint64_t pool_bytes) {
  std::unique_ptr<UringEngine> engine(new UringEngine());
  Result<EnginePool> pool = EnginePool::Make(fd, path, max_queue_depth, pool_bytes);
  if (!pool) return pool.error();
  engine->pool_ = std::move(*pool);
  int rc = io_uring_queue_init(max_queue_depth, &engine->ring_, kPreferredSetupFlags);
  if (rc == -EINVAL) rc = io_uring_queue_init(max_queue_depth, &engine->ring_, 0);
  if (rc < 0) return ErrnoError(-rc, "io_uring is not available");
  engine->ring_ready_ = true;
  // Registered buffers skip pinning the pages on every I/O. The kernel refuses when the pool
  // is over RLIMIT_MEMLOCK for an unprivileged user: the engine then uses plain buffers.
  const AlignedBuffer& buffers = engine->pool_.pool();
  iovec whole{buffers.data(), buffers.size()};
  engine->fixed_buffers_ = io_uring_register_buffers(&engine->ring_, &whole, 1) == 0;
  engine->fixed_file_ = io_uring_register_files(&engine->ring_, &fd, 1) == 0;
  engine->submitted_ns_.assign(max_queue_depth, 0);
  engine->offset_of_.assign(max_queue_depth, 0);
  return engine;
}

UringEngine::~UringEngine() {
  if (ring_ready_) io_uring_queue_exit(&ring_);
}

std::string UringEngine::name() const {
  return fixed_buffers_ ? "io_uring" : "io_uring (unregistered buffers)";
}

Result<TrialResult> UringEngine::RunTrial(const TrialSpec& spec, OffsetGenerator& offsets,
                                          LatencyHistogram& latency) {
  if (Status s = pool_.Check(spec, "io_uring"); !s) return s.error();
  const bool write = IsWrite(spec.pattern);
  const unsigned length = static_cast<unsigned>(spec.block_size);
  const int file = fixed_file_ ? kFixedFileIndex : pool_.fd();

  // Fills `slot`'s SQE; the ring has room for max_queue_depth entries, never more in flight.
  auto prepare = [&](uint32_t slot, uint64_t now) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    const uint64_t offset = offsets.Next();
    char* buffer = pool_.Buffer(slot, spec.block_size);
    if (fixed_buffers_) {
      if (write) {
        io_uring_prep_write_fixed(sqe, file, buffer, length, offset, 0);
      } else {
        io_uring_prep_read_fixed(sqe, file, buffer, length, offset, 0);
      }
    } else if (write) {
      io_uring_prep_write(sqe, file, buffer, length, offset);
    } else {
      io_uring_prep_read(sqe, file, buffer, length, offset);
    }
    if (fixed_file_) sqe->flags |= IOSQE_FIXED_FILE;
    io_uring_sqe_set_data64(sqe, slot);
    submitted_ns_[slot] = now;
    offset_of_[slot] = offset;
  };

  TrialResult result;
  std::string error;
  const uint64_t start = MonotonicNs();
  const uint64_t deadline = start + spec.duration_ns;
  for (uint32_t slot = 0; slot < spec.queue_depth; ++slot) prepare(slot, start);
  uint32_t in_flight = spec.queue_depth;
  bool measuring = true;
  while (in_flight > 0) {
    // At QD1 nothing else can have completed: submit and sleep in one system call. Deeper
    // queues first submit and collect what has completed without sleeping (with
    // DEFER_TASKRUN, completions reach the CQ ring only inside io_uring_enter), and sleep only
    // when nothing has: while completions keep coming the engine never sleeps, so a busy
    // machine's wake-up delays do not let the queue run dry. (fio's io_uring engine behaves
    // the same way: one non-waiting io_uring_enter per submission.)
    int rc;
    if (spec.queue_depth == 1) {
      rc = io_uring_submit_and_wait(&ring_, 1);
    } else {
      rc = io_uring_submit_and_get_events(&ring_);
      if (rc >= 0 && io_uring_cq_ready(&ring_) == 0) {
        io_uring_cqe* first;
        rc = io_uring_wait_cqe(&ring_, &first);
      }
    }
    if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
      // The ring itself failed: nothing more will complete, so there is nothing to drain.
      return ErrnoError(-rc, fmt::format("io_uring_enter on '{}'", pool_.path()));
    }
    const uint64_t now = MonotonicNs();
    const bool reissue = measuring && now < deadline && error.empty();
    unsigned head;
    unsigned seen = 0;
    io_uring_cqe* cqe;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      ++seen;
      const auto slot = static_cast<uint32_t>(io_uring_cqe_get_data64(cqe));
      --in_flight;
      if (cqe->res != static_cast<int>(length)) {
        if (error.empty()) error = pool_.IoError(cqe->res, write, offset_of_[slot], length);
        continue;
      }
      if (measuring) {
        latency.Record(now - submitted_ns_[slot]);
        ++result.ios;
        result.bytes += length;
      }
      if (reissue) {
        prepare(slot, now);
        ++in_flight;
      }
    }
    io_uring_cq_advance(&ring_, seen);
    if (measuring && (now >= deadline || !error.empty())) {
      measuring = false;
      result.measured_ns = now - start;
    }
  }
  result.wall_ns = MonotonicNs() - start;
  if (!error.empty()) return MakeError(error);
  return result;
}

}  // namespace partalign
