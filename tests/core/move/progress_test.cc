// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/move/progress.h"

#include <gtest/gtest.h>

namespace partalign {
namespace {

TEST(ProgressTest, LinesShowBytesRateAndTimeLeft) {
  EXPECT_EQ(FormatProgress({"moving", 512ull << 20, 1ull << 30, 0.5}),
            "moving     512 MiB of 1 GiB   50%  1074 MB/s  0.5 s left");
  EXPECT_EQ(FormatProgress({"scanning", 0, 1ull << 30, 0}), "scanning   0 B of 1 GiB    0%");
  EXPECT_EQ(FormatProgress({"verifying", 1ull << 30, 1ull << 30, 2}),
            "verifying  1 GiB of 1 GiB  100%  537 MB/s");
  EXPECT_EQ(FormatProgress({"moving", 1ull << 30, 100ull << 30, 10}),
            "moving     1 GiB of 100 GiB    1%  107 MB/s  16:30 left");
}

TEST(ProgressTest, Durations) {
  EXPECT_EQ(FormatDuration(0.04), "0.0 s");
  EXPECT_EQ(FormatDuration(59.94), "59.9 s");
  EXPECT_EQ(FormatDuration(61), "1:01");
  EXPECT_EQ(FormatDuration(3725), "1:02:05");
  EXPECT_EQ(FormatDuration(-1), "0.0 s");
  EXPECT_EQ(FormatRate(812.4e6), "812 MB/s");
}

}  // namespace
}  // namespace partalign
