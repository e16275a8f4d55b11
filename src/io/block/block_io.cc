// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/block/block_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <new>
#include <utility>

#include <fmt/format.h>

#include "io/block/uring_batch.h"
#include "partalign/topology/alignment.h"

namespace partalign {

AlignedBuffer::AlignedBuffer(size_t size) : AlignedBuffer(size, kAlignment) {}

AlignedBuffer::AlignedBuffer(size_t size, size_t alignment) : size_(size) {
  if (size == 0) return;
  void* p = nullptr;
  if (::posix_memalign(&p, alignment, size) != 0) throw std::bad_alloc();
  data_ = static_cast<uint8_t*>(p);
}

AlignedBuffer AlignedBuffer::Populated(size_t size) {
  const bool huge = size >= kHugePageBytes;
  AlignedBuffer buffer(size, huge ? kHugePageBytes : kAlignment);
  // Only a hint: with transparent huge pages off the pages stay small.
  if (huge) (void)::madvise(buffer.data(), size / kHugePageBytes * kHugePageBytes, MADV_HUGEPAGE);
  PopulatePages(buffer.span());
  return buffer;
}

AlignedBuffer::AlignedBuffer(AlignedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& other) noexcept {
  if (this != &other) {
    std::free(data_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

AlignedBuffer::~AlignedBuffer() { std::free(data_); }

void PopulatePages(std::span<uint8_t> memory) {
  static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t begin = AlignUp(reinterpret_cast<uintptr_t>(memory.data()), page);
  const uint64_t end = AlignDown(reinterpret_cast<uintptr_t>(memory.data()) + memory.size(), page);
  // Only a hint: a kernel without it (before 5.14) faults the pages in as they are used.
  if (begin < end) {
    (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
  }
}

std::vector<uint8_t> PopulatedCopy(std::span<const uint8_t> bytes) {
  std::vector<uint8_t> copy;
  copy.reserve(bytes.size());
  // The vector's own allocation, not yet its elements: the hint changes no byte.
  PopulatePages({copy.data(), copy.capacity()});
  copy.assign(bytes.begin(), bytes.end());
  return copy;
}

Result<std::vector<AlignedBuffer>> ReadEach(BlockIo& io, std::span<const ByteRange> ranges) {
  std::vector<AlignedBuffer> buffers;
  std::vector<IoSpan> requests;
  for (const ByteRange& r : ranges) {
    buffers.push_back(AlignedBuffer::Populated(
        static_cast<size_t>(AlignUp(r.length, AlignedBuffer::kAlignment))));
    if (r.length > 0) requests.push_back({buffers.back().data(), r.length, r.offset});
  }
  if (Status read = io.Read(requests); !read) return read.error();
  return buffers;
}

Status FdBlockIo::Read(std::span<const IoSpan> requests) {
  return TransferAll(fd_.get(), TransferKind::kRead, requests, name_);
}

Status FdBlockIo::Write(std::span<const IoSpan> requests) {
  return TransferAll(fd_.get(), TransferKind::kWrite, requests, name_);
}

Status FdBlockIo::Flush() {
  // On a block device fdatasync() sends a cache flush to the disk; on a file it also commits
  // the metadata needed to read the data back (extent conversion of preallocated space).
  while (::fdatasync(fd_.get()) != 0) {
    if (errno != EINTR) return ErrnoError(errno, fmt::format("cannot flush '{}'", name_));
  }
  return {};
}

Result<std::unique_ptr<FdBlockIo>> OpenDirectIo(const std::string& path, uint64_t size_bytes,
                                                int reopen_fd) {
  const std::string open_path = reopen_fd >= 0 ? fmt::format("/proc/self/fd/{}", reopen_fd) : path;
  UniqueFd fd(::open(open_path.c_str(), O_RDWR | O_CLOEXEC | O_DIRECT));
  if (!fd.valid() && errno == EINVAL) {
    // The file system has no O_DIRECT (tmpfs). Buffered writes are as durable after fdatasync.
    fd.reset(::open(open_path.c_str(), O_RDWR | O_CLOEXEC));
  }
  if (!fd.valid()) return ErrnoError(errno, fmt::format("cannot open '{}' for writing", path));
  return std::make_unique<FdBlockIo>(std::move(fd), path, size_bytes);
}

}  // namespace partalign
