// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/migrate/verify_target.h"

#include <algorithm>

#include "io/migrate/snapshot_capture.h"
#include "io/migrate/snapshot_file.h"
#include "io/table/fdisk_table.h"
#include "io/tools/tool_versions.h"
#include "partalign/table/table_translation.h"

namespace partalign {
namespace {

// What `partalign translate` would say about the table of `target` now: its refusals, read as
// translate reads the table (with the sector size it is written for, each partition's
// contents probed). Nothing when the table is written for the disk's sector size.
Result<TranslateOutlook> OutlookOf(const std::string& target, const Snapshot& now) {
  TranslateOutlook outlook;
  const uint64_t lss = now.topology.logical_sector_size;
  if (!now.table_written_for || *now.table_written_for == lss ||
      (now.table.label != LabelType::kGpt && now.table.label != LabelType::kDos)) {
    return outlook;
  }
  Result<TableRead> table =
      ReadPartitionTable(target, {.sector_size = *now.table_written_for, .probe_contents = true});
  if (!table) return table.error();
  TableTranslation plan = PlanTranslation(table->table, now.topology.size_bytes, lss);
  outlook.refusals = plan.refusals;
  outlook.acceptable = plan.acceptable;
  if (!plan.ok() && !plan.acceptable.empty()) {
    // Planned again with every acceptable partition accepted: nothing else refused?
    outlook.only_acceptable =
        PlanTranslation(table->table, now.topology.size_bytes, lss, plan.acceptable).ok();
  }
  return outlook;
}

}  // namespace

Result<VerifyOutcome> VerifyTarget(const std::string& target, const ProbeOptions& options,
                                   const std::string& snapshot_path) {
  Result<Snapshot> before = ReadSnapshotFile(snapshot_path);
  if (!before) return before.error();
  const ToolVersions versions = DetectToolVersions();
  Result<Snapshot> now = CaptureSnapshot(target, options, versions);
  if (!now) return now.error();
  // What is now where the snapshot's partitions were, whatever the table says today.
  Result<std::vector<ContentDigest>> heads = DigestPlaces(target, before->digests);
  if (!heads) return heads.error();
  Result<TranslateOutlook> outlook = OutlookOf(target, *now);
  if (!outlook) return outlook.error();
  VerifyReport report = CompareSnapshots(*before, *now, *heads, versions, *outlook);
  return VerifyOutcome{std::move(*before), std::move(report)};
}

}  // namespace partalign
