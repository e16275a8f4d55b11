// SPDX-License-Identifier: GPL-3.0-or-later
// What apply leaves behind without copying it (partalign/table/plan_check.h, LeftBehind):
// partitions proven empty, or given up by the user, whose old bytes the table stops pointing
// at. Shown before the confirmation, proven again on the held disk right before the first
// write (docs/apply.md, "Empty is proven").
#pragma once

#include <iosfwd>
#include <string>

#include "cli/commands.h"
#include "partalign/layout/partition_table.h"
#include "partalign/table/plan_check.h"

namespace partalign {

/// "Left behind ..." and a line per partition: what proves it empty, or that the user
/// discarded it. Nothing when `left_behind` is empty.
void PrintLeftBehind(std::ostream& out, const PartitionTable& table, const LeftBehind& left_behind);

/// The proofs again on the held disk `fd`, right before the first write: every partition of
/// `left_behind.to_prove` proven empty must still be (holes, or every byte read as zero), and
/// every tail of `left_behind.tails` must still read as zeros.
/// False after printing what changed.
bool StillEmpty(Streams io, const std::string& path, const PartitionTable& table,
                const LeftBehind& left_behind, int fd);

}  // namespace partalign
