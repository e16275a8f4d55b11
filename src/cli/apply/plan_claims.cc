// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/apply/plan_claims.h"

#include <fmt/format.h>

#include "partalign/table/apply_command.h"
#include "partalign/table/plan_check.h"

namespace partalign {
namespace {

// Prints each of `problems` as a refusal of `plan_path`: false, `*code` kRefused.
bool Refuse(Streams io, const std::string& plan_path, const std::vector<std::string>& problems,
            ExitCode* code) {
  if (problems.empty()) return true;
  for (const std::string& m : problems) {
    PrintError(io.err, fmt::format("refusing to apply '{}': {}", plan_path, m));
  }
  PrintError(io.err, "nothing was written");
  *code = ExitCode::kRefused;
  return false;
}

// The apply command that gives the consent `plan` needs, with the options of `write` that name
// the disk and its topology.
std::string ConsentCommand(const std::string& plan_path, const TableWriteOptions& write,
                           const Plan& plan) {
  return ApplyCommand(plan_path, plan, {write.target, write.assume, write.sector_size});
}

}  // namespace

bool CheckDiscardConsent(Streams io, const std::string& plan_path, const TableWriteOptions& write,
                         const Plan& plan, const std::vector<uint32_t>& consent, ExitCode* code) {
  std::vector<std::string> problems =
      DiscardConsentProblems(plan, consent, ConsentCommand(plan_path, write, plan));
  return Refuse(io, plan_path, problems, code);
}

bool CheckMakeRoomConsent(Streams io, const std::string& plan_path, const TableWriteOptions& write,
                          const Plan& plan, bool consent, ExitCode* code) {
  return Refuse(io, plan_path,
                MakeRoomConsentProblems(plan, consent, ConsentCommand(plan_path, write, plan)),
                code);
}

bool ReplaceClaimsByRecomputation(Streams io, const std::string& plan_path, const std::string& path,
                                  const PartitionTable& table, const std::vector<uint32_t>& discard,
                                  Plan* plan, ExitCode* code,
                                  const std::vector<ShrinkOffer>& offers) {
  RecomputedPlan recomputed = RecomputePlan(*plan, table, discard, offers);
  if (recomputed.refusals.empty()) {
    if (!plan->layout) plan->actions = std::move(recomputed.actions);
    return true;
  }
  *code = ExitCode::kRefused;
  if (recomputed.refusals.size() == 1) {
    PrintError(io.err, fmt::format("refusing to apply '{}' to '{}': {}; nothing was written",
                                   plan_path, path, recomputed.refusals.front()));
    return false;
  }
  PrintError(io.err, fmt::format("refusing to apply '{}' to '{}': {} claims of the plan differ "
                                 "from what apply computes from the disk and the plan's new "
                                 "sectors:",
                                 plan_path, path, recomputed.refusals.size()));
  for (const std::string& m : recomputed.refusals) PrintError(io.err, "  " + m);
  PrintError(io.err, "nothing was written");
  return false;
}

}  // namespace partalign
