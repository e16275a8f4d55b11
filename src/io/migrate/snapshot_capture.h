// SPDX-License-Identifier: GPL-3.0-or-later
// Capturing a Snapshot (partalign/migrate/snapshot.h) of a disk or image: probe (topology,
// identity), the partition table read with the sector size it was written for, what libblkid
// finds in each partition and a digest of its first 64 KiB, the audit on the disk's topology
// and each partitioner's prediction. `snapshot` writes it to a file, `verify` captures the disk
// again and compares. Never writes to the disk.
#pragma once

#include <string>
#include <vector>

#include "io/device/device_probe.h"
#include "partalign/migrate/snapshot.h"
#include "partalign/tools/tool_version.h"
#include "partalign/util/result.h"

namespace partalign {

/// Everything but `created` and `partalign_version` (the caller's clock and build).
Result<Snapshot> CaptureSnapshot(const std::string& path, const ProbeOptions& options,
                                 const ToolVersions& versions);

/// The digest of the bytes of `path` at each place of `where` (offset and length), as
/// CaptureSnapshot computes a partition's; a place past the end of the disk is left out.
Result<std::vector<ContentDigest>> DigestPlaces(const std::string& path,
                                                const std::vector<ContentDigest>& where);

}  // namespace partalign
