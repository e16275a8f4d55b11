// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/resize/swap_header.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace partalign {
namespace {

// A version 1 header as mkswap writes it (little-endian), with `page` bytes per page.
std::vector<uint8_t> Header(uint64_t page, uint32_t last_page, const char* label) {
  std::vector<uint8_t> b(page, 0);
  b[1024] = 1;
  std::memcpy(&b[1028], &last_page, 4);
  for (int i = 0; i < 16; ++i) b[1036 + i] = static_cast<uint8_t>(0xa0 + i);
  std::memcpy(&b[1052], label, std::strlen(label));
  std::memcpy(&b[page - 10], "SWAPSPACE2", 10);
  return b;
}

TEST(SwapHeaderTest, ReadsPageSizeUuidLabelAndSize) {
  for (uint64_t page : {4096u, 16384u, 65536u}) {
    const std::optional<SwapHeader> h = ParseSwapHeader(Header(page, 1234, "myswap"));
    ASSERT_TRUE(h) << page;
    EXPECT_EQ(h->page_bytes, page);
    EXPECT_EQ(h->last_page, 1234u);
    EXPECT_EQ(h->label, "myswap");
    EXPECT_FALSE(h->big_endian);
    EXPECT_EQ(FormatUuid(h->uuid), "a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf");
  }
  // A 16-byte label has no NUL.
  EXPECT_EQ(ParseSwapHeader(Header(4096, 1, "0123456789abcdef"))->label, "0123456789abcdef");
}

TEST(SwapHeaderTest, HibernationImagesAndOtherBytesAreNotSwapHeaders) {
  std::vector<uint8_t> b = Header(4096, 10, "");
  std::memcpy(&b[4096 - 10], "S1SUSPEND\0", 10);
  EXPECT_FALSE(ParseSwapHeader(b));
  b = Header(4096, 10, "");
  b[1024] = 2;  // version 2 does not exist
  EXPECT_FALSE(ParseSwapHeader(b));
  EXPECT_FALSE(ParseSwapHeader(std::vector<uint8_t>(100, 0)));
  EXPECT_FALSE(ParseSwapHeader(std::vector<uint8_t>(65536, 0)));
}

TEST(SwapHeaderTest, BigEndianHeadersAreRecognised) {
  std::vector<uint8_t> b = Header(4096, 0, "");
  b[1024] = 0;
  b[1027] = 1;  // version 1, big-endian
  b[1028] = 0;
  b[1029] = 0;
  b[1030] = 0x12;
  b[1031] = 0x34;
  const std::optional<SwapHeader> h = ParseSwapHeader(b);
  ASSERT_TRUE(h);
  EXPECT_TRUE(h->big_endian);
  EXPECT_EQ(h->last_page, 0x1234u);
}

}  // namespace
}  // namespace partalign
