// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/table/apply_command.h"

#include <gtest/gtest.h>

#include "partalign/table/plan_check.h"
#include "partalign/util/shell_quote.h"

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

// Issue 39: a plan that moves partitions the running system uses is staged for the next boot.
TEST(ApplyCommandTest, APlanForTheNextBootIsStagedByTheCommand) {
  Plan plan;
  plan.actions = {Action(1)};
  plan.at_next_boot = true;
  EXPECT_EQ(ApplyCommand("plan.json", plan), "partalign apply --at-next-boot plan.json");
}

TEST(ApplyCommandTest, TheDiskOptionsAndThePathAreQuotedForTheShell) {
  Plan plan;
  plan.actions = {Action(2)};
  plan.actions[0].empty = Emptiness::kDiscarded;
  EXPECT_EQ(ApplyCommand("my plan.json", plan, {"/dev/sdb", "ssd", "4096"}),
            "partalign apply --discard 2 --target /dev/sdb --assume ssd --sector-size 4096 "
            "'my plan.json'");
}

// Issue 40: a plan made with --assume (or the planner's `a`) is refused by an apply without the
// same assumption; the command printed for it must carry it.
TEST(ApplyCommandTest, APlanMadeWithAnAssumedTopologyIsAppliedWithTheSameAssumption) {
  Plan plan;
  plan.actions = {Action(1)};
  plan.topology.origin = TopologyOrigin::kAssumed;
  plan.topology.logical_sector_size = 512;
  plan.topology.physical_sector_size = 4096;
  plan.topology.minimum_io_size = 4096;
  plan.topology.optimal_io_size = 33553920;
  EXPECT_EQ(ApplyCommand("plan.json", plan),
            "partalign apply --assume " + ShellQuote(TopologySpecOf(plan.topology)) + " plan.json");
  EXPECT_NE(TopologySpecOf(plan.topology).find("opt-io=33553920"), std::string::npos);
  // The person's own words win over the plan's values.
  EXPECT_EQ(ApplyCommand("plan.json", plan, {"", "usb-jmicron-0xffff", std::nullopt}),
            "partalign apply --assume usb-jmicron-0xffff plan.json");
  plan.topology.origin = TopologyOrigin::kKernel;
  EXPECT_EQ(ApplyCommand("plan.json", plan), "partalign apply plan.json");
}

}  // namespace
}  // namespace partalign
