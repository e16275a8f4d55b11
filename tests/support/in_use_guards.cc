// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/in_use_guards.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <stdexcept>

#include "support/run_command.h"

namespace partalign::test {
MountGuard::MountGuard(const std::string& node) : mount_point_(dir_.File("mnt")) {
  RunOrThrow({"mkfs.ext4", "-q", "-F", node});
  RunOrThrow({"mkdir", mount_point_});
  RunOrThrow({"mount", "-o", "ro,noload", node, mount_point_});
}

MountGuard::~MountGuard() { RunCommand({"umount", mount_point_}); }

SwapGuard::SwapGuard(const std::string& node) : node_(node) {
  RunOrThrow({"mkswap", "-q", node});
  RunOrThrow({"swapon", node});
}

SwapGuard::~SwapGuard() { RunCommand({"swapoff", node_}); }

HoldGuard::HoldGuard(const std::string& path, bool flock_only) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (flock_only ? 0 : O_EXCL));
  if (fd_ < 0) throw std::runtime_error("cannot open " + path);
  if (flock_only && ::flock(fd_, LOCK_EX) != 0) throw std::runtime_error("cannot flock " + path);
}

HoldGuard::~HoldGuard() {
  if (fd_ >= 0) ::close(fd_);
}

std::string DiffOutside(const std::string& a, const std::string& b, unsigned long long skip_begin,
                        unsigned long long skip_end) {
  RunCommand({"sync"});
  std::string x = ReadFile(a), y = ReadFile(b);
  if (x.size() != y.size()) return "sizes differ";
  for (size_t i = 0; i < x.size(); ++i) {
    if (i == skip_begin) i = skip_end;
    if (i >= x.size()) break;
    if (x[i] != y[i]) return "byte " + std::to_string(i) + " differs";
  }
  return "";
}

}  // namespace partalign::test
