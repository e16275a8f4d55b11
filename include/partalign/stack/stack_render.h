// SPDX-License-Identifier: GPL-3.0-or-later
// The stack as JSON (audit's partitions[].stack, docs/output.md) and as an indented tree for
// the human report.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "partalign/stack/stack_layer.h"

namespace partalign {

/// One object per layer, in walk order: {layer, name, depth, data_offset_bytes,
/// offset_in_parent_bytes, geometry, properties, aligned, checks, details, required_checks,
/// reasons, notes}.
nlohmann::json StackJson(const StackWalk& walk);

/// The tree, one line per layer indented by depth below `indent`, each followed by its
/// reasons and notes; the walk's errors last:
///   "  LVM2 PV (VG vg0): data at byte 34602496 (+33553920) NOT ALIGNED"
///   "    - LVM2 PV (VG vg0) data starts at byte 34602496 = 1048576 + 33553920, ..."
std::vector<std::string> StackTreeLines(const StackWalk& walk, const std::string& indent);

}  // namespace partalign
