// SPDX-License-Identifier: GPL-3.0-or-later
// Which partitions of a disk hold a sleeping system, and why (docs/used-map.md, "Hibernation is
// a refusal"): one scan that every command calls. The write commands (apply, its dry run,
// translate, move) refuse with one line and exit 3 before anything is written; probe, audit,
// plan, the planner and the report say it per partition.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cli/commands.h"
#include "partalign/layout/partition_table.h"
#include "partalign/used/hibernation.h"

namespace partalign {

/// A stretch of the disk to look into: a partition, or (for `move`) the range it moves.
struct ScannedArea {
  uint32_t partition = 0;  ///< 0: not a partition
  uint64_t offset_bytes = 0;
  uint64_t length_bytes = 0;
  std::string fs_type;  ///< libblkid's TYPE ("" when it found none)
  /// Whether libblkid was asked for fs_type. False (a table read without its contents): the
  /// scan reads the area's head and asks libblkid only when the head may hold one of the
  /// signatures it looks for (HeadMayHoldSleepingSystem); otherwise nothing sleeps there.
  bool typed = true;
};

struct SleepScan {
  std::vector<SleepingPartition> sleeping;
  /// Worth a warning, not a refusal: Windows' dirty bit on an NTFS volume, and what could not
  /// be looked into (an NTFS or ext filesystem its library cannot open).
  std::vector<std::string> warnings;
  bool asleep() const { return !sleeping.empty(); }
};

/// Looks into each area of `path` (read-only): a swap area (TYPE swap or swsuspend, or no
/// TYPE) for a hibernation image (partalign/used/swap_signature.h); an NTFS volume for an active
/// hiberfil.sys and its dirty bit; an ext2/3/4 filesystem for swap files holding an image (the
/// usual names and those its /etc/fstab names, their first 64 KiB each).
SleepScan ScanForSleepingSystems(const std::string& path, const std::vector<ScannedArea>& areas);

/// The areas of `table`'s partitions (an extended partition's container left out); `typed`
/// false when its contents were not probed (TableRead::contents_probed).
std::vector<ScannedArea> AreasOfTable(const PartitionTable& table, bool typed = true);

/// ScanForSleepingSystems over the partitions of `table` (`typed`: as AreasOfTable).
SleepScan ScanForSleepingSystems(const std::string& path, const PartitionTable& table,
                                 bool typed = true);

/// For a command that writes: prints the scan's warnings, and when the disk holds a sleeping
/// system the one line of the refusal; true then (the caller exits 3, kRefused).
bool RefuseIfSleeping(Streams io, const std::string& path, const SleepScan& scan);

/// One line per sleeping partition (SleepingLine), then the warnings: what probe, audit, plan
/// and the report print.
std::vector<std::string> SleepingLines(const SleepScan& scan);

/// [{"partition": 2, "offset_bytes": ..., "system": "linux", "found": "...", "advice": "..."}]
nlohmann::json SleepingJson(const SleepScan& scan);

}  // namespace partalign
