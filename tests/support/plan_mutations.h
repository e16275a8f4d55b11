// SPDX-License-Identifier: GPL-3.0-or-later
// Every mutation of a plan file that a hand, a script or a broken tool could make (issue 37:
// "a plan file is a claim, never an instruction"): each number +-1, +-grain, 0 and the largest
// 64-bit value; each enum field set to each of its values (the optional "empty" added where it
// is missing); each boolean flipped; each key removed; each key written twice with another
// value (the last one wins in most parsers). The plan-mutation tests (tests/core/table,
// tests/cli/commands) and scripts/plan-mutation-sweep feed each to apply and check that it is
// refused before anything is written, or that it is the plan `plan` makes for its target
// layout. Pure: nlohmann-json only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace partalign::test {

struct PlanMutation {
  std::string name;  ///< "actions[0].bytes_to_move=4096", "actions[1].kind twice"
  std::string text;  ///< the mutated plan file
};

/// Every mutation of the plan file `plan` (PlanToJson's document). The grain of the +-grain
/// mutations is the plan's own "grain_bytes": in sectors for sector fields (*_sector, *_lba),
/// in bytes for every other number.
std::vector<PlanMutation> PlanMutations(const nlohmann::json& plan);

/// `doc` as JSON text with the key `key` of the object at `path` (keys and array indexes from
/// the root) written twice: first with its value, then with `second`.
std::string DumpWithDuplicateKey(const nlohmann::json& doc, const nlohmann::json::json_pointer& at,
                                 const nlohmann::json& second);

}  // namespace partalign::test
