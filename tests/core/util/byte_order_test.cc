// SPDX-License-Identifier: GPL-3.0-or-later
// Reading and writing fixed-width integers in on-disk structures without trusting the buffer's
// length: what fits round-trips little-endian, what does not fit is refused and touches
// nothing.
#include "partalign/util/byte_order.h"

#include <gtest/gtest.h>

#include <vector>

namespace partalign {
namespace {

TEST(ByteOrderTest, PutLeWritesLittleEndianAndLeReadsItBack) {
  std::vector<uint8_t> b(16, 0xEE);
  ASSERT_TRUE(PutLe<uint32_t>(b, 2, 0x12345678));
  EXPECT_EQ(b, (std::vector<uint8_t>{0xEE, 0xEE, 0x78, 0x56, 0x34, 0x12, 0xEE, 0xEE, 0xEE, 0xEE,
                                     0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE}));
  EXPECT_EQ(Le<uint32_t>(b, 2), 0x12345678u);
  EXPECT_EQ(Be<uint32_t>(b, 2), 0x78563412u);
  ASSERT_TRUE(PutLe<uint64_t>(b, 8, 0x0102030405060708ull));
  EXPECT_EQ(Le<uint64_t>(b, 8), 0x0102030405060708ull);
  EXPECT_EQ(b[8], 0x08);
  EXPECT_EQ(b[15], 0x01);
}

TEST(ByteOrderTest, WhatDoesNotFitIsRefusedAndTouchesNothing) {
  std::vector<uint8_t> b(6, 0xEE);
  const std::vector<uint8_t> before = b;
  EXPECT_FALSE(PutLe<uint32_t>(b, 3, 1));
  EXPECT_FALSE(PutLe<uint16_t>(b, 7, 1));
  EXPECT_EQ(b, before);
  EXPECT_EQ(Le<uint32_t>(b, 3), std::nullopt);
  EXPECT_EQ(Le<uint32_t>(b, 100), std::nullopt);
  EXPECT_TRUE(PutLe<uint16_t>(b, 4, 0xABCD));
  EXPECT_EQ(Le<uint16_t>(b, 4), 0xABCDu);
  EXPECT_TRUE(HasMagic(b, 4, "\xCD\xAB"));
  EXPECT_FALSE(HasMagic(b, 5, "\xAB\xEE"));  // runs past the end
}

}  // namespace
}  // namespace partalign
