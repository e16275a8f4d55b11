// SPDX-License-Identifier: GPL-3.0-or-later
// A stand-in for xxHash in the core's unit tests (which link no C library): FNV-1a, 64-bit,
// and two differently seeded runs for 128 bits. Any single changed byte changes the result,
// which is all the format tests need.
#pragma once

#include "partalign/util/hasher.h"

namespace partalign::test {

class FnvHasher : public Hasher {
 public:
  std::string name() const override { return "fnv-test"; }
  uint64_t Hash64(std::span<const uint8_t> data) const override { return Fnv(data, kOffset); }
  Digest128 Hash128(std::span<const uint8_t> data) const override {
    return {Fnv(data, kOffset), Fnv(data, kOffset ^ 0x9e3779b97f4a7c15ULL)};
  }

 private:
  // FNV-1a parameters (http://www.isthe.com/chongo/tech/comp/fnv/).
  static constexpr uint64_t kOffset = 0xcbf29ce484222325ULL;
  static constexpr uint64_t kPrime = 0x100000001b3ULL;
  static uint64_t Fnv(std::span<const uint8_t> data, uint64_t h) {
    for (uint8_t byte : data) h = (h ^ byte) * kPrime;
    return h;
  }
};

}  // namespace partalign::test
