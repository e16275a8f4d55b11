// SPDX-License-Identifier: GPL-3.0-or-later
// Which logical sector size a partition table was written for, from the disk: the GPT header's
// position (probe's guess, partalign/table/table_sector_size.h) and, for a DOS table whose
// entries fit the disk at several sizes, where its partitions' filesystems are found. Used by
// snapshot, verify and translate (docs/migration.md).
#pragma once

#include <string>

#include "partalign/table/table_sector_size.h"
#include "partalign/topology/device.h"
#include "partalign/util/result.h"

namespace partalign {

/// `device` is what ProbeTarget returned for `path`. Never writes.
Result<TableSectorSizeGuess> DetectTableSectorSize(const std::string& path,
                                                   const DeviceInfo& device);

}  // namespace partalign
