// SPDX-License-Identifier: GPL-3.0-or-later
// Snapshot files on disk: written durably (src/io/util/durable_file.h), read back as untrusted
// input (the safe file reader, then the strict parser of partalign/migrate/snapshot.h).
#pragma once

#include <string>

#include "partalign/migrate/snapshot.h"
#include "partalign/util/result.h"

namespace partalign {

/// Where snapshots go unless -o says otherwise.
inline constexpr const char* kDefaultSnapshotDir = "/var/lib/partalign/snapshots";

/// Writes `snapshot` to `path` (replacing a file of that name: -o), or, when `path` is empty,
/// into kDefaultSnapshotDir under `default_name` (never replacing one). Returns the path.
Result<std::string> WriteSnapshotFile(const std::string& path, const std::string& default_name,
                                      const Snapshot& snapshot);

/// Reads and parses a snapshot file; errors name the file.
Result<Snapshot> ReadSnapshotFile(const std::string& path);

}  // namespace partalign
