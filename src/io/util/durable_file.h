// SPDX-License-Identifier: GPL-3.0-or-later
// Files partalign writes that must survive a crash the moment the call returns (table backups,
// snapshots): written to a temporary name, fsynced, renamed into place and the directory
// fsynced, so that the file is either absent or complete, never half-written.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "partalign/util/result.h"

namespace partalign {

struct DurableFileOptions {
  /// Mode of the file, and of the directories created for it (plus the x bits).
  mode_t file_mode = 0600;
  mode_t dir_mode = 0700;
  /// Replace an existing file of that name; false refuses (RENAME_NOREPLACE, EEXIST).
  bool replace = false;
  /// What the file is, for errors ("backup", "snapshot").
  std::string_view what = "file";
};

/// Writes `text` as `dir`/`file_name` (creating `dir` if missing) so that it is on stable
/// storage when this returns. Returns the path.
Result<std::string> WriteFileDurably(const std::string& dir, const std::string& file_name,
                                     const std::string& text, const DurableFileOptions& options);

/// Removes `path` so that it stays removed: unlinked (a file already gone is no error), then
/// its directory fsynced when it can be opened.
Status RemoveFileDurably(const std::string& path);

}  // namespace partalign
