// SPDX-License-Identifier: GPL-3.0-or-later
// A file system mounted for the duration of a test; unmounted by the destructor, also when the
// test fails.
#pragma once

#include <string>

namespace partalign::test {

class MountPoint {
 public:
  /// Mounts `device` on `directory` with `options` ("ro", "" for defaults); throws (failing the
  /// test) on error.
  MountPoint(const std::string& device, const std::string& directory,
             const std::string& options = "");
  ~MountPoint();
  MountPoint(const MountPoint&) = delete;
  MountPoint& operator=(const MountPoint&) = delete;

  const std::string& path() const { return directory_; }
  /// Unmounts now (the destructor then does nothing); false if umount failed.
  bool Unmount();

 private:
  std::string directory_;
  bool mounted_ = false;
};

}  // namespace partalign::test
