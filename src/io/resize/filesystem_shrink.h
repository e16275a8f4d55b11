// SPDX-License-Identifier: GPL-3.0-or-later
// Shrinks the contents of a partition with the tool made for them - on a scratch copy, never on
// the disk (docs/resize.md): the partition's used bytes are copied to a sparse file
// on the journal's storage, the filesystem's checker runs on it, then its resizer, then the
// checker again; what the tool changed becomes a journaled step's updates (the old bytes and
// the new ones), which the mover writes and `partalign resume` completes or rolls back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "partalign/move/move_plan.h"
#include "partalign/resize/shrink_way.h"
#include "partalign/util/result.h"

namespace partalign {

struct ShrinkRequest {
  int disk_fd = -1;               ///< the disk or image, open (read is enough; O_DIRECT is fine)
  std::string disk_path;          ///< for messages
  uint64_t offset_bytes = 0;      ///< the partition's start on the disk
  uint64_t length_bytes = 0;      ///< its size now
  uint64_t new_length_bytes = 0;  ///< its size after the shrink (its start stays)
  uint64_t sector_bytes = 512;    ///< the disk's logical sector
  std::string fs_type;            ///< libblkid's TYPE of its contents
  std::string scratch_dir;        ///< where the scratch copy goes: the journal's directory
  std::string name;               ///< "partition 5 of '/dev/sdb'", for messages
};

struct ShrinkOutcome {
  ShrinkTool tool = ShrinkTool::kResize2fs;
  /// What the tool changed, at disk offsets: the journaled step writes these (new bytes), a
  /// rollback puts the old ones back. All inside the partition's new extent.
  std::vector<TableUpdate> updates;
  /// Each command run on the scratch copy and its verdict ("e2fsck -f -n: clean"), for the user.
  std::vector<std::string> steps;
  uint64_t copied_bytes = 0;  ///< bytes copied into the scratch copy
};

/// Shrinks the contents of the partition in `request` on a scratch copy and returns the changes.
/// Refuses (nothing is changed anywhere) when the contents cannot be shrunk (ShrinkWayFor), the
/// checker finds problems before or after, the tool fails, or a swap area holds a hibernation
/// image; each refusal names the partition, the tool and its last words.
Result<ShrinkOutcome> ShrinkOnScratch(const ShrinkRequest& request);

}  // namespace partalign
