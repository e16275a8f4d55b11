// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/util/shell_quote.h"

#include <gtest/gtest.h>

namespace partalign {
namespace {

TEST(ShellQuoteTest, PlainWordsStayAsTheyAre) {
  EXPECT_EQ(ShellQuote("/dev/sdb"), "/dev/sdb");
  EXPECT_EQ(ShellQuote("plan.json"), "plan.json");
  EXPECT_EQ(ShellQuote("size=10M,type=83"), "size=10M,type=83");
}

TEST(ShellQuoteTest, EverythingElseIsOneSingleQuotedWord) {
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("/dev/disk/by-id/usb-My Disk"), "'/dev/disk/by-id/usb-My Disk'");
  EXPECT_EQ(ShellQuote("size=10M;type=swap"), "'size=10M;type=swap'");
  EXPECT_EQ(ShellQuote("$HOME/*.img"), "'$HOME/*.img'");
  // A quote ends the quoted part, is escaped, and the quoting starts again.
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
}

}  // namespace
}  // namespace partalign
