// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/util/sfdisk_size.h"

#include <gtest/gtest.h>

#include "partalign/util/units.h"

namespace partalign {
namespace {

SfdiskSize Sectors(uint64_t n) { return {n, /*sectors=*/true}; }

struct Refusal {
  const char* text;
  const char* words;
};

void ExpectRefused(std::initializer_list<Refusal> cases) {
  for (const Refusal& c : cases) {
    Result<SfdiskSize> s = ParseSfdiskSize(c.text);
    ASSERT_FALSE(s) << c.text;
    EXPECT_NE(s.error().message.find(c.words), std::string::npos)
        << c.text << ": " << s.error().message;
  }
}
SfdiskSize Bytes(uint64_t n) { return {n, /*sectors=*/false}; }

TEST(SfdiskSizeTest, ABareNumberCountsSectors) {
  EXPECT_EQ(*ParseSfdiskSize("100000"), Sectors(100000));
  EXPECT_EQ(*ParseSfdiskSize(" 2048 "), Sectors(2048));
  EXPECT_EQ(*ParseSfdiskSize("0x800"), Sectors(2048));
  EXPECT_EQ(ParseSfdiskSize("100000")->Bytes(512), 51200000u);
  EXPECT_EQ(ParseSfdiskSize("100000")->Bytes(4096), 409600000u);
  EXPECT_EQ(ParseSfdiskSize("100000")->Text(), "100000 sectors");
}

TEST(SfdiskSizeTest, SuffixesCountBytesInEitherCase) {
  EXPECT_EQ(*ParseSfdiskSize("512M"), Bytes(512 * kMiB));
  EXPECT_EQ(*ParseSfdiskSize("512m"), Bytes(512 * kMiB));
  EXPECT_EQ(*ParseSfdiskSize("512MiB"), Bytes(512 * kMiB));
  EXPECT_EQ(*ParseSfdiskSize("100MB"), Bytes(100000000));
  EXPECT_EQ(*ParseSfdiskSize("2g"), Bytes(2 * kGiB));
  EXPECT_EQ(*ParseSfdiskSize("1E"), Bytes(1ull << 60));
  EXPECT_EQ(*ParseSfdiskSize("4096B"), Bytes(4096));  // partalign's own: sfdisk refuses "B"
  EXPECT_EQ(ParseSfdiskSize("1536M")->Text(), "1.50 GiB");
}

// util-linux adds the k-th digit d after the point as unit / (10^k / d) in whole numbers:
// exact for 5, 25, 125..., off for 3 (1 GiB / 3, not 0.3 GiB) and for trailing zeros after a
// power of ten ("1.10G" is 2 GiB to sfdisk).
TEST(SfdiskSizeTest, DecimalsAreAcceptedWhereSfdiskReadsThemAsWritten) {
  EXPECT_EQ(*ParseSfdiskSize("1.5G"), Bytes(3 * kGiB / 2));
  EXPECT_EQ(*ParseSfdiskSize("0.5G"), Bytes(kGiB / 2));
  EXPECT_EQ(*ParseSfdiskSize("1.25G"), Bytes(5 * kGiB / 4));  // sfdisk: a byte short
  EXPECT_EQ(*ParseSfdiskSize("0.125M"), Bytes(kMiB / 8));
  EXPECT_EQ(*ParseSfdiskSize("1.50G"), Bytes(3 * kGiB / 2));
  EXPECT_EQ(*ParseSfdiskSize("1.5MB"), Bytes(1500000));
  EXPECT_EQ(*ParseSfdiskSize("2.5GiB"), Bytes(5 * kGiB / 2));
  EXPECT_EQ(*ParseSfdiskSize("1.0G"), Bytes(kGiB));
  EXPECT_EQ(*ParseSfdiskSize("1.G"), Bytes(kGiB));
  // Not a whole number of bytes exactly, but sfdisk's whole-number reading is its floor.
  EXPECT_EQ(*ParseSfdiskSize("1.05G"), Bytes(kGiB + kGiB / 20));
}

TEST(SfdiskSizeTest, DecimalsSfdiskReadsOtherwiseAreRefusedWithItsReading) {
  ExpectRefused({
      {"1.3G", "sfdisk reads it as 1431655765 bytes (1.33 GiB), not as 1395864371 bytes"},
      {"1.3G", "write a whole number of a smaller unit (1331M)"},
      {"1.10G", "sfdisk reads it as 2147483648 bytes (2 GiB)"},
      {"1.4G", "sfdisk reads it as 1610612736 bytes (1.50 GiB)"},
      {"1.9GiB", "(1945MiB)"},
      {"1.3gb", "(1300mb)"},
      {"1.7K", "(1740B)"},
  });
}

TEST(SfdiskSizeTest, WhatSfdiskReadsAnotherWayOrRefusesIsRefused) {
  ExpectRefused({
      {"010", "sfdisk reads a number that starts with 0 as octal (8, not 10)"},
      {"010G", "as octal (8, not 10)"},
      {"09", "as octal, and this one is not"},
      {"1.5", "a decimal point needs a unit"},
      {"12X", "unknown unit 'X'"},
      {"1.5Q", "unknown unit 'Q'"},
      {"10%", "unknown unit '%'"},
      {"1KIB", "unknown unit 'KIB'"},
      {"", "an empty size"},
      {"M", "not a size"},
      {"-1G", "not a size"},
      {"1Z", "too large"},
      {"99999999999999999999", "too large"},
      {"0x1.8G", "no decimal point"},
      {"1.1234567890123456789G", "more than 18 digits"},
  });
  EXPECT_EQ(*ParseSfdiskSize("00"), Sectors(0));  // octal or not, 0
  EXPECT_FALSE(ParseSfdiskSize("18446744073709551615")->Bytes(512));
}

}  // namespace
}  // namespace partalign
