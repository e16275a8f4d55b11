// SPDX-License-Identifier: GPL-3.0-or-later
// A loop device attached to an image file for the duration of a test. The destructor deletes
// every partition node the test created (BLKPG; they outlive the loop device otherwise, see
// environment.md) and detaches the device by its own name, also when the test fails.
#pragma once

#include <memory>
#include <string>

namespace partalign::test {

class LoopDevice {
 public:
  /// Attaches `image` with the given logical sector size; throws (failing the test) on error.
  LoopDevice(const std::string& image, unsigned sector_size, bool direct_io = false);
  ~LoopDevice();
  LoopDevice(const LoopDevice&) = delete;
  LoopDevice& operator=(const LoopDevice&) = delete;

  const std::string& path() const { return path_; }  ///< "/dev/loop3"
  std::string name() const;                          ///< "loop3"
  std::string PartitionPath(int number) const;       ///< "/dev/loop3p1"

  /// Deletes all partition nodes of this device (BLKPG_DEL_PARTITION). Returns how many.
  int DeletePartitions() const;

 private:
  std::string path_;
};

/// Deletes all partition nodes of the whole loop device `device` ("/dev/loop3") that sysfs
/// lists, with BLKPG_DEL_PARTITION. Returns how many.
int DeletePartitionNodes(const std::string& device);

}  // namespace partalign::test
