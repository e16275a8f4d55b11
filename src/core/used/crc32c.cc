// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/used/crc32c.h"

#include <array>

namespace partalign {

uint32_t Crc32cUpdate(uint32_t state, std::span<const uint8_t> data) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) != 0 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  for (uint8_t byte : data) state = table[(state ^ byte) & 0xff] ^ (state >> 8);
  return state;
}

}  // namespace partalign
