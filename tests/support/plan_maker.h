// SPDX-License-Identifier: GPL-3.0-or-later
// Plans for apply's tests, until `partalign plan` writes them: built from the real table
// (ReadPartitionTable) and bound to the disk the way plan files are (identity, topology,
// table fingerprint).
#pragma once

#include <cstdint>
#include <string>

#include "partalign/layout/plan.h"

namespace partalign::test {

/// A plan for `path` that aligns the start of every partition holding no data (proven as plan
/// proves it: docs/audit-plan.md, "Empty is proven") up to a multiple of `grain_bytes`, keeping
/// its end (table-only actions); with `discard_data`, of every partition, those holding data
/// given up as `plan --discard` does (apply then needs `--discard N` for each: PlanDiscards).
/// Every other partition stays (none, or impossible for a misaligned start), each action
/// described as plan describes a layout (DescribeExtents), so that apply's recomputation
/// agrees. `sector_size`: the logical sector size to read an image file with (0: the
/// device's). Throws (failing the test) when the disk cannot be read.
Plan MakeTableOnlyPlan(const std::string& path, uint64_t sector_size = 0,
                       uint64_t grain_bytes = 1024 * 1024, bool discard_data = false);

/// Writes `plan` as a plan file.
void WritePlanFile(const std::string& file, const Plan& plan);

}  // namespace partalign::test
