// SPDX-License-Identifier: GPL-3.0-or-later
// The promise every command that writes a disk keeps (docs/safety.md, "Every byte"), stated
// once for every apply, resume, restore and translate device test and the randomized sweep
// (scripts/apply-invariant-sweep):
//  1. every partition holds at its new place, over [0, min(old size, new size)), the bytes it
//     held at its old place - except bytes its used map proves free (apply copies only the
//     used chunks; docs/used-map.md) and the position records the plan lists as updated (boot
//     sectors); a partition proven empty or discarded by the user keeps nothing;
//  2. every byte of the disk outside the old and new partitions and the old and new tables' own
//     sectors is unchanged (the gaps hold boot loaders, vendor data, licensing blobs);
//  3. what a partition gives up when it becomes smaller (past its new size, at its old place)
//     held only zeros, unless it was left behind (a partition never shrinks over data).
// Partitions are paired by number; their places come from sfdisk (the oracle), the tables'
// own sectors from libfdisk through partalign's reader.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace partalign::test {

struct DiskInvariantOptions {
  /// The sector sizes the disks' tables are read with (translate changes it).
  unsigned before_sector_size = 512;
  unsigned after_sector_size = 512;
  /// Partitions whose contents may stay behind (proven empty, or `--discard`): only rule 2
  /// holds for their places.
  std::vector<uint32_t> left_behind;
  /// Absolute byte ranges [offset, offset + length) of the disk after the write that may differ
  /// although rule 1 or 2 covers them: the position records the plan lists as updated.
  std::vector<std::pair<uint64_t, uint64_t>> updated_records;
  /// Rule 1 skips the bytes each moved partition's used map (read from `before` by partalign's
  /// providers) proves free. False: every byte must be where it was (apply --copy-all).
  bool used_maps = true;
  /// Partitions a rolled-back move had moved, back at their old place: rule 1 skips the bytes
  /// their used map proves free, as for a moved partition (a rollback leaves those as the
  /// forward pass wrote them, docs/mover.md §4). Every other partition whose place did not
  /// change must hold every byte as it was.
  std::vector<uint32_t> rolled_back;
};

/// The options for checking a disk against the plan file `plan_file` applied to it: both sector
/// sizes `sector_size`, and as left behind every partition whose table-only action claims it
/// empty (`"empty"`: proven zeros or holes, or discarded). Throws when the file is unreadable.
DiskInvariantOptions InvariantOptionsForPlan(const std::string& plan_file, unsigned sector_size);

/// Adds to `options.updated_records` the sectors `apply --dry-run --json` (its output
/// `dry_run_json`) lists as the boot records each step rewrites (steps[].boot_records.sectors).
/// Throws when the text is not that JSON.
void AddDryRunRecords(DiskInvariantOptions& options, const std::string& dry_run_json);

/// The byte ranges [first, end) of the table's own sectors on `target` (MBR, GPT headers and
/// entries, EBRs) as libfdisk locates them through partalign's reader, whole sectors; none when
/// it holds no table.
std::vector<std::pair<uint64_t, uint64_t>> TableAreaRanges(const std::string& target,
                                                           unsigned sector_size);

/// The violations of the invariant between `before` (a copy of the disk taken before the
/// write: an image file) and `after` (the disk now: image or block device), one line each
/// (the first differing byte of each partition or region, with where it is); empty when it
/// holds.
std::vector<std::string> DiskInvariantViolations(const std::string& before,
                                                 const std::string& after,
                                                 const DiskInvariantOptions& options = {});

}  // namespace partalign::test
