// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/resize/scratch_copy.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "io/block/block_io.h"
#include "io/device/target.h"
#include "partalign/resize/shrink_way.h"
#include "partalign/topology/alignment.h"

namespace partalign {
namespace {

/// Bytes read and compared at a time.
constexpr uint64_t kScratchPieceBytes = 1 * kMiB;
/// Copies are made in whole 4 KiB blocks (an O_DIRECT disk needs sector-aligned reads).
constexpr uint64_t kScratchAlignBytes = 4096;

// Sorted, merged union of `ranges`, clipped to [0, limit).
std::vector<ByteExtent> SortedUnion(std::vector<ByteExtent> ranges, uint64_t limit) {
  std::sort(ranges.begin(), ranges.end(), [](const ByteExtent& a, const ByteExtent& b) {
    return a.offset_bytes < b.offset_bytes;
  });
  std::vector<ByteExtent> out;
  for (ByteExtent r : ranges) {
    if (r.offset_bytes >= limit || r.length_bytes == 0) continue;
    r.length_bytes = std::min(r.end(), limit) - r.offset_bytes;
    if (!out.empty() && r.offset_bytes <= out.back().end()) {
      out.back().length_bytes = std::max(out.back().end(), r.end()) - out.back().offset_bytes;
    } else {
      out.push_back(r);
    }
  }
  return out;
}

Status ReadScratchBytes(int fd, uint8_t* buffer, uint64_t length, uint64_t offset,
                        const std::string& path) {
  Result<size_t> got = ReadAt(fd, buffer, length, offset, path);
  if (!got) return got.error();
  if (*got != length) {
    return MakeError(fmt::format("'{}' ends before byte {}", path, offset + length));
  }
  return {};
}

Status WriteScratchBytes(int fd, const uint8_t* buffer, uint64_t length, uint64_t offset) {
  while (length > 0) {
    const ssize_t n = ::pwrite(fd, buffer, length, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return ErrnoError(n < 0 ? errno : EIO, "cannot write the scratch copy");
    buffer += n;
    length -= static_cast<uint64_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return {};
}

constexpr std::string_view kScratchPrefix = ".partalign-scratch.";

// Removes the scratch copies in `dir` of processes that no longer run (a crash's leftovers).
void RemoveStaleScratches(const std::string& dir) {
  std::error_code ec;
  for (const std::filesystem::directory_entry& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(kScratchPrefix, 0) != 0) continue;
    const std::string rest = name.substr(kScratchPrefix.size());
    const long pid = std::strtol(rest.c_str(), nullptr, 10);
    if (pid <= 0 || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    std::filesystem::remove(e.path(), ec);
  }
}

}  // namespace

Result<ScratchCopy> ScratchCopy::Create(const std::string& dir, uint64_t length_bytes) {
  RemoveStaleScratches(dir);
  std::string name = fmt::format("{}/{}{}.XXXXXX", dir, kScratchPrefix, ::getpid());
  UniqueFd fd(::mkostemp(name.data(), O_CLOEXEC));
  if (!fd.valid()) {
    return ErrnoError(errno, fmt::format("cannot make a scratch copy in '{}'", dir));
  }
  ScratchCopy copy(std::move(fd), name, length_bytes);
  if (::ftruncate(copy.fd(), static_cast<off_t>(length_bytes)) != 0) {
    return ErrnoError(errno, fmt::format("cannot size the scratch copy '{}'", name));
  }
  return copy;
}

ScratchCopy::ScratchCopy(ScratchCopy&& other) noexcept
    : fd_(std::move(other.fd_)),
      path_(std::exchange(other.path_, std::string())),
      length_bytes_(other.length_bytes_),
      copied_(std::move(other.copied_)) {}

ScratchCopy::~ScratchCopy() {
  if (!path_.empty()) ::unlink(path_.c_str());
}

Status ScratchCopy::Truncate(uint64_t length_bytes) {
  struct stat st {};
  if (::fstat(fd(), &st) != 0) return ErrnoError(errno, "cannot stat the scratch copy");
  if (static_cast<uint64_t>(st.st_size) <= length_bytes) return {};
  if (::ftruncate(fd(), static_cast<off_t>(length_bytes)) != 0) {
    return ErrnoError(errno, "cannot cut the scratch copy");
  }
  return {};
}

Status ScratchCopy::CopyIn(int disk_fd, const std::string& disk_path, uint64_t partition_offset,
                           const std::vector<ByteExtent>& ranges) {
  std::vector<ByteExtent> aligned;
  for (const ByteExtent& r : ranges) {
    const uint64_t first = AlignDown(r.offset_bytes, kScratchAlignBytes);
    aligned.push_back({first, AlignUp(r.end(), kScratchAlignBytes) - first});
  }
  aligned = SortedUnion(std::move(aligned), length_bytes_);
  AlignedBuffer buffer(kScratchPieceBytes);
  for (const ByteExtent& r : aligned) {
    for (uint64_t at = r.offset_bytes; at < r.end(); at += kScratchPieceBytes) {
      const uint64_t n = std::min(kScratchPieceBytes, r.end() - at);
      if (Status s = ReadScratchBytes(disk_fd, buffer.data(), n, partition_offset + at, disk_path);
          !s) {
        return s;
      }
      if (Status s = WriteScratchBytes(fd(), buffer.data(), n, at); !s) return s;
    }
  }
  copied_.insert(copied_.end(), aligned.begin(), aligned.end());
  copied_ = SortedUnion(std::move(copied_), length_bytes_);
  return {};
}

Result<std::vector<ByteExtent>> ScratchCopy::DataExtents(uint64_t limit) const {
  std::vector<ByteExtent> out;
  off_t at = 0;
  while (static_cast<uint64_t>(at) < limit) {
    const off_t data = ::lseek(fd(), at, SEEK_DATA);
    if (data < 0) {
      if (errno == ENXIO) break;  // no data after `at`
      return ErrnoError(errno, "cannot read the scratch copy's data map");
    }
    if (static_cast<uint64_t>(data) >= limit) break;
    off_t hole = ::lseek(fd(), data, SEEK_HOLE);
    if (hole < 0) return ErrnoError(errno, "cannot read the scratch copy's data map");
    const uint64_t end = std::min<uint64_t>(static_cast<uint64_t>(hole), limit);
    out.push_back({static_cast<uint64_t>(data), end - static_cast<uint64_t>(data)});
    at = hole;
  }
  return out;
}

Result<std::vector<uint8_t>> ScratchCopy::Read(uint64_t offset, uint64_t length) const {
  std::vector<uint8_t> bytes(length);
  Result<size_t> got = ReadAt(fd(), bytes.data(), length, offset, "the scratch copy");
  if (!got) return got.error();
  bytes.resize(*got);
  bytes.resize(length, 0);  // past the end: zeros, as a hole
  return bytes;
}

Status ScratchCopy::Write(uint64_t offset, const std::vector<uint8_t>& bytes) {
  return WriteScratchBytes(fd(), bytes.data(), bytes.size(), offset);
}

Result<std::vector<TableUpdate>> ScratchCopy::Changes(int disk_fd, const std::string& disk_path,
                                                      uint64_t partition_offset,
                                                      uint64_t limit_bytes,
                                                      uint64_t sector_bytes) const {
  if (sector_bytes == 0 || kScratchPieceBytes % sector_bytes != 0) {
    return MakeError(fmt::format("a sector of {} bytes is not supported", sector_bytes));
  }
  struct stat st {};
  if (::fstat(fd(), &st) != 0) return ErrnoError(errno, "cannot stat the scratch copy");
  const uint64_t limit = std::min({limit_bytes, length_bytes_, static_cast<uint64_t>(st.st_size)}) /
                         sector_bytes * sector_bytes;
  Result<std::vector<ByteExtent>> data = DataExtents(limit);
  if (!data) return data.error();
  std::vector<ByteExtent> candidates = copied_;
  for (const ByteExtent& d : *data) {
    const uint64_t first = AlignDown(d.offset_bytes, sector_bytes);
    candidates.push_back({first, AlignUp(d.end(), sector_bytes) - first});
  }
  candidates = SortedUnion(std::move(candidates), limit);

  std::vector<ByteExtent> changed;
  AlignedBuffer on_disk(kScratchPieceBytes);
  std::vector<uint8_t> copy(kScratchPieceBytes);
  for (const ByteExtent& r : candidates) {
    for (uint64_t at = r.offset_bytes; at < r.end(); at += kScratchPieceBytes) {
      const uint64_t n = std::min(kScratchPieceBytes, r.end() - at);
      if (Status s = ReadScratchBytes(disk_fd, on_disk.data(), n, partition_offset + at, disk_path);
          !s) {
        return s.error();
      }
      Result<size_t> got = ReadAt(fd(), copy.data(), n, at, "the scratch copy");
      if (!got) return got.error();
      std::fill(copy.begin() + static_cast<ptrdiff_t>(*got),
                copy.begin() + static_cast<ptrdiff_t>(n), 0);
      for (uint64_t s = 0; s < n; s += sector_bytes) {
        const uint64_t len = std::min(sector_bytes, n - s);
        if (std::memcmp(on_disk.data() + s, copy.data() + s, len) == 0) continue;
        if (!changed.empty() && changed.back().end() == at + s) {
          changed.back().length_bytes += len;
        } else {
          changed.push_back({at + s, len});
        }
      }
    }
  }
  std::vector<TableUpdate> updates;
  for (const ByteExtent& c :
       CoalesceChanges(std::move(changed), sector_bytes, kChangeGapBytes, kMaxChangeRanges)) {
    const uint64_t length = std::min(c.end(), limit) - c.offset_bytes;
    TableUpdate update;
    update.offset_bytes = partition_offset + c.offset_bytes;
    AlignedBuffer old_bytes(AlignUp(length, AlignedBuffer::kAlignment));
    if (Status s =
            ReadScratchBytes(disk_fd, old_bytes.data(), length, update.offset_bytes, disk_path);
        !s) {
      return s.error();
    }
    update.old_bytes.assign(old_bytes.data(), old_bytes.data() + length);
    Result<std::vector<uint8_t>> new_bytes = Read(c.offset_bytes, length);
    if (!new_bytes) return new_bytes.error();
    update.new_bytes = std::move(*new_bytes);
    updates.push_back(std::move(update));
  }
  return updates;
}

}  // namespace partalign
