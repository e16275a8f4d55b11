// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/table/apply_command.h"

#include <gtest/gtest.h>

namespace partalign {
namespace {

PlanAction Action(uint32_t partition) {
  PlanAction a;
  a.partition = partition;
  return a;
}

TEST(ApplyCommandTest, APlanThatNeedsNoConsentIsAppliedByItsFileAlone) {
  Plan plan;
  plan.actions = {Action(1), Action(2)};
  EXPECT_EQ(ApplyCommand("plan.json", plan), "partalign apply plan.json");
}

// Issue 40: the command names every consent the plan needs, or apply refuses it.
TEST(ApplyCommandTest, TheCommandGivesEveryDiscardAndTheShrinkAgain) {
  Plan plan;
  plan.actions = {Action(1), Action(3), Action(5), Action(7)};
  plan.actions[1].empty = Emptiness::kDiscarded;
  plan.actions[2].empty = Emptiness::kDiscarded;
  EXPECT_EQ(ApplyCommand("plan.json", plan), "partalign apply --discard 3 --discard 5 plan.json");
  plan.actions[3].shrink = PlannedShrink{};
  EXPECT_EQ(ApplyCommand("plan.json", plan),
            "partalign apply --make-room --discard 3 --discard 5 plan.json");
}

TEST(ApplyCommandTest, TheDiskOptionsAndThePathAreQuotedForTheShell) {
  Plan plan;
  plan.actions = {Action(2)};
  plan.actions[0].empty = Emptiness::kDiscarded;
  EXPECT_EQ(ApplyCommand("my plan.json", plan, {"/dev/sdb", "ssd", "4096"}),
            "partalign apply --discard 2 --target /dev/sdb --assume ssd --sector-size 4096 "
            "'my plan.json'");
}

}  // namespace
}  // namespace partalign
