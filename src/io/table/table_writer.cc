// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/table/table_writer.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "io/device/target.h"

namespace partalign {
namespace {

Status WriteAll(int fd, const std::string& path, const uint8_t* data, size_t length,
                uint64_t offset) {
  size_t done = 0;
  while (done < length) {
    ssize_t n = ::pwrite(fd, data + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, fmt::format("cannot write '{}' at byte {}", path, offset + done));
    }
    if (n == 0) {
      return MakeError(fmt::format("cannot write '{}' at byte {}: no space", path, offset + done));
    }
    done += static_cast<size_t>(n);
  }
  return {};
}

// The test hooks: the same bytes in the same order, one sector per write.
class SectorByWrite {
 public:
  explicit SectorByWrite(const TableWriteHooks& hooks) : hooks_(hooks) {
    MaybeKill();  // N = 0: die before the first sector
  }
  Status Write(int fd, const std::string& path, uint64_t sector_size, const TableRange& r) {
    for (uint64_t at = 0; at < r.length_bytes; at += sector_size) {
      if (hooks_.sector_delay_us > 0) ::usleep(static_cast<useconds_t>(hooks_.sector_delay_us));
      if (hooks_.fail_after_sectors && written_ == *hooks_.fail_after_sectors) {
        return ErrnoError(EIO, fmt::format("cannot write '{}' at byte {} "
                                           "(PARTALIGN_TEST_FAIL_AFTER_SECTORS={})",
                                           path, r.offset_bytes + at, written_));
      }
      if (Status s = WriteAll(fd, path, r.new_bytes.data() + at, sector_size, r.offset_bytes + at);
          !s) {
        return s;
      }
      ++written_;
      MaybeKill();
    }
    return {};
  }

 private:
  void MaybeKill() const {
    if (hooks_.kill_after_sectors && written_ == *hooks_.kill_after_sectors) ::raise(SIGKILL);
  }
  const TableWriteHooks& hooks_;
  uint64_t written_ = 0;
};

}  // namespace

Status WriteTableRanges(int fd, const std::string& path, uint64_t sector_size,
                        const std::vector<TableRange>& ranges, const TableWriteHooks& hooks) {
  const bool by_sector =
      hooks.kill_after_sectors || hooks.fail_after_sectors || hooks.sector_delay_us > 0;
  std::optional<SectorByWrite> hooked;
  if (by_sector) hooked.emplace(hooks);
  for (const TableRange& r : ranges) {
    if (r.new_bytes.size() != r.length_bytes || r.length_bytes % sector_size != 0) {
      return MakeError(fmt::format("range at byte {}: {} bytes for {} ({}-byte sectors)",
                                   r.offset_bytes, r.new_bytes.size(), r.length_bytes,
                                   sector_size));
    }
    Status s = hooked ? hooked->Write(fd, path, sector_size, r)
                      : WriteAll(fd, path, r.new_bytes.data(), r.length_bytes, r.offset_bytes);
    if (!s) return s;
    // Ordering barrier: this range is on stable storage before the next one is written.
    if (::fdatasync(fd) != 0) {
      return ErrnoError(
          errno, fmt::format("cannot flush '{}' after writing byte {}", path, r.offset_bytes));
    }
  }
  return {};
}

Result<std::vector<uint8_t>> ReadExactly(int fd, const std::string& path, uint64_t offset,
                                         uint64_t length) {
  std::vector<uint8_t> bytes(length);
  Result<size_t> got = ReadAt(fd, bytes.data(), bytes.size(), offset, path);
  if (!got) return got.error();
  if (*got != length) {
    return MakeError(fmt::format("'{}' ends before byte {}", path, offset + length));
  }
  return bytes;
}

}  // namespace partalign
