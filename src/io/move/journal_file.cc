// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/move/journal_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include <fmt/format.h>

#include "io/device/in_use.h"
#include "io/util/text_file.h"

namespace partalign {
namespace {

// O_DIRECT for the journal's data path when the file system has it; buffered I/O is as safe
// (every write the recovery relies on is followed by fdatasync), only slower.
UniqueFd OpenMaybeDirect(const std::string& path, int flags, mode_t mode = 0) {
  UniqueFd fd(::open(path.c_str(), flags | O_DIRECT, mode));
  if (!fd.valid() && errno == EINVAL) fd.reset(::open(path.c_str(), flags, mode));
  return fd;
}

// An existing journal, a user-named file: regular files only, checked before anything is read
// (io/util/text_file.h), with O_DIRECT when the file system has it.
Result<UniqueFd> OpenExistingJournal(const std::string& path, int flags) {
  Result<UniqueFd> fd = OpenRegularFile(path, "journal", flags | O_DIRECT);
  if (!fd && fd.error().errno_value == EINVAL) fd = OpenRegularFile(path, "journal", flags);
  return fd;
}

}  // namespace

Status LockJournal(int fd, const std::string& path) {
  return RetryWhileBusy([&]() -> Status {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return {};
    if (errno == EWOULDBLOCK) {
      return Error{fmt::format("the journal '{}' is in use by another partalign process", path),
                   EWOULDBLOCK};
    }
    return ErrnoError(errno, fmt::format("cannot lock the journal '{}'", path));
  });
}

std::string AbsolutePath(const std::string& path) {
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  return ec ? path : absolute.lexically_normal().string();
}

Status SyncParentDirectory(const std::string& path) {
  std::filesystem::path dir = std::filesystem::path(AbsolutePath(path)).parent_path();
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid())
    return ErrnoError(errno, fmt::format("cannot open directory '{}'", dir.string()));
  if (::fsync(fd.get()) != 0) {
    return ErrnoError(errno, fmt::format("cannot sync directory '{}'", dir.string()));
  }
  return {};
}

Result<std::unique_ptr<FdBlockIo>> CreateJournalFile(const std::string& path, uint64_t size_bytes) {
  UniqueFd fd = OpenMaybeDirect(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (!fd.valid()) {
    if (errno == EEXIST) {
      return MakeError(fmt::format(
          "the journal '{}' already exists; it may belong to an unfinished move (see 'partalign "
          "resume'); choose another path",
          path));
    }
    return ErrnoError(errno, fmt::format("cannot create the journal '{}'", path));
  }
  if (Status locked = LockJournal(fd.get(), path); !locked) return locked.error();
  // fallocate(2), not posix_fallocate(3): glibc's emulation writes single bytes, which O_DIRECT
  // refuses.
  int rc = ::fallocate(fd.get(), 0, 0, static_cast<off_t>(size_bytes)) == 0 ? 0 : errno;
  if (rc == EOPNOTSUPP) {
    // No preallocation on this file system: set the size; running out of space then shows up
    // as a failed journal write, before the device write it would have protected.
    rc = ::ftruncate(fd.get(), static_cast<off_t>(size_bytes)) == 0 ? 0 : errno;
  }
  if (rc != 0) {
    ::unlink(path.c_str());
    return ErrnoError(
        rc, fmt::format("cannot reserve {} bytes for the journal '{}'", size_bytes, path));
  }
  if (::fsync(fd.get()) != 0) {
    int err = errno;
    ::unlink(path.c_str());
    return ErrnoError(err, fmt::format("cannot sync the journal '{}'", path));
  }
  if (Status synced = SyncParentDirectory(path); !synced) {
    ::unlink(path.c_str());
    return synced.error();
  }
  return std::make_unique<FdBlockIo>(std::move(fd), path, size_bytes);
}

Result<std::unique_ptr<FdBlockIo>> OpenJournalFile(const std::string& path) {
  Result<UniqueFd> fd = OpenExistingJournal(path, O_RDWR);
  if (!fd) return fd.error();
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) {
    return ErrnoError(errno, fmt::format("cannot stat the journal '{}'", path));
  }
  if (Status locked = LockJournal(fd->get(), path); !locked) return locked.error();
  return std::make_unique<FdBlockIo>(std::move(*fd), path, static_cast<uint64_t>(st.st_size));
}

Result<std::unique_ptr<FdBlockIo>> OpenJournalForReading(const std::string& path) {
  Result<UniqueFd> fd = OpenRegularFile(path, "journal", O_RDONLY);
  if (!fd) return fd.error();
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) {
    return ErrnoError(errno, fmt::format("cannot stat the journal '{}'", path));
  }
  return std::make_unique<FdBlockIo>(std::move(*fd), path, static_cast<uint64_t>(st.st_size));
}

Status RemoveJournalFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return ErrnoError(errno, fmt::format("cannot remove the journal '{}'", path));
  }
  return SyncParentDirectory(path);
}

}  // namespace partalign
