// SPDX-License-Identifier: GPL-3.0-or-later
// Ways of using a disk that apply and restore must refuse, each undone by its destructor (also
// when the test fails): a mounted filesystem, active swap, an exclusive open, a flock, a loop
// device on top of a partition (use LoopDevice for that).
#pragma once

#include <string>

#include "support/temp_dir.h"

namespace partalign::test {

/// mkfs.ext4 on `node` and mounts it read-only on a new directory (read-only, so that the disk
/// stays byte-identical while mounted). Unmounts in the destructor.
class MountGuard {
 public:
  explicit MountGuard(const std::string& node);
  ~MountGuard();
  MountGuard(const MountGuard&) = delete;
  MountGuard& operator=(const MountGuard&) = delete;
  const std::string& mount_point() const { return mount_point_; }

 private:
  TempDir dir_;
  std::string mount_point_;
};

/// mkswap + swapon on `node`; swapoff in the destructor.
class SwapGuard {
 public:
  explicit SwapGuard(const std::string& node);
  ~SwapGuard();
  SwapGuard(const SwapGuard&) = delete;
  SwapGuard& operator=(const SwapGuard&) = delete;

 private:
  std::string node_;
};

/// Holds `path` open with O_EXCL (a block device: as a mounted filesystem or device-mapper
/// would) or, with `flock_only`, open and flock(LOCK_EX)'ed (as sfdisk --lock or udev would).
class HoldGuard {
 public:
  HoldGuard(const std::string& path, bool flock_only);
  ~HoldGuard();
  HoldGuard(const HoldGuard&) = delete;
  HoldGuard& operator=(const HoldGuard&) = delete;

 private:
  int fd_ = -1;
};

/// "" when files `a` and `b` are identical outside [skip_begin, skip_end) (bytes), else the
/// first differing offset.
std::string DiffOutside(const std::string& a, const std::string& b, unsigned long long skip_begin,
                        unsigned long long skip_end);

}  // namespace partalign::test
