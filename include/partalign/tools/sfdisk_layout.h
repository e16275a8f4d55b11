// SPDX-License-Identifier: GPL-3.0-or-later
// Where sfdisk (libfdisk) puts every partition of a script on a fresh label: `label: gpt|dos`
// then one line per partition with no start (the default start), `size=N<unit>` (a relative
// size: the end is aligned), a size in plain sectors (exact), or no size (the rest); `type=Ex`
// makes a DOS extended partition, and the lines after it become logical partitions. Restated
// from libfdisk's gpt_add_partition() (gpt.c: find_first_in_largest, find_last_free, the
// aligned size) and add_partition()/dos_add_partition() (dos.c: first fit into free space, the
// EBR gap of one first LBA before every logical partition) of util-linux 2.38
// (alignment-heuristics.md §3.5); no upstream code is copied.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partalign/tools/libfdisk_model.h"

namespace partalign {

/// One line of the script.
struct SfdiskLine {
  /// nullopt: no size (the rest of the free area).
  std::optional<uint64_t> size_sectors;
  /// The size was given as a plain number of sectors (libfdisk does not align its end).
  bool size_explicit = false;
  /// `type=Ex` (DOS only): the extended partition.
  bool extended = false;
};

enum class SfdiskPartKind { kPrimary, kExtended, kLogical };

struct SfdiskPartition {
  int number = 0;  ///< as sfdisk numbers it: 1-4 primary, 5.. logical
  SfdiskPartKind kind = SfdiskPartKind::kPrimary;
  uint64_t start_sector = 0;
  uint64_t end_sector = 0;
  bool operator==(const SfdiskPartition&) const = default;
};

struct SfdiskLayout {
  /// Empty when sfdisk refuses: it writes nothing if any line fails.
  std::vector<SfdiskPartition> partitions;
  /// What libfdisk says about the line that fails; empty on success.
  std::string error;
  /// `fdisk -l` afterwards: "Partition N does not start on physical sector boundary.".
  std::vector<std::string> warnings;
  std::vector<std::string> reasons;
};

/// Applies `lines` in order to the fresh `label` (CreateLibfdiskLabel).
SfdiskLayout PredictSfdiskLayout(const LibfdiskLabel& label, const std::vector<SfdiskLine>& lines);

}  // namespace partalign
