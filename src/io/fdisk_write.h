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

#include "partalign/result.h"

namespace partalign {

struct WriteScriptOptions {
  /// Logical sector size to write with (image files: 512 unless set).
  std::optional<uint64_t> sector_size;
};

/// Replaces the partition table of `path` with the one `script` describes and writes it.
/// Returns what libfdisk reported while doing so (informational lines).
Result<std::vector<std::string>> WriteSfdiskScript(const std::string& path, std::string_view script,
                                                   const WriteScriptOptions& options = {});

/// The table of `path` as an sfdisk script (what `sfdisk --dump` prints).
Result<std::string> DumpSfdiskScript(const std::string& path,
                                     const WriteScriptOptions& options = {});

}  // namespace partalign
