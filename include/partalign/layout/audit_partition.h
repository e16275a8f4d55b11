// SPDX-License-Identifier: GPL-3.0-or-later
// `audit /dev/sda5`: one partition audited in its disk's table (partition_node.h).
#pragma once

#include <cstdint>

#include "partalign/layout/audit.h"

namespace partalign {

/// Keeps only the data partition that starts at byte `start_bytes`. False, leaving `report` as
/// it was, when no data partition starts there (a DOS extended partition is not audited).
bool KeepOnlyPartitionAt(AuditReport* report, uint64_t start_bytes);

}  // namespace partalign
