// SPDX-License-Identifier: GPL-3.0-or-later
// `plan --interactive TARGET`: the terminal planner's loop. It loads the disk (probe with
// --assume, the table with each partition's contents), hands the keys to the planner core
// (include/partalign/interactive/), draws what the core draws through ncursesw
// (io/terminal/curses_terminal.h), and carries out the core's effects: writing an exported file,
// and applying a plan through `apply`'s own code path (ApplyPlanFile), after which it reloads the
// disk. Without a terminal it refuses in one line.
#pragma once

#include <string>

#include "cli/commands.h"
#include "cli/target/target_options.h"
#include "partalign/topology/device.h"

namespace partalign {

/// `label_when_empty`: the label a disk without partitions gets (--label); `backup_dir`: where
/// `w` keeps the plan file it applies, and apply its table backup. `scan`: read every partition
/// without a signature whose head is zeros in full when the disk is loaded, so that one proven
/// empty may move by the table alone (false, --no-scan: they move whole).
/// `discard`: partitions whose contents are given up from the start (--discard N), as `d`
/// gives them up in the planner.
ExitCode RunPlannerSession(const TargetOptions& target, LabelType label_when_empty,
                           const std::string& backup_dir, bool scan, Streams io,
                           const std::vector<uint32_t>& discard = {});

}  // namespace partalign
