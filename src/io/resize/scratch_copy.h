// SPDX-License-Identifier: GPL-3.0-or-later
// The scratch copy a filesystem tool shrinks instead of the disk (docs/resize.md): a sparse
// file of the partition's size on the journal's storage, holding the bytes the
// partition's contents use. What the tool changed in it, compared with the disk, becomes the
// journaled step's updates (old and new bytes); the disk is written only by the journal.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/util/unique_fd.h"
#include "partalign/move/move_plan.h"
#include "partalign/util/byte_extent.h"
#include "partalign/util/result.h"

namespace partalign {

class ScratchCopy {
 public:
  /// A file of `length_bytes` (all holes) in `dir`, named `.partalign-scratch.PID.XXXXXX` (the
  /// tools open it by name: ntfsresize refuses a path it cannot check the mounts of, such as
  /// /proc/PID/fd/N) and removed by the destructor. A crash leaves it; the next Create in the
  /// same directory removes the scratch copies of processes that no longer run.
  static Result<ScratchCopy> Create(const std::string& dir, uint64_t length_bytes);
  ~ScratchCopy();
  ScratchCopy(ScratchCopy&& other) noexcept;
  ScratchCopy& operator=(ScratchCopy&&) = delete;
  ScratchCopy(const ScratchCopy&) = delete;
  ScratchCopy& operator=(const ScratchCopy&) = delete;

  /// Copies `ranges` (offsets from the partition's start) from the partition at
  /// `partition_offset` of `disk_fd` into the same offsets of the scratch copy.
  Status CopyIn(int disk_fd, const std::string& disk_path, uint64_t partition_offset,
                const std::vector<ByteExtent>& ranges);

  /// The path a tool opens the copy by.
  const std::string& path() const { return path_; }
  int fd() const { return fd_.get(); }
  uint64_t length_bytes() const { return length_bytes_; }
  /// Cuts the copy to `length_bytes` (when it is longer): what the checkers see after a shrink
  /// is exactly the partition's new extent.
  Status Truncate(uint64_t length_bytes);

  /// The ranges of [0, limit_bytes) where the copy now differs from the partition on the disk,
  /// as updates at disk offsets (old bytes from the disk, new bytes from the copy), sector
  /// aligned and coalesced (CoalesceChanges). Compared: every range copied in and every range
  /// the file holds data in now (a tool's writes, wherever they went), up to the copy's length
  /// now - a tool that cut the file (resize2fs cuts an image file to the filesystem's new size)
  /// changed nothing past its end, which keeps its bytes on the disk.
  Result<std::vector<TableUpdate>> Changes(int disk_fd, const std::string& disk_path,
                                           uint64_t partition_offset, uint64_t limit_bytes,
                                           uint64_t sector_bytes) const;

  /// Reads `length` bytes at `offset` of the copy.
  Result<std::vector<uint8_t>> Read(uint64_t offset, uint64_t length) const;
  /// Writes `bytes` at `offset` of the copy (partalign's own edits: a boot sector field kept).
  Status Write(uint64_t offset, const std::vector<uint8_t>& bytes);

 private:
  ScratchCopy(UniqueFd fd, std::string path, uint64_t length_bytes)
      : fd_(std::move(fd)), path_(std::move(path)), length_bytes_(length_bytes) {}
  /// The byte ranges of [0, limit) holding data in the file (SEEK_DATA / SEEK_HOLE).
  Result<std::vector<ByteExtent>> DataExtents(uint64_t limit) const;

  UniqueFd fd_;
  std::string path_;
  uint64_t length_bytes_ = 0;
  std::vector<ByteExtent> copied_;
};

}  // namespace partalign
