// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/move/device_costs.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include <fmt/format.h>

#include "io/block/block_io.h"
#include "io/util/unique_fd.h"

namespace partalign {
namespace {

constexpr size_t kProbeBytes = 8 << 20;
constexpr uint64_t kOrderedCycles = 64;

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Status WriteAll(int fd, const uint8_t* data, size_t length, uint64_t offset,
                const std::string& path) {
  while (length > 0) {
    const ssize_t n = ::pwrite(fd, data, length, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return ErrnoError(n < 0 ? errno : EIO, fmt::format("cannot write '{}'", path));
    data += n;
    length -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return {};
}

Status Flush(int fd, const std::string& path) {
  if (::fdatasync(fd) != 0) return ErrnoError(errno, fmt::format("cannot flush '{}'", path));
  return {};
}

// The stream pattern: kProbeBytes of `buffer` written at `offset` and flushed.
Result<double> StreamRate(int fd, const AlignedBuffer& buffer, uint64_t offset,
                          const std::string& probe) {
  const auto start = std::chrono::steady_clock::now();
  if (Status s = WriteAll(fd, buffer.data(), kProbeBytes, offset, probe); !s) return s.error();
  if (Status s = Flush(fd, probe); !s) return s.error();
  return static_cast<double>(kProbeBytes) / Since(start);
}

Result<DeviceCosts> Measure(int fd, const std::string& probe, uint64_t chunk,
                            const CostsDecided& decided, const CostsDecided& ordered_cheaper) {
  // In memory (huge pages where the kernel has them) before it is filled: 2049 small pages
  // faulted in one by one cost milliseconds of a move's start (docs/mover.md §10).
  AlignedBuffer buffer = AlignedBuffer::Populated(kProbeBytes + AlignedBuffer::kAlignment);
  // Not zeros: a file system that compresses or dedups would take them for free.
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i + 8 <= buffer.size(); i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::copy_n(reinterpret_cast<const uint8_t*>(&x), 8, buffer.data() + i);
  }
  DeviceCosts costs;
  costs.ordered_chunk_bytes = chunk;
  Result<double> stream = StreamRate(fd, buffer, 0, probe);
  if (!stream) return stream.error();
  costs.stream_bytes_per_second = *stream;
  if (chunk == 0) return costs;
  const uint64_t cycles =
      std::max<uint64_t>(1, std::min<uint64_t>(kOrderedCycles, kProbeBytes / chunk));
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < cycles;) {
    // The chunk (the device write and its flush), the digest block and the state block (each
    // a journal write and its flush).
    if (Status s = WriteAll(fd, buffer.data(), chunk, i * chunk, probe); !s) return s.error();
    if (Status s = Flush(fd, probe); !s) return s.error();
    for (int block = 0; block < 2; ++block) {
      if (Status s = WriteAll(fd, buffer.data() + kProbeBytes, AlignedBuffer::kAlignment,
                              kProbeBytes + block * AlignedBuffer::kAlignment, probe);
          !s) {
        return s.error();
      }
      if (Status s = Flush(fd, probe); !s) return s.error();
    }
    ++i;
    costs.ordered_cycles = i;
    costs.ordered_bytes_per_second = static_cast<double>(i * chunk) / Since(start);
    if (decided && i % kOrderedCyclesPerLook == 0 && i < cycles && decided(costs)) break;
  }
  if (ordered_cheaper && ordered_cheaper(costs)) {
    // Past the chunks and the two blocks: blocks the file system allocates now, as it did for
    // the first 8 MiB, not blocks it overwrites.
    Result<double> again = StreamRate(fd, buffer, 2 * kProbeBytes, probe);
    if (!again) return again.error();
    costs.stream_bytes_per_second = std::max(costs.stream_bytes_per_second, *again);
    costs.stream_samples = 2;
  }
  return costs;
}

}  // namespace

Result<DeviceCosts> MeasureDeviceCosts(const std::string& journal_path,
                                       uint64_t ordered_chunk_bytes, const CostsDecided& decided,
                                       const CostsDecided& ordered_cheaper) {
  const std::string probe = journal_path + ".probe";
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC;
  UniqueFd fd(::open(probe.c_str(), kFlags | O_DIRECT, 0600));
  if (!fd.valid() && errno == EINVAL) fd.reset(::open(probe.c_str(), kFlags, 0600));
  if (!fd.valid() && errno == EEXIST) {
    return Error{fmt::format("cannot create '{}': it exists (a move killed while it measured "
                             "leaves it behind; remove it)",
                             probe),
                 EEXIST};
  }
  if (!fd.valid()) return ErrnoError(errno, fmt::format("cannot create '{}'", probe));
  Result<DeviceCosts> costs =
      Measure(fd.get(), probe, ordered_chunk_bytes, decided, ordered_cheaper);
  fd.reset();
  if (::unlink(probe.c_str()) != 0 && costs) {
    return ErrnoError(errno, fmt::format("cannot remove '{}'", probe));
  }
  return costs;
}

}  // namespace partalign
