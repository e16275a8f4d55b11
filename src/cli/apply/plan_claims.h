// SPDX-License-Identifier: GPL-3.0-or-later
// A plan file is a claim, never an instruction (docs/apply.md, "A plan is a claim"): apply asks
// the person again for every discard the plan makes, proves what the plan's target layout
// gives up, recomputes every action from the disk and that layout, refuses a plan whose claims
// differ, and then executes the recomputed actions, never the file's.
#pragma once

#include <string>
#include <vector>

#include "cli/apply/table_write.h"
#include "cli/commands.h"
#include "partalign/layout/partition_table.h"
#include "partalign/layout/plan.h"

namespace partalign {

/// Discarding is consent: false (`*code` kRefused, nothing written) after printing each
/// partition the plan gives up that the person did not give up again (`consent`: apply
/// --discard N), naming the command that does, and each --discard the plan does not make.
bool CheckDiscardConsent(Streams io, const std::string& plan_path, const TableWriteOptions& write,
                         const Plan& plan, const std::vector<uint32_t>& consent, ExitCode* code);

/// Shrinking is consent (plan --make-room): false (`*code` kRefused, nothing written) after
/// printing why when the plan shrinks a partition and the person did not say --make-room again
/// (`consent`), naming the command that does, or said it for a plan that shrinks nothing.
bool CheckMakeRoomConsent(Streams io, const std::string& plan_path, const TableWriteOptions& write,
                          const Plan& plan, bool consent, ExitCode* code);

/// Every action of `*plan` recomputed from `table` (read with contents, the proofs apply made)
/// and the plan's target layout (RecomputePlan). When every claim holds, `*plan` gets the
/// recomputed actions and true; otherwise false (`*code` kRefused, nothing written) after
/// printing each claim that differs, with both values.
/// A plan's shrinks are checked against what apply read of each partition's contents
/// (`offers`: ReadShrinkOffers).
bool ReplaceClaimsByRecomputation(Streams io, const std::string& plan_path, const std::string& path,
                                  const PartitionTable& table, const std::vector<uint32_t>& discard,
                                  Plan* plan, ExitCode* code,
                                  const std::vector<ShrinkOffer>& offers = {});

}  // namespace partalign
