// SPDX-License-Identifier: GPL-3.0-or-later
// A disk for apply/restore tests: an image file partitioned by the real sfdisk, attached to a
// loop device with the given logical sector size, its partitions known to the kernel (partx -a,
// as a normal system would have them), everything removed by the destructors, also on failure.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "support/loop_device.h"
#include "support/temp_dir.h"

namespace partalign::test {

class PartitionedLoop {
 public:
  /// Throws (failing the test) when sfdisk, losetup or partx fail.
  PartitionedLoop(const std::string& sfdisk_script, unsigned sector_size,
                  unsigned long long size_bytes = 64ull << 20);

  const TempDir& dir() const { return dir_; }
  const std::string& image() const { return image_; }
  const LoopDevice& loop() const { return *loop_; }
  const std::string& device() const { return loop_->path(); }
  std::string File(const std::string& name) const { return dir_.File(name); }

  /// Attaches the image to another loop device and detaches the old one (its partition nodes
  /// deleted first), then registers the partitions with the kernel again: the same disk back
  /// under another name, as sdb comes back as sdc after a reboot. Returns the new device.
  const std::string& Reattach();

  /// Copies the image (sparse) to `name` in the test directory and returns its path: compare
  /// later with SameBytes().
  std::string Snapshot(const std::string& name) const;

 private:
  TempDir dir_;
  std::string image_;
  unsigned sector_size_;
  std::unique_ptr<LoopDevice> loop_;
};

/// `partalign apply --yes` of `plan` on `disk` with its backups and journals in the disk's test
/// directory, `extra` options before the plan: the arguments for RunPartalign.
std::vector<std::string> ApplyArgs(const PartitionedLoop& disk, const std::string& plan,
                                   const std::vector<std::string>& extra = {});

/// Registers the partitions sfdisk reads on `loop` (`sector_size`-byte sectors) with the
/// kernel (partx, and addpart for a DOS extended partition), as a booted system would have them.
void AddKernelPartitions(const LoopDevice& loop, unsigned sector_size);

/// Applies an sfdisk script to an image file (no kernel involved) with `sector_size`-byte
/// sectors.
void SfdiskImage(const std::string& image, const std::string& script, unsigned sector_size);

/// The oracle's view of a table: `sfdisk -J TARGET`'s "partitiontable" object (TARGET an image
/// or a device). Throws (failing the test) when sfdisk fails or prints no JSON.
nlohmann::json SfdiskJson(const std::string& target);

/// What the kernel has for partition `number` of `loop`: start and size in 512-byte units
/// (sysfs), 0 and 0 when it has no such partition.
std::pair<uint64_t, uint64_t> KernelStartSize(const LoopDevice& loop, int number);

/// "" when `a` and `b` are byte-identical (cmp), else what cmp says about the first difference.
std::string CmpFiles(const std::string& a, const std::string& b);

}  // namespace partalign::test
