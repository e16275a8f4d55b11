// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/move/journal_location.h"

#include <fmt/format.h>

namespace partalign {
namespace {

bool Written(const StorageNode& node, const TargetStorage& target) {
  for (const StorageNode& w : target.nodes) {
    if (node.SameAs(w)) return true;
  }
  return false;
}

// `part` is a partition of `disk`, the disk being changed (its first node), and the move
// writes none of its bytes.
bool OutsideTheMove(const StorageNode& part, const StorageNode& disk, const TargetStorage& target) {
  return part.partition != 0 && !target.written.empty() && !target.nodes.empty() &&
         disk.SameAs(target.nodes.front()) && !OverlapsAny(part.extent, target.written);
}

}  // namespace

std::optional<std::string> JournalPlacementNote(const JournalPlacement& journal,
                                                const TargetStorage& target) {
  if (JournalPlacementProblem(journal, target)) return std::nullopt;
  for (size_t i = 1; i < journal.storage.size(); ++i) {
    if (OutsideTheMove(journal.storage[i - 1], journal.storage[i], target)) {
      return fmt::format(
          "the journal directory '{}' is on the disk being changed (partition {}, '{}', which "
          "this move neither reads nor writes): a failure of this disk loses both",
          journal.directory, journal.storage[i - 1].partition, journal.storage[i - 1].name);
    }
  }
  return std::nullopt;
}

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
  for (size_t i = 0; i < journal.storage.size(); ++i) {
    const StorageNode& node = journal.storage[i];
    if (!Written(node, target)) continue;
    // Reached through what was judged just before (a loop device's backing file after the
    // device), or through a partition of the disk that the move does not write.
    if (i > 0 && (Written(journal.storage[i - 1], target) ||
                  OutsideTheMove(journal.storage[i - 1], node, target))) {
      continue;
    }
    const std::string& first = journal.storage.front().name;
    return fmt::format(
        "the journal directory '{}' is stored on '{}'{}, part of '{}', the disk being changed; "
        "put the journal on another disk{}",
        journal.directory, first,
        first == node.name ? "" : fmt::format(" (which lies on '{}')", node.name), target.path,
        i > 0 && journal.storage[i - 1].partition != 0 && !target.written.empty()
            ? fmt::format(", or on a partition the move does not write (partition {} lies "
                          "where it writes)",
                          journal.storage[i - 1].partition)
            : "");
  }
  return std::nullopt;
}

}  // namespace partalign
