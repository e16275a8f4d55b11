// SPDX-License-Identifier: GPL-3.0-or-later
// A disk that moves between controllers of different logical sector sizes (docs/migration.md):
// one image file, attached to a loop device with one sector size, later detached and attached
// again with another (`losetup --sector-size`), as a disk moves between a 4K-translating USB
// bridge and a SATA port. Filesystems with known files on its partitions, and checks that they
// survive. Everything is removed by the destructors, also when a test fails.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "support/loop_device.h"
#include "support/temp_dir.h"

namespace partalign::test {

class MovedDisk {
 public:
  /// An image of `size_bytes` partitioned with `sfdisk_script` for `sector_size`-byte sectors
  /// and attached with that size, its partitions known to the kernel. Throws on failure.
  MovedDisk(const std::string& sfdisk_script, unsigned sector_size,
            unsigned long long size_bytes = 64ull << 20);

  /// Detaches the loop device (its partition nodes deleted first) and attaches the image again
  /// with `sector_size`-byte sectors; with `partitions`, registers the partitions sfdisk reads
  /// at that size with the kernel.
  void Reattach(unsigned sector_size, bool partitions);

  const TempDir& dir() const { return dir_; }
  const std::string& image() const { return image_; }
  const LoopDevice& loop() const { return *loop_; }
  const std::string& device() const { return loop_->path(); }
  unsigned sector_size() const { return sector_size_; }
  std::string File(const std::string& name) const { return dir_.File(name); }

  /// A sparse copy of the image named `name` in the test directory (compare with CmpFiles).
  std::string Copy(const std::string& name) const;

 private:
  TempDir dir_;
  std::string image_;
  unsigned sector_size_;
  std::unique_ptr<LoopDevice> loop_;
};

/// Files with pseudo-random contents (seeded by their names), relative path -> bytes.
using FileSet = std::map<std::string, std::string>;

/// A few files of different sizes (a small one, one of several blocks, one of 3 MiB) and a
/// subdirectory, their contents derived from `seed`.
FileSet MakeFiles(const std::string& seed);

/// Makes a filesystem (`mkfs` argv without the device, e.g. {"mkfs.ext4", "-q", "-F"}) on
/// `node`, mounts it, writes `files` into it and unmounts it. Throws on failure.
void MakeFilesystemWithFiles(const std::vector<std::string>& mkfs, const std::string& node,
                             const std::string& mount_dir, const FileSet& files);

/// "" when `node`'s filesystem mounts (read-only) and holds exactly `files`' contents, else what
/// differs.
std::string CheckFiles(const std::string& node, const std::string& mount_dir, const FileSet& files);

/// xxh64 of `length` bytes of `path` at `offset` (hex).
std::string DigestBytes(const std::string& path, uint64_t offset, uint64_t length);

}  // namespace partalign::test
