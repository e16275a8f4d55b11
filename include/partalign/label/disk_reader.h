// SPDX-License-Identifier: GPL-3.0-or-later
// The bytes of a disk as the table scanner (partalign/label/table_scan.h) reads them: an
// interface, so that the scanner stays pure. The I/O edge reads a file descriptor
// (src/io/label/table_gate.h); tests, the fuzzer and restore's check of a backup use SparseDisk,
// a disk of any size held as a few runs of bytes over zeros.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "partalign/util/result.h"

namespace partalign {

class DiskReader {
 public:
  virtual ~DiskReader() = default;
  /// The disk's size in bytes.
  virtual uint64_t size_bytes() const = 0;
  /// Fills `out` with the bytes at `offset_bytes`. An error when any of them lies past the end
  /// of the disk or cannot be read; `out` is then unspecified.
  virtual Status ReadAt(uint64_t offset_bytes, std::span<uint8_t> out) const = 0;
};

/// A disk of `size_bytes` that reads as zeros except where bytes were written into it. Writes
/// are clipped at the end of the disk; a later write wins where two overlap.
class SparseDisk final : public DiskReader {
 public:
  explicit SparseDisk(uint64_t size_bytes) : size_bytes_(size_bytes) {}

  uint64_t size_bytes() const override { return size_bytes_; }
  Status ReadAt(uint64_t offset_bytes, std::span<uint8_t> out) const override;

  /// Puts `bytes` at `offset_bytes` (the part past the end of the disk is dropped).
  void Write(uint64_t offset_bytes, std::span<const uint8_t> bytes);

  /// Every run written, in offset order, after merging: what an image file of this disk holds
  /// besides holes.
  const std::map<uint64_t, std::vector<uint8_t>>& runs() const { return runs_; }

 private:
  uint64_t size_bytes_ = 0;
  std::map<uint64_t, std::vector<uint8_t>> runs_;  ///< disjoint, keyed by offset
};

}  // namespace partalign
