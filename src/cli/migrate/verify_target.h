// SPDX-License-Identifier: GPL-3.0-or-later
// What `verify` and `report --against` both compute: the disk now against a snapshot taken
// before (docs/migration.md). Never writes.
#pragma once

#include <string>

#include "io/device/device_probe.h"
#include "partalign/migrate/snapshot.h"
#include "partalign/migrate/verify_report.h"
#include "partalign/util/result.h"

namespace partalign {

struct VerifyOutcome {
  Snapshot before;  ///< the snapshot file's content
  VerifyReport report;
};

/// Reads the snapshot file `snapshot_path` (untrusted: a regular file, size-limited,
/// validated), captures `target` now with `options`, digests what is now where the snapshot's
/// partitions were, and compares.
Result<VerifyOutcome> VerifyTarget(const std::string& target, const ProbeOptions& options,
                                   const std::string& snapshot_path);

}  // namespace partalign
