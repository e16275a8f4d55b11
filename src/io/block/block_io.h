// SPDX-License-Identifier: GPL-3.0-or-later
// Block I/O for the data mover: batches of reads and writes at byte offsets, and a flush that
// makes completed writes durable. The real implementation is an O_DIRECT file descriptor driven
// through io_uring (uring_batch.h); tests substitute a simulated disk with a volatile write cache
// (tests/support/simulated_disk.h) to check recovery after a power failure at any instant.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "io/util/unique_fd.h"
#include "partalign/util/result.h"

namespace partalign {

/// One transfer. For O_DIRECT, data, length and offset are aligned to the device's logical
/// sector size (buffers to 4 KiB: AlignedBuffer).
struct IoSpan {
  uint8_t* data = nullptr;
  uint64_t length = 0;
  uint64_t offset = 0;
};

/// One range to read: `length` bytes at byte `offset`.
struct ByteRange {
  uint64_t offset = 0;
  uint64_t length = 0;
};

/// Thread-safe: the mover's pipeline stages call it from several threads at once.
class BlockIo {
 public:
  virtual ~BlockIo() = default;
  /// Reads every request completely (concurrently when the implementation can).
  virtual Status Read(std::span<const IoSpan> requests) = 0;
  /// Writes every request completely. Not durable until Flush().
  virtual Status Write(std::span<const IoSpan> requests) = 0;
  /// Makes every write that completed before the call durable (fdatasync: a cache flush).
  virtual Status Flush() = 0;
  virtual uint64_t size_bytes() const = 0;
  /// For messages: the path.
  virtual const std::string& name() const = 0;
};

/// A heap buffer aligned for O_DIRECT.
class AlignedBuffer {
 public:
  static constexpr size_t kAlignment = 4096;
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t size);
  /// Huge pages (transparent, x86-64 and arm64 with 4 KiB pages): a populated buffer of at least
  /// this many bytes starts on such a boundary and asks for them.
  static constexpr size_t kHugePageBytes = 2 << 20;
  /// A buffer whose pages are in memory from the start (PopulatePages), for one that O_DIRECT
  /// reads fill in full soon after. From kHugePageBytes up it asks for huge pages
  /// (MADV_HUGEPAGE): fewer faults to populate it, fewer pages to pin for each transfer and to
  /// free; the mover's moves took 7-24% less time so (docs/mover.md §10).
  static AlignedBuffer Populated(size_t size);
  AlignedBuffer(AlignedBuffer&& other) noexcept;
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer();

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  std::span<uint8_t> span() { return {data_, size_}; }

 private:
  AlignedBuffer(size_t size, size_t alignment);

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

/// Faults in every whole page inside `memory` now, in one call: madvise MADV_POPULATE_WRITE
/// (Linux 5.14; a hint, the bytes are kept). Left to the first O_DIRECT read into them, the pages
/// are faulted in one by one while the kernel pins them for the transfer: the mover's batch
/// buffers, so populated, made the bench's move of 308 MiB about 44 ms (7%) shorter
/// (docs/mover.md §10).
void PopulatePages(std::span<uint8_t> memory);

/// A copy of `bytes` in a vector whose pages were populated (PopulatePages) before the copy
/// wrote them: a fresh page faulted in by a write costs about 2 us on the test machine, so a
/// copy of megabytes (the destination's preimage, docs/mover.md §4) costs milliseconds.
std::vector<uint8_t> PopulatedCopy(std::span<const uint8_t> bytes);

/// Reads every range of `io` with one Read, all in flight together (one at a time, each
/// waited for, they cost a round trip each): one buffer per range, in order, a whole number of
/// pages whose first `length` bytes are the range's. A range of 0 bytes reads nothing.
Result<std::vector<AlignedBuffer>> ReadEach(BlockIo& io, std::span<const ByteRange> ranges);

/// BlockIo on a file descriptor (block device or regular file), io_uring with a pread/pwrite
/// fallback, fdatasync for Flush.
class FdBlockIo final : public BlockIo {
 public:
  FdBlockIo(UniqueFd fd, std::string name, uint64_t size_bytes)
      : fd_(std::move(fd)), name_(std::move(name)), size_bytes_(size_bytes) {}
  Status Read(std::span<const IoSpan> requests) override;
  Status Write(std::span<const IoSpan> requests) override;
  Status Flush() override;
  uint64_t size_bytes() const override { return size_bytes_; }
  const std::string& name() const override { return name_; }
  int fd() const { return fd_.get(); }

 private:
  UniqueFd fd_;
  std::string name_;
  uint64_t size_bytes_;
};

/// Opens `path` again for the mover's data path: read-write, O_DIRECT when the file system
/// supports it (tmpfs does not; then buffered I/O, made durable by the same fdatasync calls).
/// `reopen_fd`, when >= 0, is reopened through /proc/self/fd so that it is the same file even if
/// the path was replaced meanwhile.
Result<std::unique_ptr<FdBlockIo>> OpenDirectIo(const std::string& path, uint64_t size_bytes,
                                                int reopen_fd = -1);

}  // namespace partalign
