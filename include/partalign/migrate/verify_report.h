// SPDX-License-Identifier: GPL-3.0-or-later
// partalign verify: the disk now against a snapshot taken before it moved (docs/migration.md).
// Is it the same disk (serial or WWN; else the table's GUIDs; else what the partitions hold),
// what changed (every topology field with what it means for each partitioner, a table now read
// at the wrong sector size, partitions and filesystems missing or moved, verdicts that flipped),
// and what to do (nothing, translate, re-plan). Pure: both sides are Snapshot values, and the
// consequences come from the explain models and the audit (src/core/tools, src/core/layout).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "partalign/migrate/snapshot.h"
#include "partalign/tools/tool_version.h"

namespace partalign {

/// One thing that differs. `field` is named like probe's JSON keys ("logical_sector_size",
/// "optimal_io_size", "table_sector_size") or, for a partition, "partitions[2].start_bytes",
/// "partitions[2].parted_align_check_opt".
struct VerifyChange {
  std::string field;
  nlohmann::json before;
  nlohmann::json after;
  std::string consequence;  ///< one sentence
};

/// What to do about it, in this order when several apply.
inline constexpr const char* kActionNone = "none";
inline constexpr const char* kActionTranslate = "translate";
inline constexpr const char* kActionPlan = "plan";

/// What `partalign translate` would do with the disk's table as it is now, when the table is
/// written for another sector size than the disk's (computed as translate computes it: the
/// table read with the sector size it is written for, PlanTranslation). Empty when translate
/// would translate it, or was not asked.
struct TranslateOutlook {
  /// Every reason translate would refuse, one sentence each (PlanTranslation's refusals).
  std::vector<std::string> refusals;
  /// NTFS and exFAT partitions among them that `translate --accept N` lets through.
  std::vector<uint32_t> acceptable;
  /// The refusals are all lifted by --accept.
  bool only_acceptable = false;
};

struct VerifyReport {
  bool same_disk = false;
  /// "wwn", "serial", "table_guids", "dos_disk_id", "content_digests"; empty when not the same
  /// disk.
  std::string matched_by;
  /// How identity was decided, one sentence each (what matched, what differed and why it was
  /// not decisive).
  std::vector<std::string> identity;
  std::vector<VerifyChange> changes;
  /// kActionNone alone, or kActionTranslate and/or kActionPlan.
  std::vector<std::string> actions;
  /// One sentence per action: why.
  std::vector<std::string> action_reasons;
  /// Why `partalign translate` would refuse the table as it stands (with kActionTranslate).
  TranslateOutlook translate;

  bool action_needed() const;
};

/// Compares the disk `now` with `before`. `heads_now` are the digests of the bytes now at the
/// places where `before` recorded its partitions' digests (same offsets and lengths); `versions`
/// are the partitioners' versions both sides are predicted with, so that only the disk's
/// changes show; `translate`, what translate would say about the table now: the advice names
/// it instead of a command that would refuse.
VerifyReport CompareSnapshots(const Snapshot& before, const Snapshot& now,
                              const std::vector<ContentDigest>& heads_now,
                              const ToolVersions& versions, const TranslateOutlook& translate = {});

/// The `verify --json` document (docs/output.md).
nlohmann::json VerifyJson(const VerifyReport& report, const std::string& device,
                          const std::string& snapshot_path, const Snapshot& before);

/// The human report: identity, one block per change, the actions.
std::vector<std::string> VerifyLines(const VerifyReport& report, const std::string& device,
                                     const Snapshot& before);

/// The partitions of `table` counted in `sector_size`-byte sectors (starts and sizes kept in
/// bytes); partitions that are not whole sectors of that size are left out and their numbers
/// returned in `*left_out`. The usable area and areas are not carried over.
PartitionTable TableInSectors(const PartitionTable& table, uint64_t sector_size,
                              std::vector<uint32_t>* left_out);

}  // namespace partalign
