// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/util/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "io/util/unique_fd.h"

namespace partalign {
namespace {

// What a file that is not a regular file is, for the error message.
std::string_view FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "of an unknown kind";
}

}  // namespace

Result<UniqueFd> OpenRegularFile(const std::string& path, std::string_view what, int flags) {
  // O_NONBLOCK: opening a FIFO for reading would wait for a writer; O_NOCTTY: a terminal never
  // becomes ours. Neither changes anything for a regular file.
  UniqueFd fd(::open(path.c_str(), flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoError(errno, fmt::format("cannot open {} '{}'", what, path));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return ErrnoError(errno, fmt::format("cannot stat {} '{}'", what, path));
  }
  if (!S_ISREG(st.st_mode)) {
    return MakeError(
        fmt::format("{} '{}' is {}, not a regular file", what, path, FileKind(st.st_mode)));
  }
  const int status = ::fcntl(fd.get(), F_GETFL);
  if (status < 0 || ::fcntl(fd.get(), F_SETFL, status & ~O_NONBLOCK) != 0) {
    return ErrnoError(errno, fmt::format("cannot open {} '{}'", what, path));
  }
  return fd;
}

Result<std::string> ReadWholeFile(const std::string& path, std::string_view what,
                                  uint64_t max_bytes) {
  Result<UniqueFd> fd = OpenRegularFile(path, what, O_RDONLY);
  if (!fd) return fd.error();
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) {
    return ErrnoError(errno, fmt::format("cannot stat {} '{}'", what, path));
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes) {
    return MakeError(fmt::format("{} '{}' is {} bytes; a {} file is at most {}", what, path, size,
                                 what, FormatSize(max_bytes)));
  }
  // Read until end of file, never more than max_bytes + 1: the file may grow while it is read.
  std::string text;
  text.resize(static_cast<size_t>(size) + 1);
  size_t done = 0;
  while (true) {
    if (done == text.size()) {
      if (text.size() > max_bytes) {
        return MakeError(fmt::format("{} '{}' grew past {} while it was read", what, path,
                                     FormatSize(max_bytes)));
      }
      text.resize(std::min<uint64_t>(text.size() * 2, max_bytes + 1));
    }
    ssize_t n = ::read(fd->get(), text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, fmt::format("cannot read {} '{}'", what, path));
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  return text;
}

Status CheckReplaceableFile(const std::string& path, std::string_view what,
                            const std::string& keep) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {};
    return ErrnoError(errno, fmt::format("cannot write {} to '{}'", what, path));
  }
  if (!S_ISREG(st.st_mode)) {
    return MakeError(fmt::format("refusing to write {} to '{}': it is {}, not a regular file", what,
                                 path, FileKind(st.st_mode)));
  }
  struct stat kept {};
  if (!keep.empty() && ::stat(keep.c_str(), &kept) == 0 && kept.st_dev == st.st_dev &&
      kept.st_ino == st.st_ino) {
    return MakeError(
        fmt::format("refusing to write {} to '{}': it is '{}' itself", what, path, keep));
  }
  return {};
}

Status WriteFileAtomically(const std::string& path, std::string_view text) {
  const std::string temp = path + ".tmp";
  UniqueFd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) return ErrnoError(errno, fmt::format("cannot create '{}'", temp));
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::unlink(temp.c_str());
      return ErrnoError(err, fmt::format("cannot write '{}'", temp));
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0 || ::rename(temp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(temp.c_str());
    return ErrnoError(err, fmt::format("cannot write '{}'", path));
  }
  return {};
}

}  // namespace partalign
