// SPDX-License-Identifier: GPL-3.0-or-later
// A run of bytes on a disk: where a partition lies, what a write touches. Shared by the table
// backups, the in-use checks and the journal's placement rule.
#pragma once

#include <cstdint>
#include <vector>

namespace partalign {

struct ByteExtent {
  uint64_t offset_bytes = 0;
  uint64_t length_bytes = 0;
  uint64_t end() const { return offset_bytes + length_bytes; }
  bool operator==(const ByteExtent&) const = default;
};

/// Whether `a` and `b` share a byte (empty extents share none).
inline bool Overlaps(const ByteExtent& a, const ByteExtent& b) {
  return a.length_bytes > 0 && b.length_bytes > 0 && a.offset_bytes < b.end() &&
         b.offset_bytes < a.end();
}

/// Whether `a` shares a byte with any of `extents`.
inline bool OverlapsAny(const ByteExtent& a, const std::vector<ByteExtent>& extents) {
  for (const ByteExtent& e : extents) {
    if (Overlaps(a, e)) return true;
  }
  return false;
}

/// The bytes of `extents`, counted once per extent (overlaps are not merged).
inline uint64_t TotalBytes(const std::vector<ByteExtent>& extents) {
  uint64_t total = 0;
  for (const ByteExtent& e : extents) total += e.length_bytes;
  return total;
}

}  // namespace partalign
