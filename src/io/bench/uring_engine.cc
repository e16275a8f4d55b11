// SPDX-License-Identifier: GPL-3.0-or-later
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
  const MappedBuffer& buffers = engine->pool_.pool();
  iovec whole{buffers.data(), buffers.size()};
  engine->fixed_buffers_ = io_uring_register_buffers(&engine->ring_, &whole, 1) == 0;
  engine->fixed_file_ = io_uring_register_files(&engine->ring_, &fd, 1) == 0;
  engine->submitted_ns_.assign(max_queue_depth, 0);
  engine->offset_of_.assign(max_queue_depth, 0);
  engine->stream_of_.assign(max_queue_depth, 0);
  engine->phase_.assign(max_queue_depth, Phase::kTransfer);
  return engine;
}

UringEngine::~UringEngine() {
  if (!ring_ready_) return;
  // The ring's own teardown runs later, in the kernel's background: a registered file would
  // stay open until then, and with it an exclusive open (O_EXCL) or lock (flock) of the target,
  // which apply takes right after its "before" benchmark. Unregistering drops it now.
  if (fixed_file_) io_uring_unregister_files(&ring_);
  io_uring_queue_exit(&ring_);
}

std::string UringEngine::name() const {
  return fixed_buffers_ ? "io_uring" : "io_uring (unregistered buffers)";
}

Result<TrialResult> UringEngine::RunTrial(const TrialSpec& spec) {
  Result<uint64_t> stride = pool_.Check(spec, "io_uring");
  if (!stride) return stride.error();
  const int file = fixed_file_ ? kFixedFileIndex : pool_.fd();
  StreamPicker picker(spec);

  // Fills the SQE of `slot`'s I/O in its current phase; the ring has room for max_queue_depth
  // entries, never more in flight.
  auto queue = [&](uint32_t slot) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    const TrialStream& stream = spec.streams[stream_of_[slot]];
    const bool write = IsWrite(stream.pattern) || phase_[slot] == Phase::kRewriteWrite;
    const auto length = static_cast<unsigned>(stream.block_size);
    char* buffer = pool_.Buffer(slot, *stride);
    const uint64_t offset = offset_of_[slot];
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
  };
  // Starts the next I/O of the trial in `slot`.
  auto start = [&](uint32_t slot, uint64_t now) {
    const uint8_t s = picker.Next();
    stream_of_[slot] = s;
    offset_of_[slot] = spec.streams[s].offsets->Next();
    submitted_ns_[slot] = now;
    phase_[slot] = IsRewrite(spec.streams[s].pattern) ? Phase::kRewriteRead : Phase::kTransfer;
    queue(slot);
  };

  TrialResult result;
  std::string error;
  size_t streams_seen = 0;  // streams with a counted I/O: the window ends only after all have one
  const uint64_t begin = MonotonicNs();
  const uint64_t deadline = begin + spec.duration_ns;
  for (uint32_t slot = 0; slot < spec.queue_depth; ++slot) start(slot, begin);
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
    const bool all_seen = streams_seen == spec.streams.size();
    const bool reissue = measuring && (now < deadline || !all_seen) && error.empty();
    unsigned head;
    unsigned seen = 0;
    io_uring_cqe* cqe;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      ++seen;
      const auto slot = static_cast<uint32_t>(io_uring_cqe_get_data64(cqe));
      --in_flight;
      const TrialStream& stream = spec.streams[stream_of_[slot]];
      const auto length = static_cast<int>(stream.block_size);
      const bool write = IsWrite(stream.pattern) || phase_[slot] == Phase::kRewriteWrite;
      if (cqe->res != length) {
        // A rewrite whose read failed writes nothing.
        if (error.empty()) error = pool_.IoError(cqe->res, write, offset_of_[slot], length);
        continue;
      }
      if (phase_[slot] == Phase::kRewriteRead) {
        // The same bytes back where they came from. A read that completes after the window
        // is simply dropped: it changed nothing.
        if (reissue) {
          phase_[slot] = Phase::kRewriteWrite;
          queue(slot);
          ++in_flight;
        }
        continue;
      }
      const uint64_t latency = now - submitted_ns_[slot];
      StreamResult& r = result.streams[stream_of_[slot]];
      r.latency_ns += latency;
      ++r.latency_ios;
      if (stream.samples && stream.samples->size() < stream.samples->capacity()) {
        stream.samples->push_back(latency);
      }
      if (measuring) {
        stream.latency->Record(latency);
        streams_seen += r.ios == 0;
        ++r.ios;
        r.bytes += stream.block_size;
      }
      if (reissue) {
        start(slot, now);
        ++in_flight;
      }
    }
    io_uring_cq_advance(&ring_, seen);
    if (measuring && ((now >= deadline && streams_seen == spec.streams.size()) || !error.empty())) {
      measuring = false;
      result.measured_ns = now - begin;
    }
  }
  result.wall_ns = MonotonicNs() - begin;
  if (!error.empty()) return MakeError(error);
  return result;
}

}  // namespace partalign
