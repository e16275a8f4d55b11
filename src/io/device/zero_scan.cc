// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/device/zero_scan.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "io/device/target.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// Large reads: the scan is bound by the device, and a few MiB per call keep syscalls out of it.
constexpr size_t kScanChunkBytes = 4 * kMiB;
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
  uint64_t at = offset;
  uint64_t reported = 0;
  while (at < end) {
    at = NextData(fd, at, end);
    if (at >= end) break;
    const uint64_t run_end = NextHole(fd, at, end);
    while (at < run_end) {
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

}  // namespace partalign
