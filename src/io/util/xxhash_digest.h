// SPDX-License-Identifier: GPL-3.0-or-later
// Streaming xxHash (XXH64) digests through Debian's libxxhash: fast, non-cryptographic
// fingerprints of partition tables and data ranges (detecting change and corruption, not
// tampering). The only file that includes <xxhash.h>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace partalign {

class Xxh64Digest {
 public:
  Xxh64Digest();
  ~Xxh64Digest();
  Xxh64Digest(const Xxh64Digest&) = delete;
  Xxh64Digest& operator=(const Xxh64Digest&) = delete;

  void Update(const void* data, size_t length);
  uint64_t Value() const;
  /// "xxh64:" followed by 16 lower-case hex digits.
  std::string Hex() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// XXH64 of one buffer, seed 0.
uint64_t Xxh64(const void* data, size_t length);

/// XXH64 of one buffer as Xxh64Digest::Hex() writes it ("xxh64:" + 16 hex digits).
std::string Xxh64Hex(const void* data, size_t length);

}  // namespace partalign
