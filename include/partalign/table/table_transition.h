// SPDX-License-Identifier: GPL-3.0-or-later
// A partition-table change as raw sector images: every run of sectors that holds table data
// before or after the change, with its bytes before and after, in the order in which they must
// be written so that a crash at any instant leaves the old table, the new one, or (where no
// write order can promise that: a DOS EBR chain rewritten in place) a state `restore` undoes
// from the backup. apply computes it through libfdisk (src/io/table/fdisk_transition.h) and writes
// it (src/io/table/table_writer.h); the journaled mover writes it after moving data. docs/apply.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "partalign/layout/partition_table.h"
#include "partalign/topology/device.h"
#include "partalign/util/result.h"

namespace partalign {

/// What a run of table sectors is. libfdisk's fdisk_locate_disklabel() lists a GPT as
/// PMBR, header, entries, backup entries, backup header and a DOS table as MBR, then one EBR per
/// logical partition in chain order (partition 5 first; its EBR is the chain's head, at the
/// start of the extended partition).
enum class TableAreaRole {
  kMbr,  ///< LBA 0: the DOS MBR or the GPT protective MBR
  kGptHeader,
  kGptEntries,
  kGptBackupEntries,
  kGptBackupHeader,
  kEbr,
};

std::string_view ToString(TableAreaRole role);
std::optional<TableAreaRole> TableAreaRoleFromString(std::string_view text);

/// One run of whole sectors. `old_index`/`new_index`: for an EBR, its place in the old/new
/// chain (0 = head, the EBR of partition 5); for other roles 0. nullopt when the run holds no
/// table data in that table (a new EBR position, or an old one the new chain no longer uses).
struct TableRange {
  TableAreaRole role = TableAreaRole::kMbr;
  uint64_t offset_bytes = 0;
  uint64_t length_bytes = 0;
  std::optional<uint32_t> old_index;
  std::optional<uint32_t> new_index;
  std::vector<uint8_t> old_bytes;
  std::vector<uint8_t> new_bytes;

