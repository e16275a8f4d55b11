// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/device/target.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

namespace partalign {

Result<Target> OpenTarget(const std::string& path, OpenFlags flags) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return ErrnoError(errno, fmt::format("cannot open '{}'", path));
  }
  Target target;
  target.path = path;
  if (S_ISDIR(st.st_mode)) {
    return MakeError(fmt::format("'{}' is a directory, not a block device or image file", path));
  }
  if (S_ISBLK(st.st_mode)) {
    target.kind = TargetKind::kBlockDevice;
    target.major = major(st.st_rdev);
    target.minor = minor(st.st_rdev);
  } else if (S_ISREG(st.st_mode)) {
    target.kind = TargetKind::kImageFile;
  } else {
    return MakeError(fmt::format("'{}' is not a block device or image file", path));
  }

  int open_flags = O_CLOEXEC | (flags.write ? O_RDWR : O_RDONLY);
  if (flags.exclusive && target.kind == TargetKind::kBlockDevice) open_flags |= O_EXCL;
  if (flags.direct) open_flags |= O_DIRECT;
  target.fd.reset(::open(path.c_str(), open_flags));
  if (!target.fd.valid()) {
    int err = errno;
    if (err == EBUSY && flags.exclusive) {
      return Error{fmt::format("cannot open '{}' exclusively: it is in use (mounted, or held "
                               "by another device or program)",
                               path),
                   EBUSY};
    }
    return ErrnoError(err, fmt::format("cannot open '{}'", path));
  }

  if (target.kind == TargetKind::kBlockDevice) {
    uint64_t size = 0;
    if (::ioctl(target.fd.get(), BLKGETSIZE64, &size) != 0) {
      return ErrnoError(errno, fmt::format("cannot read the size of '{}'", path));
    }
    int sector_size = 0;
    if (::ioctl(target.fd.get(), BLKSSZGET, &sector_size) != 0) {
      return ErrnoError(errno, fmt::format("cannot read the sector size of '{}'", path));
    }
    if (size == 0) return MakeError(fmt::format("'{}' has no medium (size 0)", path));
    target.size_bytes = size;
    target.logical_sector_size = static_cast<uint64_t>(sector_size);
  } else {
    if (st.st_size == 0) return MakeError(fmt::format("image '{}' is empty", path));
    target.size_bytes = static_cast<uint64_t>(st.st_size);
  }
  return target;
}

void DropCachedPages(const Target& target) {
  // Also starts the write-back of dirty pages, which it leaves: they are newer than the disk.
  if (target.kind == TargetKind::kBlockDevice) {
    ::posix_fadvise(target.fd.get(), 0, 0, POSIX_FADV_DONTNEED);
  }
}

Result<size_t> ReadAt(int fd, void* buffer, size_t length, uint64_t offset,
                      const std::string& path) {
  size_t done = 0;
  auto* bytes = static_cast<char*>(buffer);
  while (done < length) {
    ssize_t n = ::pread(fd, bytes + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, fmt::format("cannot read '{}' at byte {}", path, offset + done));
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

}  // namespace partalign
