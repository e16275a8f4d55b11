// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/table/table_writer.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "io/block/block_io.h"
#include "io/device/target.h"
#include "partalign/topology/alignment.h"

namespace partalign {
namespace {

// The table's sectors written with O_DIRECT, so that the disk is written those sectors and no
// other. A buffered write of one 512-byte sector is a read-modify-write of the kernel's block
// (4 KiB on most disks) in the whole disk's page cache, and it writes the block's other sectors
// back as that cache holds them: beside an EBR of a disk laid out in cylinders, the sectors of a
// partition that stays in use were written back as they were when apply first read the table,
// over what the partition's owner had written since through the partition's node
// (tests/io/table/table_writer_test.cc). What O_DIRECT cannot write is written through the
// page cache, as before: an image file whose file system refuses O_DIRECT or its alignment (no
// partition node caches an image's sectors), a table of 512-byte sectors read with --sector-size
// on a disk of 4096-byte ones (a write smaller than the disk's sector is a read-modify-write
// however it is made).
class DirectWrites {
 public:
  DirectWrites(int fd, const std::string& path) : fd_(fd), path_(path) {
    flags_ = ::fcntl(fd, F_GETFL);
    if (flags_ < 0) return;
    // A descriptor opened with O_DIRECT keeps it; another has it for the write, and back after.
    direct_ = (flags_ & O_DIRECT) != 0 || ::fcntl(fd, F_SETFL, flags_ | O_DIRECT) == 0;
  }
  ~DirectWrites() { Restore(); }
  DirectWrites(const DirectWrites&) = delete;
  DirectWrites& operator=(const DirectWrites&) = delete;

  Status Write(const uint8_t* data, size_t length, uint64_t offset) {
    if (direct_) {
      if (buffer_.size() < length) {
        buffer_ = AlignedBuffer(static_cast<size_t>(AlignUp(length, AlignedBuffer::kAlignment)));
      }
      std::memcpy(buffer_.data(), data, length);
      Status s = WriteAll(buffer_.data(), length, offset);
      if (s || s.error().errno_value != EINVAL) return s;
      Buffered();
    }
    return WriteAll(data, length, offset);
  }

 private:
  void Buffered() {
    if (direct_) ::fcntl(fd_, F_SETFL, flags_ & ~O_DIRECT);
    direct_ = false;
  }
  void Restore() {
    if (flags_ >= 0) ::fcntl(fd_, F_SETFL, flags_);
  }
  Status WriteAll(const uint8_t* data, size_t length, uint64_t offset) const {
    size_t done = 0;
    while (done < length) {
      ssize_t n = ::pwrite(fd_, data + done, length - done, static_cast<off_t>(offset + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        return ErrnoError(errno, fmt::format("cannot write '{}' at byte {}", path_, offset + done));
      }
      if (n == 0) {
        return MakeError(
            fmt::format("cannot write '{}' at byte {}: no space", path_, offset + done));
      }
      done += static_cast<size_t>(n);
    }
    return {};
  }

  int fd_;
  const std::string& path_;
  int flags_ = -1;
  bool direct_ = false;
  AlignedBuffer buffer_;
};

// The test hooks: the same bytes in the same order, one sector per write.
class SectorByWrite {
 public:
  explicit SectorByWrite(const TableWriteHooks& hooks) : hooks_(hooks) {
    MaybeKill();  // N = 0: die before the first sector
  }
  Status Write(DirectWrites& out, const std::string& path, uint64_t sector_size,
               const TableRange& r) {
    for (uint64_t at = 0; at < r.length_bytes; at += sector_size) {
      if (hooks_.sector_delay_us > 0) ::usleep(static_cast<useconds_t>(hooks_.sector_delay_us));
      if (hooks_.fail_after_sectors && written_ == *hooks_.fail_after_sectors) {
        return ErrnoError(EIO, fmt::format("cannot write '{}' at byte {} "
                                           "(PARTALIGN_TEST_FAIL_AFTER_SECTORS={})",
                                           path, r.offset_bytes + at, written_));
      }
      if (Status s = out.Write(r.new_bytes.data() + at, sector_size, r.offset_bytes + at); !s) {
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
  DirectWrites out(fd, path);
  for (const TableRange& r : ranges) {
    if (r.new_bytes.size() != r.length_bytes || r.length_bytes % sector_size != 0) {
      return MakeError(fmt::format("range at byte {}: {} bytes for {} ({}-byte sectors)",
                                   r.offset_bytes, r.new_bytes.size(), r.length_bytes,
                                   sector_size));
    }
    Status s = hooked ? hooked->Write(out, path, sector_size, r)
                      : out.Write(r.new_bytes.data(), r.length_bytes, r.offset_bytes);
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
