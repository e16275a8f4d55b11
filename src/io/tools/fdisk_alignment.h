// SPDX-License-Identifier: GPL-3.0-or-later
// libfdisk, asked live through a read-only context: the version linked into partalign, the
// device properties and alignment it computes for a device or image, the first usable LBA and
// default first partition of fresh GPT and DOS labels created in memory (never written: the
// device is opened O_RDONLY and fdisk_write_disklabel is never called), and the partition
// starts of an existing table. The only file that includes <libfdisk.h>.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partalign/tools/explain_report.h"
#include "partalign/util/result.h"

namespace partalign {

/// Fills the libfdisk fields of `live` (version, device properties, grain, first LBA, and the
/// first usable LBA and default first partition of fresh in-memory GPT and DOS labels), or
/// fdisk_error.
void QueryFdiskAlignment(const std::string& path, LiveAlignment* live);

/// Starts (in logical sectors as libfdisk reads them) of the partitions of an existing GPT on
/// `path`; empty when there is no GPT.
Result<std::vector<uint64_t>> ReadGptPartitionStarts(const std::string& path);

}  // namespace partalign
