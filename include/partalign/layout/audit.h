// SPDX-License-Identifier: GPL-3.0-or-later
// partalign audit: for every partition, each alignment criterion met or not with its
// arithmetic, what parted, fdisk and gdisk would say about it (docs/audit-plan.md), and the
// storage stack inside it, layer by layer (docs/stack.md).
// Computing (AuditTable) is separate from rendering (AuditJson, AuditRows, AuditDetails).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "partalign/layout/partition_table.h"
#include "partalign/stack/stack_layer.h"
#include "partalign/tools/tool_version.h"
#include "partalign/topology/alignment.h"
#include "partalign/topology/device.h"
#include "partalign/topology/topology.h"
#include "partalign/topology/topology_check.h"

namespace partalign {

/// The criteria, in report order. Their JSON keys are stable (docs/output.md).
enum class Criterion {
  kGrain,                ///< start on the grain (1 MiB or --grain), shifted by the alignment offset
  kPhysicalSector,       ///< (start - alignment offset) on a physical sector
  kMinimumIo,            ///< (start - alignment offset) on the minimum I/O size
  kOptimalIo,            ///< ... on the optimal I/O size, when IsSaneOptimalIo
  kFilesystemBlock,      ///< ... on the filesystem's block size, when libblkid reports one
  kEndAligned,           ///< end + 1 on the plan's alignment: the next aligned start follows
  kPartedAlignCheckOpt,  ///< `parted align-check opt` says "aligned"
  kFdiskPhysicalBoundary,  ///< `fdisk -l` prints no physical-boundary warning
  kGdiskVerifyStart,       ///< `sgdisk -v` has no caution about the start
  kGdiskVerifyEnd,         ///< `sgdisk -v` has no caution about the end
  kKpmcoreIsAligned,       ///< KPMcore (Calamares) logs no "not properly aligned" when scanning
};

inline constexpr Criterion kAllCriteria[] = {
    Criterion::kGrain,
    Criterion::kPhysicalSector,
    Criterion::kMinimumIo,
    Criterion::kOptimalIo,
    Criterion::kFilesystemBlock,
    Criterion::kEndAligned,
    Criterion::kPartedAlignCheckOpt,
    Criterion::kFdiskPhysicalBoundary,
    Criterion::kGdiskVerifyStart,
    Criterion::kGdiskVerifyEnd,
    Criterion::kKpmcoreIsAligned,
};

/// The JSON key ("grain", "physical_sector", ..., "gdisk_verify_end", "kpmcore_is_aligned").
std::string_view CriterionKey(Criterion criterion);

/// True for the criteria that decide `aligned`: grain, physical sector, minimum I/O and
/// optimal I/O (when sane). Together they are exactly the alignment `plan` moves starts to.
/// The others are informational: the filesystem block is implied by the grain for every
/// common block size, ends only matter to the next start, and each tool checks one rule of
/// its own.
bool IsRequired(Criterion criterion);

struct CheckResult {
  Criterion criterion = Criterion::kGrain;
  /// False when the criterion does not apply (no minimum I/O, an optimal I/O that is not
  /// sane, no filesystem block size); `ok` is then meaningless.
  bool applicable = true;
  bool ok = true;
  /// The numbers: "start 63 x 512 = 32256 bytes, 32256 % 1048576 = 32256", or the tool's
  /// message ("1 not aligned: 63s % 65535s != 0s"); for an inapplicable check, why.
  std::string detail;
};

struct PartitionAudit {
  uint32_t number = 0;
  PartitionKind kind = PartitionKind::kPrimary;
  uint64_t start_sector = 0;
  uint64_t end_sector = 0;
  uint64_t size_bytes = 0;
  PartitionContents contents;
  std::vector<CheckResult> checks;  ///< one per kAllCriteria entry, in that order
  /// What lies inside (LUKS, LVM2, MD, a filesystem), checked (docs/stack.md).
  StackWalk stack;
  /// Every applicable required check is ok and every layer of the stack is aligned.
  bool aligned = true;

  const CheckResult& Check(Criterion criterion) const;
};

struct AuditOptions {
  /// --grain; nullopt means 1 MiB.
  std::optional<uint64_t> grain_bytes;
  /// The stacks read inside the partitions, by partition number (unchecked: AuditTable checks
  /// them). A partition without an entry has an empty stack.
  std::map<uint32_t, StackWalk> stacks;
  /// The stack of a disk without a partition table (a whole-disk PV, LUKS, MD member or
  /// filesystem); ignored when the table has a label.
  std::optional<StackWalk> whole_disk;
  /// The lvm2 whose pvcreate a PV's pe_start is compared with.
  std::optional<ToolVersion> lvm2_version;
};

struct AuditReport {
  Topology topology;
  LabelType label = LabelType::kNone;
  uint64_t sector_size = 512;
  uint64_t grain_bytes = 0;  ///< the grain of the `grain` criterion (1 MiB or --grain)
  /// The alignment plan uses: the grain raised to the topology's requirements, with the
  /// offset; `end_aligned` uses it too.
  AlignmentRecommendation alignment;
  /// sgdisk -v's testAlignment for this table.
  uint64_t gdisk_test_alignment_sectors = 0;
  /// Data partitions (primary and logical) in table order. A DOS extended partition is a
  /// container for the EBR chain and holds no data: it is not audited.
  std::vector<PartitionAudit> partitions;
  /// A disk without a partition table that holds a stack (docs/stack.md), checked.
  std::optional<StackWalk> whole_disk;
  /// What the validation gate found in the table (PartitionTable::findings): audit reads a
  /// read-only table (one damaged GPT copy, a hybrid MBR) and says so.
  std::vector<TableFinding> table_findings;

  size_t misaligned_count() const;
  /// Every partition and the whole-disk stack are aligned.
  bool all_aligned() const;
};

/// Audits every data partition of `table` on `topology` (the topology table.sector_size must
/// equal topology.logical_sector_size; the caller reads the table with that size).
AuditReport AuditTable(const PartitionTable& table, const Topology& topology,
                       const AuditOptions& options = {});

/// "3 of 4 partitions are misaligned (1, 2, 5); required: grain 1 MiB, physical sector 4096
/// bytes, minimum I/O 4096 bytes" or "All 4 partitions are aligned (...)".
std::string AuditSummary(const AuditReport& report);

/// The whole `audit --json` document.
nlohmann::json AuditJson(const AuditReport& report, const DeviceInfo& device,
                         const std::vector<TopologyFinding>& findings,
                         const std::string& table_fingerprint);

/// Column headings and one row per partition for the human table: "yes", "no" or "-" per
/// criterion.
std::vector<std::string> AuditColumns();
std::vector<std::vector<std::string>> AuditRows(const AuditReport& report);

/// For each misaligned partition (and each failing informational check of the others), the
/// lines explaining it: "partition 1: grain 1 MiB: start 63 x 512 = 32256 bytes, ...", then
/// each non-empty stack as an indented tree.
std::vector<std::string> AuditDetails(const AuditReport& report);

}  // namespace partalign
