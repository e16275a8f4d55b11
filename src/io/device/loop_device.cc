// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/device/loop_device.h"

#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "io/util/unique_fd.h"

namespace partalign {
namespace {

// Free devices another program grabbed between LOOP_CTL_GET_FREE and LOOP_CONFIGURE.
constexpr int kAttachAttempts = 16;

}  // namespace

Result<std::string> AttachLoop(const std::string& file) {
  UniqueFd control(::open("/dev/loop-control", O_RDWR | O_CLOEXEC));
  if (!control.valid()) return ErrnoError(errno, "cannot open '/dev/loop-control'");
  UniqueFd backing(::open(file.c_str(), O_RDWR | O_DIRECT | O_CLOEXEC));
  if (!backing.valid()) return ErrnoError(errno, fmt::format("cannot open '{}'", file));
  for (int attempt = 0; attempt < kAttachAttempts; ++attempt) {
    const int number = ::ioctl(control.get(), LOOP_CTL_GET_FREE);
    if (number < 0) return ErrnoError(errno, "no free loop device (LOOP_CTL_GET_FREE)");
    const std::string path = fmt::format("/dev/loop{}", number);
    UniqueFd device(::open(path.c_str(), O_RDWR | O_CLOEXEC));
    if (!device.valid()) return ErrnoError(errno, fmt::format("cannot open '{}'", path));
    loop_config config{};
    config.fd = static_cast<uint32_t>(backing.get());
    config.info.lo_flags = LO_FLAGS_DIRECT_IO | LO_FLAGS_PARTSCAN;
    std::strncpy(reinterpret_cast<char*>(config.info.lo_file_name), file.c_str(), LO_NAME_SIZE - 1);
    if (::ioctl(device.get(), LOOP_CONFIGURE, &config) == 0) return path;
    if (errno != EBUSY) {
      return ErrnoError(errno, fmt::format("cannot attach '{}' to '{}'", file, path));
    }
  }
  return MakeError(fmt::format("cannot attach '{}': every free loop device was taken first", file));
}

Status DetachLoop(const std::string& path) {
  UniqueFd device(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!device.valid()) return ErrnoError(errno, fmt::format("cannot open '{}'", path));
  if (::ioctl(device.get(), LOOP_CLR_FD, 0) != 0) {
    return ErrnoError(errno, fmt::format("cannot detach '{}'", path));
  }
  return {};
}

}  // namespace partalign
