// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/util/units.h"

#include <gtest/gtest.h>

namespace partalign {
namespace {

TEST(ParseSizeTest, PlainNumberIsBytes) { EXPECT_EQ(*ParseSize("33553920"), 33553920u); }

TEST(ParseSizeTest, BinaryAndDecimalSuffixesFollowUtilLinux) {
  EXPECT_EQ(*ParseSize("4K"), 4096u);
  EXPECT_EQ(*ParseSize("1MiB"), 1048576u);
  EXPECT_EQ(*ParseSize("1M"), 1048576u);
  EXPECT_EQ(*ParseSize("1MB"), 1000000u);
  EXPECT_EQ(*ParseSize("2TB"), 2000000000000u);
  EXPECT_EQ(*ParseSize("2tib"), 2 * kTiB);
  EXPECT_EQ(*ParseSize("512B"), 512u);
}

TEST(ParseSizeTest, HexadecimalIsAccepted) { EXPECT_EQ(*ParseSize("0xFFFF"), 65535u); }

TEST(ParseSizeTest, RejectsGarbageUnitsAndOverflow) {
  EXPECT_FALSE(ParseSize(""));
  EXPECT_FALSE(ParseSize("abc"));
  EXPECT_FALSE(ParseSize("-1"));
  EXPECT_FALSE(ParseSize("1.5M"));
  EXPECT_FALSE(ParseSize("12Q"));
  EXPECT_FALSE(ParseSize("99999999999999999999"));
  EXPECT_FALSE(ParseSize("20000000PiB"));
  Result<uint64_t> r = ParseSize("12Q");
  EXPECT_NE(r.error().message.find("unknown unit 'Q'"), std::string::npos) << r.error().message;
}

TEST(FormatSizeTest, ExactMultiplesPrintWithoutDecimals) {
  EXPECT_EQ(FormatSize(0), "0 B");
  EXPECT_EQ(FormatSize(512), "512 B");
  EXPECT_EQ(FormatSize(4096), "4 KiB");
  EXPECT_EQ(FormatSize(8 * kGiB), "8 GiB");
}

TEST(FormatSizeTest, InexactValuesGetTwoDecimals) {
  EXPECT_EQ(FormatSize(33553920), "32.00 MiB");
  EXPECT_EQ(FormatSize(1536 * kKiB), "1.50 MiB");
}

TEST(PowerOfTwoTest, ZeroIsNotAPowerOfTwo) {
  EXPECT_FALSE(IsPowerOfTwo(0));
  EXPECT_TRUE(IsPowerOfTwo(1));
  EXPECT_TRUE(IsPowerOfTwo(65536));
  EXPECT_FALSE(IsPowerOfTwo(196608));
}

}  // namespace
}  // namespace partalign
