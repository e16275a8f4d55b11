// SPDX-License-Identifier: GPL-3.0-or-later
// Writing a partition table through libfdisk from an sfdisk script (the `sfdisk --dump` text
// format: "label: gpt", "first-lba: 34", "start=2048, size=..., type=..., name=..."), exactly
// as sfdisk would apply it. Used to build the demo image, by tests, and by apply on a scratch
// copy of the table. Does not tell the kernel (apply does that through BLKPG).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "partalign/util/result.h"

namespace partalign {

struct WriteScriptOptions {
  /// Logical sector size to write with (image files: 512 unless set).
  std::optional<uint64_t> sector_size;
};

/// A partition's new place, for DumpSfdiskScript.
struct ScriptEdit {
  uint32_t partition = 0;  ///< 1-based, as sfdisk numbers partitions
  uint64_t start_sector = 0;
  uint64_t size_sectors = 0;
};

/// Replaces the partition table of `path` with the one `script` describes and writes it.
/// Boot code in the first sector (the 440 bytes before the disk signature) is kept, as sfdisk
/// keeps it unless told to wipe. Returns what libfdisk reported while doing so.
Result<std::vector<std::string>> WriteSfdiskScript(const std::string& path, std::string_view script,
                                                   const WriteScriptOptions& options = {});

/// A header line of an sfdisk script ("first-lba: 2048") to set, or to remove (no value).
struct ScriptHeader {
  std::string name;
  std::optional<std::string> value;
};

/// The table of `path` as an sfdisk script (what `sfdisk --dump` prints), with the partitions
/// in `edits` given their new start and size and the `headers` set or removed; everything else
/// (type, UUID, name, attributes, boot flag, label-id, first-lba, last-lba, table-length)
/// stays as it is. An edit of a partition that is not in the table is an error.
Result<std::string> DumpSfdiskScript(const std::string& path,
                                     const WriteScriptOptions& options = {},
                                     const std::vector<ScriptEdit>& edits = {},
                                     const std::vector<ScriptHeader>& headers = {});

}  // namespace partalign
