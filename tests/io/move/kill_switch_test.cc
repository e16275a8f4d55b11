// SPDX-License-Identifier: GPL-3.0-or-later
// The test-only kill switch counts per process: a switch armed for a later move of the same
// process (apply runs one move per step) goes on from the points the earlier moves passed.
#include "io/move/kill_switch.h"

#include <gtest/gtest.h>

namespace partalign {
namespace {

TEST(KillSwitchTest, FiresAtTheNthPointOfTheProcess) {
  KillSwitch first("", 5);
  EXPECT_FALSE(first.Count(3));  // points 1-3
  EXPECT_EQ(first.counted(), 3u);

  // The next move of the process: point 5 is its second.
  KillSwitch second("", 5, first.counted());
  EXPECT_FALSE(second.Count(1));   // point 4
  EXPECT_EQ(second.Count(3), 0u);  // points 5-7: the first of them dies
  EXPECT_EQ(second.counted(), 7u);
}

TEST(KillSwitchTest, APointAnEarlierMovePassedNeverFiresAgain) {
  KillSwitch later("", 2, 3);
  EXPECT_FALSE(later.Count(10));
  EXPECT_EQ(later.counted(), 13u);
}

TEST(KillSwitchTest, APhaseCountsOnlyWhileTheMoverIsInIt) {
  KillSwitch s("table", 2, 1);  // an earlier move passed one point of its table write
  EXPECT_FALSE(s.Count(4));     // scan, move: not counted
  EXPECT_EQ(s.counted(), 1u);
  s.EnterPhase("table");
  EXPECT_EQ(s.Count(2), 0u);  // points 2-3 of the table writes: point 2 dies
}

}  // namespace
}  // namespace partalign
