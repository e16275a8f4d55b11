// SPDX-License-Identifier: GPL-3.0-or-later
// The plan-mutation campaign for real (issue 37): every mutation (support/plan_mutations.h) of
// a plan file that `partalign plan` made for an image file goes through `partalign apply
// --yes`. A mutation apply refuses must leave the image byte-identical and make no backup; one
// it accepts must be the plan `plan` makes for its target layout (its claims recomputed here
// with the planner's own functions and the proofs plan makes), and the disk after it must keep
// the disk invariant (support/disk_invariant.h) against the image before, with only the
// partitions that held nothing, or that the person gave up, left behind. The image is put back
// after each applied mutation. Used by tests/cli/commands/plan_mutation_test.cc (a sample)
// and tests/tools/plan_mutation_sweep.cc (scripts/plan-mutation-sweep: every mutation).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace partalign::test {

struct MutationRun {
  std::string image;  ///< the disk: an image file, named by the plan
  unsigned sector_size = 512;
  std::string plan_file;  ///< made by `partalign plan -o` for `image`
  std::string scratch;    ///< a directory for copies, mutated plans, backups, journals
  /// Every `stride`-th mutation, from the `offset`-th (a sample; 1 and 0: every one), and
  /// every one whose name holds `always` (when not empty: "new_end_sector", the mutations most
  /// likely to be accepted and applied).
  size_t stride = 1;
  size_t offset = 0;
  std::string always;
};

struct MutationTally {
  int plans = 0;
  int mutations = 0;
  int refused = 0;                    ///< refused with nothing written
  int applied = 0;                    ///< accepted, equal to plan's plan for their layout, applied
  int differ = 0;                     ///< accepted although not plan's plan for their layout
  int violations = 0;                 ///< written before a refusal, or the disk invariant broken
  std::vector<std::string> failures;  ///< one line each: the mutation and what went wrong

  void Add(const MutationTally& other);
};

/// Runs the mutations of `run`; throws when the set-up fails (the image or the plan cannot be
/// read). The person's consent to the plan's discards is given again with each apply
/// (`--discard N` for each partition the plan file gives up).
MutationTally RunPlanMutations(const MutationRun& run);

}  // namespace partalign::test
