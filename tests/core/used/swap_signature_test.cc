// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/used/swap_signature.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "partalign/resize/swap_header.h"

namespace partalign {
namespace {

// The first 64 KiB of an area whose first page (`page` bytes) ends with `signature`.
std::vector<uint8_t> Head(uint64_t page, const std::string& signature) {
  std::vector<uint8_t> b(kSwapSignatureHeadBytes, 0);
  b[1024] = 1;  // a version 1 header, as mkswap writes it
  std::memcpy(&b[page - 10], signature.data(), signature.size());
  return b;
}

TEST(SwapSignatureTest, PlainSwapAtEveryPageSize) {
  for (uint64_t page : kSwapPageSizes) {
    for (const char* magic : {"SWAPSPACE2", "SWAP-SPACE"}) {
      const SwapSignature s = ReadSwapSignature(Head(page, magic));
      EXPECT_EQ(s.kind, SwapAreaKind::kPlainSwap) << page << " " << magic;
      EXPECT_EQ(s.page_bytes, page);
      EXPECT_TRUE(s.image.empty());
    }
  }
}

// Every signature libblkid's swsuspend prober knows, at the end of every page size Linux uses
// (byte 4086 for 4 KiB pages .. 65526 for 64 KiB), as the kernel writes them (a NUL after the
// nine letters).
TEST(SwapSignatureTest, EveryHibernationSignatureAtEveryPageSize) {
  const std::pair<std::string, std::string> images[] = {
      {std::string("S1SUSPEND\0", 10), "S1SUSPEND"},
      {std::string("S2SUSPEND\0", 10), "S2SUSPEND"},
      {std::string("ULSUSPEND\0", 10), "ULSUSPEND (uswsusp)"},
      {"LINHIB0001", "LINHIB0001"}};
  for (uint64_t page : kSwapPageSizes) {
    for (const auto& [magic, name] : images) {
      const SwapSignature s = ReadSwapSignature(Head(page, magic));
      EXPECT_EQ(s.kind, SwapAreaKind::kHibernation) << page << " " << name;
      EXPECT_EQ(s.page_bytes, page);
      EXPECT_EQ(s.image, name);
      EXPECT_EQ(HibernationImageText(s), "a hibernation image (" + name + ")");
      // The swap header reader and the used map ask the same reader: no header here.
      EXPECT_FALSE(ParseSwapHeader(Head(page, magic))) << page << " " << name;
    }
  }
}

TEST(SwapSignatureTest, TuxOnIceAtByteZeroWinsOverTheSwapSignature) {
  std::vector<uint8_t> b = Head(4096, "SWAPSPACE2");
  std::memcpy(b.data(), "\xed\xc3\x02\xe9\x98\x56\xe5\x0c", 8);
  const SwapSignature s = ReadSwapSignature(b);
  EXPECT_EQ(s.kind, SwapAreaKind::kHibernation);
  EXPECT_EQ(s.image, "TuxOnIce");
  EXPECT_EQ(s.page_bytes, 0u);
  EXPECT_FALSE(ParseSwapHeader(b));
  // At the end of a page it is no signature (libblkid looks for it at byte 0 only).
  EXPECT_EQ(ReadSwapSignature(Head(4096, "\xed\xc3\x02\xe9\x98\x56\xe5\x0c")).kind,
            SwapAreaKind::kNotSwap);
}

TEST(SwapSignatureTest, OtherBytesShortHeadsAndMisplacedSignaturesAreNotSwap) {
  EXPECT_EQ(ReadSwapSignature(std::vector<uint8_t>(kSwapSignatureHeadBytes, 0)).kind,
            SwapAreaKind::kNotSwap);
  EXPECT_EQ(ReadSwapSignature({}).kind, SwapAreaKind::kNotSwap);
  // A page size larger than what was read is not looked at.
  std::vector<uint8_t> b = Head(65536, std::string("S1SUSPEND\0", 10));
  b.resize(32768);
  EXPECT_EQ(ReadSwapSignature(b).kind, SwapAreaKind::kNotSwap);
  // One byte off the end of the page.
  std::vector<uint8_t> off(kSwapSignatureHeadBytes, 0);
  std::memcpy(&off[4096 - 11], "S1SUSPEND", 9);
  EXPECT_EQ(ReadSwapSignature(off).kind, SwapAreaKind::kNotSwap);
  // "S1SUSPEN" is not enough.
  EXPECT_EQ(ReadSwapSignature(Head(4096, "S1SUSPEN")).kind, SwapAreaKind::kNotSwap);
}

TEST(SwapSignatureTest, TheSmallestPageWithASignatureDecides) {
  // A swap area of 64 KiB pages whose 4 KiB slot holds a hibernation signature: the kernel of
  // 4 KiB pages that wrote it resumes from it.
  std::vector<uint8_t> b = Head(65536, "SWAPSPACE2");
  std::memcpy(&b[4086], "S1SUSPEND", 9);
  EXPECT_EQ(ReadSwapSignature(b).kind, SwapAreaKind::kHibernation);
  EXPECT_EQ(ReadSwapSignature(b).page_bytes, 4096u);
}

}  // namespace
}  // namespace partalign
