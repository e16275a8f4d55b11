// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/verify_target.h"

#include "io/migrate/snapshot_capture.h"
#include "io/migrate/snapshot_file.h"
#include "io/tools/tool_versions.h"

namespace partalign {

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
  VerifyReport report = CompareSnapshots(*before, *now, *heads, versions);
  return VerifyOutcome{std::move(*before), std::move(report)};
}

}  // namespace partalign
