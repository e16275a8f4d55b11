// SPDX-License-Identifier: GPL-3.0-or-later
// The validation gate at the I/O edge: the pure table scan (partalign/label/table_scan.h) of an
// open disk or image, and what libblkid adds when the scan finds neither GPT nor DOS (a label
// partalign does not read: Atari, Sun, BSD, Mac, ...). ReadPartitionTable() runs it before
// libfdisk reads anything; restore runs it on the disk as it is and on the table a backup
// would write back.
#pragma once

#include <cstdint>
#include <string>

#include "partalign/label/disk_reader.h"
#include "partalign/label/table_scan.h"

namespace partalign {

/// The bytes of an open file descriptor (pread), as the scanner reads them.
class FdDiskReader final : public DiskReader {
 public:
  FdDiskReader(int fd, std::string path, uint64_t size_bytes)
      : fd_(fd), path_(std::move(path)), size_bytes_(size_bytes) {}
  uint64_t size_bytes() const override { return size_bytes_; }
  Status ReadAt(uint64_t offset_bytes, std::span<uint8_t> out) const override;

 private:
  int fd_;
  std::string path_;
  uint64_t size_bytes_;
};

/// Scans the table of the open target `fd` (`size_bytes` long) read with `sector_size`-byte
/// sectors. When the scan finds no GPT or DOS table, libblkid is asked for any other label;
/// one it knows (or two at once) is an unreadable finding ("label-unsupported").
TableScan ScanTarget(int fd, const std::string& path, uint64_t size_bytes, uint64_t sector_size);

}  // namespace partalign
