// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/device/zero_scan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "io/block/block_io.h"
#include "io/block/uring_batch.h"
#include "io/device/target.h"
#include "io/util/unique_fd.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// Large reads: the scan is bound by the device, and a few MiB per call keep syscalls out of it.
constexpr size_t kScanChunkBytes = 4 * kMiB;
// A range at least this long (a proof of a whole partition or tail, not a probe's head) is read
// with O_DIRECT, kChunksInFlight chunks at once: at the device's speed, and without filling the
// page cache with what is read once.
constexpr uint64_t kDirectScanMinBytes = 16 * kMiB;
constexpr size_t kChunksInFlight = 4;
// FindFirstNonZeroInEach: ranges up to this long are read in batches of at most this many bytes
// in flight (16 partition heads of 1 MiB).
constexpr uint64_t kBatchRangeMaxBytes = 4 * kMiB;
constexpr uint64_t kBatchBytes = 16 * kMiB;
// O_DIRECT offsets and lengths: the logical block of every disk partalign reads (4Kn disks
// refuse 512-byte units: those reads fail, and the scan goes on buffered).
constexpr uint64_t kDirectUnit = 512;
// How often progress is reported.
constexpr uint64_t kProgressEveryBytes = 64 * kMiB;

// The offset of the first non-zero byte of buffer[0, n), or n. Word by word: a scan of a big
// partition is mostly this loop.
size_t FirstNonZero(const uint8_t* buffer, size_t n) {
  size_t i = 0;
  for (; i + sizeof(uint64_t) <= n; i += sizeof(uint64_t)) {
    uint64_t word;
    std::memcpy(&word, buffer + i, sizeof word);
    if (word != 0) break;
  }
  for (; i < n; ++i) {
    if (buffer[i] != 0) return i;
  }
  return n;
}

// The next data at or after `at`, within [at, end): SEEK_DATA, or `at` itself where the file
// system or device cannot tell (every byte then counts as data and is read). `end` when the
// rest is a hole.
uint64_t NextData(int fd, uint64_t at, uint64_t end) {
  off_t data = ::lseek(fd, static_cast<off_t>(at), SEEK_DATA);
  if (data < 0) return errno == ENXIO ? end : at;
  return std::min<uint64_t>(static_cast<uint64_t>(data), end);
}

// Where the data run starting at `at` ends (SEEK_HOLE), at most `end`.
uint64_t NextHole(int fd, uint64_t at, uint64_t end) {
  off_t hole = ::lseek(fd, static_cast<off_t>(at), SEEK_HOLE);
  if (hole < 0 || static_cast<uint64_t>(hole) <= at) return end;
  return std::min<uint64_t>(static_cast<uint64_t>(hole), end);
}

// `fd` opened again read-only with O_DIRECT (through /proc/self/fd: the same file even if its
// path changed), or an invalid fd where the device or file system refuses it (tmpfs).
UniqueFd ReopenDirect(int fd) {
  const std::string self = fmt::format("/proc/self/fd/{}", fd);
  return UniqueFd(::open(self.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT));
}

// Reads up to kChunksInFlight chunks of [at, run_end) through `direct` at once, whole
// kDirectUnit blocks only, and looks for the first byte that is not zero: its offset, or nullopt
// with `*read` the bytes examined (0 when nothing could be read this way: the caller reads
// buffered, which reports a real error as such).
std::optional<uint64_t> ScanDirect(int direct, const std::string& path, uint64_t at,
                                   uint64_t run_end, std::vector<AlignedBuffer>* chunks,
                                   uint64_t* read) {
  *read = 0;
  std::vector<IoSpan> requests;
  uint64_t next = at;
  for (AlignedBuffer& chunk : *chunks) {
    const uint64_t want =
        std::min<uint64_t>(chunk.size(), (run_end - next) / kDirectUnit * kDirectUnit);
    if (want == 0) break;
    requests.push_back({chunk.data(), want, next});
    next += want;
  }
  if (requests.empty() || !TransferAll(direct, TransferKind::kRead, requests, path)) {
    return std::nullopt;
  }
  for (const IoSpan& r : requests) {
    if (size_t i = FirstNonZero(r.data, static_cast<size_t>(r.length)); i < r.length) {
      return r.offset + i;
    }
  }
  *read = next - at;
  return std::nullopt;
}

}  // namespace

bool IsAllHoles(int fd, uint64_t offset, uint64_t length) {
  off_t data = ::lseek(fd, static_cast<off_t>(offset), SEEK_DATA);
  if (data < 0) return errno == ENXIO;  // ENXIO: no data after offset; else unsupported
  return static_cast<uint64_t>(data) >= offset + length;
}

