// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/move/journal_location.h"

#include <fmt/format.h>

namespace partalign {

std::optional<std::string> JournalPlacementProblem(const JournalPlacement& journal,
                                                   const TargetStorage& target) {
  if (journal.volatile_fs) {
    return fmt::format(
        "the journal directory '{}' is on {}, which a power failure erases while the disk keeps "
        "the half-moved data; choose a directory on a disk file system",
        journal.directory, journal.fs_type);
  }
  if (journal.remote) return std::nullopt;
  if (!journal.storage_known) {
    return fmt::format(
        "cannot tell which disk holds the journal directory '{}' (file system {}), so it might "
        "be the disk being changed; choose a directory on a local disk file system",
        journal.directory, journal.fs_type);
  }
  for (const StorageNode& node : journal.storage) {
    for (const StorageNode& written : target.nodes) {
      if (!node.SameAs(written)) continue;
      const std::string& first = journal.storage.front().name;
      return fmt::format(
          "the journal directory '{}' is stored on '{}'{}, part of '{}', the disk being changed; "
          "put the journal on another disk",
          journal.directory, first,
          first == node.name ? "" : fmt::format(" (which lies on '{}')", node.name), target.path);
    }
  }
  return std::nullopt;
}

}  // namespace partalign
