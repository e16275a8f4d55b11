// SPDX-License-Identifier: GPL-3.0-or-later
// What a file system is stored on, traced through sysfs and the mount table (mount_table.h):
// partition -> disk, device-mapper/md -> lower devices, loop device -> backing file -> the file
// system holding that file -> ... . Feeds the journal-location rule in
// partalign/move/journal_location.h.
#pragma once

#include <string>
#include <vector>

#include "io/device/target.h"
#include "partalign/move/journal_location.h"
#include "partalign/util/result.h"

namespace partalign {

/// Describes the file system holding `directory` and everything it is stored on.
Result<JournalPlacement> DescribeJournalPlacement(const std::string& directory,
                                                  const std::string& sysfs_root = "/sys");

/// The storage a move on `target` writes: the disk, its lower devices, a loop device's backing
/// file, or the image file itself.
Result<TargetStorage> DescribeTargetStorage(const Target& target,
                                            const std::string& sysfs_root = "/sys");

/// Refuses a journal at `journal_path` (its directory must exist) that could be lost or
/// overwritten by a move on `target` that writes `written` (bytes of the disk; empty: any). A
/// journal on a partition of the disk that the move does not write is allowed: `note` (when
/// given) then receives the line saying so (JournalPlacementNote).
Status CheckJournalPlacement(const std::string& journal_path, const Target& target,
                             const std::vector<ByteExtent>& written = {},
                             std::string* note = nullptr, const std::string& sysfs_root = "/sys");

}  // namespace partalign
