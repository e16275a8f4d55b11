// SPDX-License-Identifier: GPL-3.0-or-later
// Checksums for the data mover's journal. The core encodes and checks journal records but may not
// link a C library, so the hash function comes in through this interface: the I/O edge passes
// xxHash (src/io/util/xxhash_hasher.h), unit tests pass a small stand-in.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace partalign {

/// A 128-bit digest of a chunk of data (XXH3-128 in production). 128 bits so that "the bytes on
/// the disk equal the bytes scanned before the move" can be decided from digests alone: a
/// collision is a 2^-128 event, not a risk to argue about.
struct Digest128 {
  uint64_t low = 0;
  uint64_t high = 0;
  bool operator==(const Digest128&) const = default;
};

/// 32 lower-case hex digits, high half first (the way xxhsum -H2 prints XXH3-128).
std::string ToHex(const Digest128& digest);

class Hasher {
 public:
  virtual ~Hasher() = default;
  /// Recorded in the journal header ("xxh3"), so that a journal is read with the hash it was
  /// written with.
  virtual std::string name() const = 0;
  /// Checksum of journal metadata (headers, state blocks, record headers).
  virtual uint64_t Hash64(std::span<const uint8_t> data) const = 0;
  /// Digest of moved data (chunks, whole ranges).
  virtual Digest128 Hash128(std::span<const uint8_t> data) const = 0;
};

}  // namespace partalign
