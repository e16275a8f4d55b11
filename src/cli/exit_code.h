// SPDX-License-Identifier: GPL-3.0-or-later
// Exit statuses, documented in docs/partalign.8 (EXIT STATUS). Never reuse kFailure for a
// finding: scripts must tell "the disk is misaligned" from "partalign could not look".
#pragma once

namespace partalign {

enum class ExitCode : int {
  kOk = 0,
  /// Any error: bad usage, unreadable target, malformed input. Nothing was written.
  kFailure = 1,
  /// audit: at least one partition is misaligned (the report is complete).
  kMisaligned = 2,
  /// restore --check: the disk's table sectors differ from the backup (a finding, like audit's).
  kDiffers = 2,
  /// verify: the disk needs an action (translate, plan) since the snapshot.
  kActionNeeded = 2,
  /// A write command refused to act (stale plan, disk in use, wrong disk). Nothing was written.
  kRefused = 3,
  /// verify: not the disk the snapshot was taken of.
  kOtherDisk = 3,
  /// move/resume/apply: stopped part-way (error or interrupt) after writing; the journal is kept
  /// and `partalign resume JOURNAL` completes or rolls back the change.
  kUnfinished = 4,
};

}  // namespace partalign
