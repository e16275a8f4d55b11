// SPDX-License-Identifier: GPL-3.0-or-later
// Opening a TARGET (block device or image file): classify the path, open it, read its size and
// logical sector size. Every error names the path and what is wrong with it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/util/unique_fd.h"
#include "partalign/util/result.h"

namespace partalign {

enum class TargetKind { kBlockDevice, kImageFile };

struct OpenFlags {
  bool write = false;
  /// O_EXCL on a block device: fails with EBUSY while the kernel or anyone else holds it
  /// exclusively (mounted partitions, device-mapper holders).
  bool exclusive = false;
  /// O_DIRECT, for the benchmark engine and the data mover.
  bool direct = false;
};

struct Target {
  std::string path;
  TargetKind kind = TargetKind::kImageFile;
  UniqueFd fd;
  uint64_t size_bytes = 0;
  /// BLKSSZGET for block devices; 512 for image files (they have no sector size of their own).
  uint64_t logical_sector_size = 512;
  uint32_t major = 0;  ///< block devices only
  uint32_t minor = 0;
  /// Partition nodes held open with O_EXCL while the disk itself cannot be (other partitions in
  /// use: OpenForScopedWrite); cleared before the kernel is told of the new partitions.
  std::vector<UniqueFd> claims;
};

/// Opens `path` read-only unless `flags.write`. Refuses directories, character devices, FIFOs,
/// sockets, empty images and block devices with no medium.
Result<Target> OpenTarget(const std::string& path, OpenFlags flags = {});

/// Drops the clean pages of a block device's page cache (POSIX_FADV_DONTNEED), so that what is
/// read next comes from the disk. The whole disk and each partition node have page caches of
/// their own, and the kernel keeps the whole disk's while anything holds it (a mounted partition
/// does): bytes written through a partition's node after they were read through the whole disk
/// were read as they had been, and an apply copied the used blocks of an ext4 map older than a
/// file (docs/apply.md, "In use"). Called where a command starts to read a disk (ProbeTarget)
/// and where a write holds it (OpenForScopedWrite, OpenForTableWrite); not at every open, which
/// would drop what the command itself read a moment before. Nothing for an image file.
void DropCachedPages(const Target& target);

/// Reads exactly `length` bytes at `offset` (short only at end of file); retries on EINTR.
Result<size_t> ReadAt(int fd, void* buffer, size_t length, uint64_t offset,
                      const std::string& path);

}  // namespace partalign
