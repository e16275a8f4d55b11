// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/util/durable_file.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include <fmt/format.h>

#include "io/util/unique_fd.h"

namespace partalign {
namespace {

Status WriteFully(int fd, const std::string& path, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, fmt::format("cannot write '{}'", path));
    }
    done += static_cast<size_t>(n);
  }
  return {};
}

Status MakeDirectories(const std::string& dir, const DurableFileOptions& options) {
  std::error_code ec;
  std::filesystem::path so_far;
  for (const std::filesystem::path& part : std::filesystem::path(dir)) {
    so_far /= part;
    if (std::filesystem::is_directory(so_far, ec)) continue;
    if (::mkdir(so_far.c_str(), options.dir_mode) != 0 && errno != EEXIST) {
      return ErrnoError(
          errno, fmt::format("cannot create the {} directory '{}'", options.what, so_far.string()));
    }
  }
  if (!std::filesystem::is_directory(dir, ec)) {
    return MakeError(fmt::format("{} directory '{}' is not a directory", options.what, dir));
  }
  return {};
}

}  // namespace

Result<std::string> WriteFileDurably(const std::string& dir, const std::string& file_name,
                                     const std::string& text, const DurableFileOptions& options) {
  if (Status s = MakeDirectories(dir, options); !s) return s.error();
  const std::string path = dir + "/" + file_name;
  const std::string temp = dir + "/." + file_name + ".tmp";
  {
    UniqueFd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, options.file_mode));
    if (!fd.valid()) return ErrnoError(errno, fmt::format("cannot create '{}'", temp));
    Status s = WriteFully(fd.get(), temp, text);
    if (s && ::fsync(fd.get()) != 0) s = ErrnoError(errno, fmt::format("cannot fsync '{}'", temp));
    if (!s) {
      ::unlink(temp.c_str());
      return s.error();
    }
  }
  const unsigned flags = options.replace ? 0 : RENAME_NOREPLACE;
  if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, path.c_str(), flags) != 0) {
    int err = errno;
    ::unlink(temp.c_str());
    return ErrnoError(err, fmt::format("cannot rename '{}' to '{}'", temp, path));
  }
  UniqueFd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd.valid() || ::fsync(dir_fd.get()) != 0) {
    return ErrnoError(errno, fmt::format("cannot fsync the {} directory '{}'", options.what, dir));
  }
  return path;
}

Status RemoveFileDurably(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return ErrnoError(errno, fmt::format("cannot remove '{}'", path));
  }
  const std::string dir = std::filesystem::path(path).parent_path().string();
  UniqueFd dir_fd(::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd.valid() && ::fsync(dir_fd.get()) != 0) {
    return ErrnoError(errno, fmt::format("cannot fsync '{}'", dir));
  }
  return {};
}

}  // namespace partalign