  bool changed() const { return old_bytes != new_bytes; }
  bool operator==(const TableRange&) const = default;
};

/// "GPT backup entries", "protective MBR", "EBR of partition 6", "EBR of partition 6 (new
/// place)" (only the new table has it there), "EBR of partition 7 (old place)" (only the old).
std::string AreaName(LabelType label, const TableRange& range);

struct TableTransition {
  LabelType label = LabelType::kNone;
  uint64_t sector_size = 512;
  uint64_t disk_size_bytes = 0;
  /// In write order. Ranges whose bytes do not change are kept: they are part of the table and
  /// are backed up, but not written.
  std::vector<TableRange> ranges;
  bool operator==(const TableTransition&) const = default;
};

/// The ranges (bytes still empty) of a change from a table whose areas are `old_areas` to one
/// whose areas are `new_areas` (PartitionTable::areas of each), in write order: each area
/// rounded out to whole sectors, an area both tables have at the same place listed once. Both
/// tables must have label `label` (GPT or DOS). Errors when an area lies outside the disk, the
/// area list does not have the shape of `label`, or areas overlap without coinciding.
Result<TableTransition> LayoutTransition(LabelType label, uint64_t sector_size,
                                         uint64_t disk_size_bytes,
                                         const std::vector<TableArea>& old_areas,
                                         const std::vector<TableArea>& new_areas);

/// The ranges of a fresh table replacing whatever the disk holds (apply of a `plan --layout` or
/// planner plan): `old_label` may be kNone (no areas) or differ from `new_label`. With the same
/// label this is LayoutTransition. Otherwise every area of the new table (in its label's write
/// order, the sector at LBA 0 last, where the old and new tables share it), then the old
/// table's other areas, which the caller zeroes so that no stale header is found again, except
/// those inside `new_partitions` (sector ranges, inclusive), which become partition space.
Result<TableTransition> FreshLayoutTransition(
    LabelType old_label, LabelType new_label, uint64_t sector_size, uint64_t disk_size_bytes,
    const std::vector<TableArea>& old_areas, const std::vector<TableArea>& new_areas,
    const std::vector<std::pair<uint64_t, uint64_t>>& new_partitions);

/// Puts `ranges` into the crash-safe write order (docs/apply.md, "Write order"):
/// GPT: backup entries, backup header, primary entries, primary header, protective MBR.
/// DOS: ranges only the new table uses (the old chain cannot reach them); then those both use:
/// the old chain's EBRs from its end towards its head, the head, the MBR; then ranges only the
/// old table used (nothing references them after the switch).
void SortForWrite(TableTransition* transition);

/// Checks that `transition` can be written as it is: GPT or DOS, old and new bytes as long as
/// their range, whole sectors, inside the disk, ranges disjoint, at most one range per role
/// except EBRs (among the ranges of the new table, and among those only the old one uses).
/// Errors name the range.
Status ValidateTransition(const TableTransition& transition);

/// The way back: old and new exchanged, in the write order for that direction.
TableTransition Inverse(const TableTransition& transition);

/// The ranges whose bytes change, in write order: what a write actually writes.
std::vector<TableRange> ChangedRanges(const TableTransition& transition);

enum class CrashSafety {
  /// At every instant of the write the disk holds a readable table, the old or the new one.
  kOldOrNew,
  /// A crash between two of the writes can leave a table mixing old and new entries; the
  /// backup (written before the first write) lets `restore` put the old one back exactly.
  kRestoreNeeded,
};

struct CrashAssessment {
  CrashSafety safety = CrashSafety::kOldOrNew;
  /// One sentence: why.
  std::string reason;
};

/// What a crash during the write of `transition` (in its order) can leave behind.
CrashAssessment AssessCrashSafety(const TableTransition& transition);

/// Changed ranges that would overwrite partition contents: inside a (non-extended) partition
/// of `new_table`, or inside a partition of `old_table` that may hold data
/// (PartitionContents::MayHoldData) and is not in `left_behind` (partitions whose old place
/// holds nothing to keep: their data moved, or the user discarded it). One message each.
std::vector<std::string> TransitionConflicts(const TableTransition& transition,
                                             const PartitionTable& old_table,
                                             const PartitionTable& new_table,
                                             const std::vector<uint32_t>& left_behind = {});

/// A range of one step of a chain (apply's steps: the transitions in order, each starting from
/// the table the one before made).
struct ChainRange {
  size_t step = 0;
  size_t range = 0;
  bool operator==(const ChainRange&) const = default;
};

/// The sectors a chain uses for table bytes only for a while: libfdisk rebuilds a DOS EBR chain
/// at every step and may put the EBR of a logical partition that does not move into the free
/// space before it (docs/apply.md), where a later step abandons it again. Such a sector lies in
/// a gap - outside the areas of the first step's old table and of the last step's new table,
/// and outside every partition (the extended one excepted) of both - and held something else
/// before apply (a boot loader, vendor data). Listed is the range of the step that abandons it
/// (its new table no longer uses it); apply writes the bytes the disk held there before its
/// first step as that range's new bytes, so that the gap ends as it began.
std::vector<ChainRange> TransientGapRanges(const std::vector<const TableTransition*>& chain,
                                           const PartitionTable& first, const PartitionTable& last);

/// The sectors the first table of a chain uses that the chain leaves in a gap: a range of the
/// step that abandons it (its new table no longer uses it), inside an area of `first` (an EBR),
/// outside the areas of `last` and outside every partition (the extended one excepted) of both.
/// What such a sector held before its table used it is known only when a table of partalign's
/// own put it there: an EBR an interrupted apply left in a gap (TransientGapRanges of an apply
/// that did not finish). apply looks that up in the disk's backups (BytesBeforeOwnTables).
std::vector<ChainRange> AbandonedTableRanges(const std::vector<const TableTransition*>& chain,
                                             const PartitionTable& first,
                                             const PartitionTable& last);

/// The transition as JSON (apply --dry-run --json, docs/output.md): per range its step, area,
/// offset, sectors, bytes, whether it changes, and the new bytes (base64) of changed ones.
nlohmann::json TransitionJson(const TableTransition& transition);

}  // namespace partalign
