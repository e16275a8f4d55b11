// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/util/text_wrap.h"

#include <gtest/gtest.h>

namespace partalign {
namespace {

using Lines = std::vector<std::string>;

TEST(TextWrapTest, BreaksBetweenWordsOnly) {
  EXPECT_EQ(WrapWords("the quick brown fox jumps", 10), (Lines{"the quick", "brown fox", "jumps"}));
  EXPECT_EQ(WrapWords("exactly ten", 11), (Lines{"exactly ten"}));
  EXPECT_EQ(WrapWords("", 10), (Lines{""}));
  for (size_t width : {5u, 7u, 13u, 40u}) {
    for (const std::string& l :
         WrapWords("a sentence with some words of different lengths", width)) {
      EXPECT_LE(l.size(), width) << l;
    }
  }
}

TEST(TextWrapTest, KeepsLeadingSpacesAndIndentsContinuations) {
  EXPECT_EQ(WrapWords("  n        new partition in the free space", 24, 11),
            (Lines{"  n        new partition", "           in the free", "           space"}));
}

TEST(TextWrapTest, OnlyAWordWiderThanTheLineIsSplit) {
  EXPECT_EQ(WrapWords("at /tmp/a-very-long-path/disk.img now", 12),
            (Lines{"at", "/tmp/a-very-", "long-path/di", "sk.img now"}));
}

TEST(TextWrapTest, AtMostEndsWithTheMarkerAtAWordBoundary) {
  EXPECT_EQ(WrapWordsAtMost("one two three four five six seven", 14, 2, " (x: all)"),
            (Lines{"one two three", "four (x: all)"}));
  EXPECT_EQ(WrapWordsAtMost("short", 14, 2, " (x: all)"), (Lines{"short"}));
}

}  // namespace
}  // namespace partalign
