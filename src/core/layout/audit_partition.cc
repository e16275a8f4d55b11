// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/layout/audit_partition.h"

#include <algorithm>

namespace partalign {

bool KeepOnlyPartitionAt(AuditReport* report, uint64_t start_bytes) {
  auto it = std::find_if(
      report->partitions.begin(), report->partitions.end(),
      [&](const PartitionAudit& p) { return p.start_sector * report->sector_size == start_bytes; });
  if (it == report->partitions.end()) return false;
  PartitionAudit kept = std::move(*it);
  report->partitions.clear();
  report->partitions.push_back(std::move(kept));
  report->whole_disk.reset();
  return true;
}

}  // namespace partalign
