// SPDX-License-Identifier: GPL-3.0-or-later
// Where the core's on-disk parsers (FAT, XFS, swap) read a partition from: the I/O edge
// implements it with pread on the disk (src/io/used/used_map_reader.cc), tests and fuzz harnesses
// with a buffer. The parsers treat every byte as untrusted: each offset and count they derive is
// bounded before it is read.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "partalign/util/result.h"

namespace partalign {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  /// The partition's length.
  virtual uint64_t size_bytes() const = 0;
  /// Exactly `length` bytes at `offset`; an error when the range leaves the partition or the
  /// read fails.
  virtual Result<std::vector<uint8_t>> Read(uint64_t offset, uint64_t length) const = 0;
};

/// A partition held in memory (tests, fuzzing).
class MemoryByteSource : public ByteSource {
 public:
  explicit MemoryByteSource(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  uint64_t size_bytes() const override { return bytes_.size(); }
  Result<std::vector<uint8_t>> Read(uint64_t offset, uint64_t length) const override;

 private:
  std::span<const uint8_t> bytes_;
};

/// Big- and little-endian fields of on-disk structures.
inline uint16_t Le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
inline uint32_t Le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}
inline uint64_t Le64(const uint8_t* p) {
  return static_cast<uint64_t>(Le32(p + 4)) << 32 | Le32(p);
}
inline uint16_t Be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
inline uint32_t Be32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) << 24 | static_cast<uint32_t>(p[1]) << 16 |
         static_cast<uint32_t>(p[2]) << 8 | static_cast<uint32_t>(p[3]);
}
inline uint64_t Be64(const uint8_t* p) {
  return static_cast<uint64_t>(Be32(p)) << 32 | Be32(p + 4);
}

}  // namespace partalign
