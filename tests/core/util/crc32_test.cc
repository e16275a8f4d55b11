// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/util/crc32.h"

#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace partalign {
namespace {

std::span<const uint8_t> Bytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

TEST(Crc32Test, MatchesThePublishedCheckValue) {
  // The "check" value of CRC-32/ISO-HDLC (the catalogue of parametrised CRC algorithms).
  EXPECT_EQ(Crc32(Bytes("123456789")), 0xCBF43926u);
}

TEST(Crc32Test, EmptyInputAndOneChangedBit) {
  EXPECT_EQ(Crc32({}), 0u);
  std::vector<uint8_t> zeros(512, 0);
  const uint32_t before = Crc32(zeros);
  zeros[300] ^= 0x04;
  EXPECT_NE(Crc32(zeros), before);
  // 512 zero bytes, as zlib's crc32(0, buf, 512) gives it.
  zeros[300] = 0;
  EXPECT_EQ(before, 0xB2AA7578u);
}

}  // namespace
}  // namespace partalign