Result<std::optional<uint64_t>> FindFirstNonZero(int fd, const std::string& path, uint64_t offset,
                                                 uint64_t length,
                                                 const ZeroScanProgress& progress) {
  const uint64_t end = offset + length;
  if (end < offset) return MakeError(fmt::format("'{}': byte range past 2^64", path));
  std::vector<uint8_t> buffer(static_cast<size_t>(std::min<uint64_t>(kScanChunkBytes, length)));
  UniqueFd direct;
  std::vector<AlignedBuffer> chunks;
  if (length >= kDirectScanMinBytes && offset % kDirectUnit == 0) {
    direct = ReopenDirect(fd);
    for (size_t i = 0; direct.valid() && i < kChunksInFlight; ++i) {
      chunks.emplace_back(kScanChunkBytes);
    }
  }
  uint64_t at = offset;
  uint64_t reported = 0;
  while (at < end) {
    at = NextData(fd, at, end);
    if (at >= end) break;
    const uint64_t run_end = NextHole(fd, at, end);
    while (at < run_end) {
      if (direct.valid() && at % kDirectUnit == 0) {
        uint64_t read = 0;
        if (std::optional<uint64_t> found =
                ScanDirect(direct.get(), path, at, run_end, &chunks, &read)) {
          return std::optional<uint64_t>(*found - offset);
        }
        if (read == 0) {
          direct.reset();  // refused or failed: the rest is read buffered
        } else {
          at += read;
          if (progress && at - offset - reported >= kProgressEveryBytes) {
            reported = at - offset;
            progress(reported, length);
          }
          continue;
        }
      }
      const size_t want = static_cast<size_t>(std::min<uint64_t>(buffer.size(), run_end - at));
      Result<size_t> got = ReadAt(fd, buffer.data(), want, at, path);
      if (!got) return got.error();
      if (*got < want) {
        return MakeError(
            fmt::format("'{}': cannot read byte {} (the end of the disk or image is "
                        "at byte {})",
                        path, at + *got, at + *got));
      }
      if (size_t i = FirstNonZero(buffer.data(), want); i < want) {
        return std::optional<uint64_t>(at + i - offset);
      }
      at += want;
      if (progress && at - offset - reported >= kProgressEveryBytes) {
        reported = at - offset;
        progress(reported, length);
      }
    }
  }
  if (progress) progress(length, length);
  return std::optional<uint64_t>();
}

Result<std::vector<std::optional<uint64_t>>> FindFirstNonZeroInEach(
    int fd, const std::string& path, std::span<const ByteRange> ranges) {
  std::vector<std::optional<uint64_t>> found(ranges.size());
  std::vector<bool> scanned(ranges.size(), false);
  auto direct_readable = [](const ByteRange& r) {
    return r.length > 0 && r.length <= kBatchRangeMaxBytes && r.offset % kDirectUnit == 0 &&
           r.length % kDirectUnit == 0;
  };
  auto room = [](const ByteRange& r) {  // a range's bytes in the pool, from a page of its own
    return static_cast<size_t>((r.length + AlignedBuffer::kAlignment - 1) /
                               AlignedBuffer::kAlignment * AlignedBuffer::kAlignment);
  };
  size_t wanted = 0;
  for (const ByteRange& r : ranges) {
    if (direct_readable(r)) wanted = std::min<size_t>(wanted + room(r), kBatchBytes);
  }
  // A regular file's ranges are left to FindFirstNonZero: it skips their holes, and the file's
  // page cache outlives the descriptor (a block device's is emptied at its last close), so
  // buffered reads of an image probed again are served from memory.
  struct stat st {};
  UniqueFd direct;
  if (wanted > 0 && ::fstat(fd, &st) == 0 && S_ISBLK(st.st_mode)) direct = ReopenDirect(fd);
  if (direct.valid()) {
    AlignedBuffer pool(wanted);
    size_t next = 0;
    while (next < ranges.size()) {
      // One batch: the next ranges that fit in the pool.
      std::vector<IoSpan> requests;
      std::vector<size_t> which;
      size_t used = 0;
      for (; next < ranges.size(); ++next) {
        const ByteRange& r = ranges[next];
        if (!direct_readable(r)) continue;
        if (used + room(r) > pool.size()) break;
        requests.push_back({pool.data() + used, r.length, r.offset});
        which.push_back(next);
        used += room(r);
      }
      // A batch that cannot be read so is left to FindFirstNonZero, range by range.
      if (requests.empty() || !TransferAll(direct.get(), TransferKind::kRead, requests, path)) {
        continue;
      }
      for (size_t k = 0; k < requests.size(); ++k) {
        const size_t n = static_cast<size_t>(requests[k].length);
        if (size_t i = FirstNonZero(requests[k].data, n); i < n) found[which[k]] = i;
        scanned[which[k]] = true;
      }
    }
  }
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (scanned[i]) continue;
    Result<std::optional<uint64_t>> one =
        FindFirstNonZero(fd, path, ranges[i].offset, ranges[i].length);
    if (!one) return one.error();
    found[i] = *one;
  }
  return found;
}

}  // namespace partalign
