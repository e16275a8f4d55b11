// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/block/uring_batch.h"

#include <liburing.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include <fmt/format.h>

namespace partalign {
namespace {

/// Requests in flight per thread. A batch of the mover has a handful of multi-MiB chunks; the
/// loop driver and the disk split each into many requests of their own.
constexpr unsigned kRingDepth = 64;

// One ring per thread: the mover's pipeline stages each own one, and a ring must not be shared
// between threads without locking. Created on first use, released at thread exit. A ring whose
// submission failed outright is never used again (its queue may hold stale entries).
class ThreadRing {
 public:
  ThreadRing() { ok_ = io_uring_queue_init(kRingDepth, &ring_, 0) == 0; }
  ~ThreadRing() {
    if (ok_ || broken_) io_uring_queue_exit(&ring_);
  }
  ThreadRing(const ThreadRing&) = delete;
  ThreadRing& operator=(const ThreadRing&) = delete;
  io_uring* get() { return ok_ ? &ring_ : nullptr; }
  io_uring* raw() { return &ring_; }
  void Break() {
    broken_ = ok_;
    ok_ = false;
  }

 private:
  io_uring ring_{};
  bool ok_ = false;
  bool broken_ = false;
};

Error TransferError(int err, TransferKind kind, const std::string& name, uint64_t offset) {
  const char* verb = kind == TransferKind::kRead ? "read" : "write";
  if (err == 0) {
    return MakeError(
        fmt::format("cannot {} '{}' at byte {}: unexpected end of file", verb, name, offset));
  }
  return ErrnoError(err, fmt::format("cannot {} '{}' at byte {}", verb, name, offset));
}

Status TransferWithSyscalls(int fd, TransferKind kind, std::span<const IoSpan> requests,
                            const std::string& name) {
  for (const IoSpan& r : requests) {
    uint64_t done = 0;
    while (done < r.length) {
      const off_t at = static_cast<off_t>(r.offset + done);
      ssize_t n = kind == TransferKind::kRead ? ::pread(fd, r.data + done, r.length - done, at)
                                              : ::pwrite(fd, r.data + done, r.length - done, at);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) return TransferError(n < 0 ? errno : 0, kind, name, r.offset + done);
      done += static_cast<uint64_t>(n);
    }
  }
  return {};
}

}  // namespace

Status TransferAll(int fd, TransferKind kind, std::span<const IoSpan> requests,
                   const std::string& name) {
  if (requests.empty()) return {};
  thread_local ThreadRing thread_ring;
  io_uring* ring = thread_ring.get();
  if (ring == nullptr) return TransferWithSyscalls(fd, kind, requests, name);

  std::vector<uint64_t> done(requests.size(), 0);
  std::vector<size_t> todo;  // requests to (re)submit; popped from the back
  for (size_t i = requests.size(); i-- > 0;) todo.push_back(i);
  unsigned prepared = 0;  // in the submission queue, not yet handed to the kernel
  unsigned inflight = 0;  // handed to the kernel, completion not yet seen
  Status result;
  auto fail = [&](Error error) {
    if (result) result = std::move(error);
  };

  for (;;) {
    while (result && !todo.empty() && prepared + inflight < kRingDepth) {
      io_uring_sqe* sqe = io_uring_get_sqe(ring);
      if (sqe == nullptr) break;
      const size_t i = todo.back();
      todo.pop_back();
      uint8_t* at = requests[i].data + done[i];
      const unsigned length = static_cast<unsigned>(requests[i].length - done[i]);
      const uint64_t offset = requests[i].offset + done[i];
      if (kind == TransferKind::kRead) {
        io_uring_prep_read(sqe, fd, at, length, offset);
      } else {
        io_uring_prep_write(sqe, fd, at, length, offset);
      }
      io_uring_sqe_set_data64(sqe, i);
      ++prepared;
    }
    if (prepared == 0 && inflight == 0) break;
    // Returns how many entries it handed over (the kernel reports EINTR only when none).
    const int rc = io_uring_submit_and_wait(ring, 1);
    if (rc >= 0) {
      inflight += static_cast<unsigned>(rc);
      prepared -= static_cast<unsigned>(rc);
    } else if (rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
      // The ring is unusable. Entries never handed over stay behind, so the ring is retired;
      // those the kernel has are waited for below before the buffers go back to the caller.
      fail(ErrnoError(-rc, fmt::format("io_uring submission for '{}' failed", name)));
      thread_ring.Break();
      io_uring_cqe* cqe = nullptr;
      while (inflight > 0 && io_uring_wait_cqe(thread_ring.raw(), &cqe) == 0) {
        io_uring_cqe_seen(thread_ring.raw(), cqe);
        --inflight;
      }
      return result;
    }
    io_uring_cqe* cqe = nullptr;
    while (inflight > 0) {
      const int got =
          result || prepared > 0 ? io_uring_peek_cqe(ring, &cqe) : io_uring_wait_cqe(ring, &cqe);
      if (got == -EINTR) continue;
      if (got != 0) break;
      const size_t i = static_cast<size_t>(io_uring_cqe_get_data64(cqe));
      const int res = cqe->res;
      io_uring_cqe_seen(ring, cqe);
      --inflight;
      if (res == -EINTR || res == -EAGAIN) {
        todo.push_back(i);
      } else if (res <= 0) {
        fail(TransferError(-res, kind, name, requests[i].offset + done[i]));
      } else {
        done[i] += static_cast<uint64_t>(res);
        if (done[i] < requests[i].length) todo.push_back(i);
      }
    }
    if (!result && inflight == 0) break;
  }
  return result;
}

}  // namespace partalign
