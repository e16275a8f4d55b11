// SPDX-License-Identifier: GPL-3.0-or-later
// Overflow-checked arithmetic on byte and sector counts. Every value read from a disk, a file
// or the command line can be anything a uint64_t holds (a GPT entry may end at LBA 2^64-1); a
// conversion that wraps turns a partition at LBA 2^63 into one at byte 0. Use these wherever a
// product or sum of untrusted values is formed, and turn std::nullopt into an error that names
// the value.
#pragma once

#include <cstdint>
#include <optional>

namespace partalign {

/// a + b, or nullopt when the sum does not fit in 64 bits.
constexpr std::optional<uint64_t> CheckedAdd(uint64_t a, uint64_t b) {
  uint64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

/// a - b, or nullopt when b > a.
constexpr std::optional<uint64_t> CheckedSub(uint64_t a, uint64_t b) {
  if (b > a) return std::nullopt;
  return a - b;
}

/// a * b, or nullopt when the product does not fit in 64 bits.
constexpr std::optional<uint64_t> CheckedMul(uint64_t a, uint64_t b) {
  uint64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

/// The byte offset of `lba` in `sector_size`-byte sectors, or nullopt when it passes 2^64.
constexpr std::optional<uint64_t> LbaToBytes(uint64_t lba, uint64_t sector_size) {
  return CheckedMul(lba, sector_size);
}

/// The last sector of an extent that starts at `start` and is `count` sectors long (count > 0),
/// or nullopt when it passes 2^64-1 or count is 0.
constexpr std::optional<uint64_t> LastSector(uint64_t start, uint64_t count) {
  if (count == 0) return std::nullopt;
  return CheckedAdd(start, count - 1);
}

}  // namespace partalign
