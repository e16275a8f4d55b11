// SPDX-License-Identifier: GPL-3.0-or-later
// A plan: what to change on one disk so that every partition is aligned, bound to that disk's
// identity, topology and table fingerprint. `plan` computes it, `apply` executes it; the plan
// file is its JSON form (format "partalign-plan", docs/output.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "partalign/resize/shrink_way.h"
#include "partalign/topology/alignment.h"
#include "partalign/topology/device.h"
#include "partalign/topology/topology.h"
#include "partalign/util/result.h"

namespace partalign {

inline constexpr std::string_view kPlanFormat = "partalign-plan";
inline constexpr int kPlanFormatVersion = 1;

enum class ActionKind {
  kNone,        ///< already aligned; nothing changes
  kTableOnly,   ///< only table entries change (no data where the start moves, or only the end)
  kMoveData,    ///< the start moves and the partition holds data: the journaled mover runs
  kImpossible,  ///< cannot be aligned; `reason` says why
};

std::string_view ToString(ActionKind kind);
std::optional<ActionKind> ActionKindFromString(std::string_view text);

/// Why a table-only action may leave a partition's bytes behind (its start moves, or it
/// shrinks): only a proof or the user's word (docs/audit-plan.md, "Empty is proven").
enum class Emptiness {
  kNotClaimed,  ///< the action claims nothing (it keeps every byte where it is, or moves them)
  kZeros,       ///< plan read every byte of the partition: zeros
  kHoles,       ///< the image file holds only holes there
  kDiscarded,   ///< the user gave up its contents (plan --discard N)
};

/// "zeros", "holes", "discarded" (and "" for kNotClaimed): the plan file's key "empty".
std::string_view ToString(Emptiness emptiness);

/// plan --make-room: a partition whose contents its own tool shrinks, at its end, before any
/// move (docs/resize.md): the partition keeps its start and gets `size_sectors`; the tool is
/// the way for its contents (ShrinkWayFor). What the person consents to again at apply
/// (apply --make-room).
struct PlannedShrink {
  uint32_t partition = 0;
  ShrinkTool tool = ShrinkTool::kMkswap;
  uint64_t size_sectors = 0;  ///< the partition's size after the shrink
  bool operator==(const PlannedShrink&) const = default;
};

/// One partition's change. Sectors are logical sectors of the disk, ends inclusive.
struct PlanAction {
  uint32_t partition = 0;
  uint64_t old_start_sector = 0;
  uint64_t old_end_sector = 0;
  uint64_t new_start_sector = 0;
  uint64_t new_end_sector = 0;
  ActionKind kind = ActionKind::kNone;
  /// Bytes the mover copies (the data of the partition; 0 unless kMoveData).
  uint64_t bytes_to_move = 0;
  std::string reason;
  /// table-only actions that move the start or shrink the partition: why that loses nothing
  /// (apply proves it again before writing, unless kDiscarded). Optional key "empty".
  Emptiness empty = Emptiness::kNotClaimed;
  /// plan --make-room: the partition's contents are shrunk first (optional key "shrink":
  /// {"tool", "size_sectors"}); old_* are its place before the shrink, new_* after every step.
  std::optional<PlannedShrink> shrink;
  bool operator==(const PlanAction&) const = default;
};

/// What a plan is bound to: apply refuses when any of it differs on the disk it is given.
struct DiskIdentity {
  std::string path;
  uint64_t size_bytes = 0;
  uint64_t logical_sector_size = 0;
  std::string serial;  ///< empty when the device has none (loop devices, image files)
  std::string wwn;
  /// Plans only: the GPT disk GUID or DOS disk identifier of the table the plan was made from
  /// ("disk.table_id", absent in older plans and for a disk without a table): what tells
  /// another disk from the same disk changed when neither has a serial (ClassifyStalePlan).
  std::string table_id;
  bool operator==(const DiskIdentity&) const = default;
};

/// A partition of a fresh layout (`plan --layout`): created, not moved. Sectors are logical
/// sectors of the disk, ends inclusive.
struct LayoutPartition {
  uint32_t partition = 0;
  uint64_t start_sector = 0;
  uint64_t end_sector = 0;
  std::string type;        ///< GPT type GUID (upper case) or DOS type byte ("0x83")
  std::string name;        ///< GPT partition name; empty for none
  std::string attributes;  ///< GPT attributes as sfdisk writes them; empty for none
  bool bootable = false;   ///< DOS boot flag
  bool operator==(const LayoutPartition&) const = default;
};

/// A whole new table for an empty disk. A plan carries either this (and no actions) or
/// actions on the existing table.
struct PlanLayout {
  LabelType label = LabelType::kGpt;  ///< kGpt or kDos
  /// GPT: the header's FirstUsableLBA/LastUsableLBA to write; DOS: the area used.
  uint64_t first_usable_lba = 0;
  uint64_t last_usable_lba = 0;
  std::vector<LayoutPartition> partitions;
  bool operator==(const PlanLayout&) const = default;
};

/// A GPT disk copied onto a bigger one (or grown): its backup GPT lies where the smaller disk
/// ended. The table-only step that moves it to the disk's last sector and lets the usable area
/// reach the new end (as parted's "Fix" and sgdisk -e do); the partitions keep their place.
/// Sectors are logical sectors of the disk.
struct BackupGptRelocation {
  uint64_t from_lba = 0;  ///< where the backup header is now
  uint64_t to_lba = 0;    ///< the disk's last sector
  uint64_t old_last_usable_lba = 0;
  uint64_t new_last_usable_lba = 0;  ///< the last sector before the backup entries at the end
  bool operator==(const BackupGptRelocation&) const = default;
};

struct Plan {
  DiskIdentity disk;
  Topology topology;
  LabelType label = LabelType::kNone;
  /// PartitionTable::fingerprint of the table the plan was made from.
  std::string table_fingerprint;
  Alignment alignment;
  std::vector<PlanAction> actions;
  /// `plan --layout`: the fresh table to create (optional key "layout" in the plan file;
  /// absent in plans for an existing table).
  std::optional<PlanLayout> layout;
  /// The backup GPT to move to the end of the disk (optional key "relocate_backup_gpt"; absent
  /// when the backup is where it belongs).
  std::optional<BackupGptRelocation> relocate_backup_gpt;
  /// `plan --at-next-boot`: the partitions the running system uses were planned like the
  /// others, to be moved by `apply --at-next-boot` before anything mounts them (optional key
  /// "at_next_boot" in the plan file, true; absent otherwise).
  bool at_next_boot = false;
  bool operator==(const Plan&) const = default;
};

/// The plan file document.
nlohmann::json PlanToJson(const Plan& plan);

/// Parses a plan file. Rejects wrong format names and versions, missing or mistyped keys,
/// unknown action kinds, inconsistent actions and inconsistent layouts (overlapping or
/// unordered partitions, a layout together with actions); the error names the key
/// ("actions[1].new_start_sector: missing").
Result<Plan> PlanFromJson(std::string_view text);

}  // namespace partalign
