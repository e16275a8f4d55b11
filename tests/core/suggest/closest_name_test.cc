// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/suggest/closest_name.h"

#include <gtest/gtest.h>

namespace partalign {
namespace {

const std::vector<std::string> kCommands{"probe",   "explain", "audit",    "plan",   "apply",
                                         "restore", "resume",  "snapshot", "verify", "translate",
                                         "report",  "bench",   "move",     "demo"};

TEST(ClosestNameTest, EditDistanceCountsASwapOnce) {
  EXPECT_EQ(EditDistance("plan", "plan"), 0u);
  EXPECT_EQ(EditDistance("plna", "plan"), 1u);      // neighbours swapped
  EXPECT_EQ(EditDistance("outptu", "output"), 1u);  // the last two swapped
  EXPECT_EQ(EditDistance("gran", "grain"), 1u);     // one left out
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("abc", "ca"), 3u);  // OSA, not Damerau: no edit inside a swap
}

TEST(ClosestNameTest, CommandTyposFindTheCommand) {
  EXPECT_EQ(ClosestName("plna", kCommands), "plan");
  EXPECT_EQ(ClosestName("aduit", kCommands), "audit");
  EXPECT_EQ(ClosestName("restroe", kCommands), "restore");
  EXPECT_EQ(ClosestName("snap", kCommands), "snapshot");  // the only name it begins
  EXPECT_EQ(ClosestName("re", kCommands), std::nullopt);  // report, restore, resume: which?
  EXPECT_EQ(ClosestName("format", kCommands), std::nullopt);
  EXPECT_EQ(ClosestName("", kCommands), std::nullopt);
}

TEST(ClosestNameTest, OptionTyposFindTheOption) {
  const std::vector<std::string> plan{"--output", "--grain", "--assume", "--sector-size",
                                      "--json",   "-o",      "-h",       "--help"};
  EXPECT_EQ(ClosestName("--outptu", plan), "--output");
  EXPECT_EQ(ClosestName("--gran", plan), "--grain");
  EXPECT_EQ(ClosestName("--sector", plan), "--sector-size");
  EXPECT_EQ(ClosestName("-0", plan), "-o");          // a zero for the letter
  EXPECT_EQ(ClosestName("-x", plan), std::nullopt);  // as near to -o as to -h: no guess
  EXPECT_EQ(ClosestName("--frobnicate", plan), std::nullopt);
}

}  // namespace
}  // namespace partalign
