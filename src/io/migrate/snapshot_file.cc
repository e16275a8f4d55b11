// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/migrate/snapshot_file.h"

#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/util/durable_file.h"
#include "io/util/text_file.h"

namespace partalign {

Result<std::string> WriteSnapshotFile(const std::string& path, const std::string& default_name,
                                      const Snapshot& snapshot) {
  const std::string text = SnapshotToJson(snapshot).dump(1) + "\n";
  // A snapshot names the disk's serial and layout: readable by root only, like backups.
  DurableFileOptions options{.file_mode = 0600, .dir_mode = 0700, .what = "snapshot"};
  if (path.empty()) return WriteFileDurably(kDefaultSnapshotDir, default_name, text, options);
  std::filesystem::path p(path);
  if (p.filename().empty()) {
    return MakeError(fmt::format("-o '{}': not a file name", path));
  }
  options.replace = true;
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  return WriteFileDurably(dir, p.filename().string(), text, options);
}

Result<Snapshot> ReadSnapshotFile(const std::string& path) {
  Result<std::string> text = ReadWholeFile(path, "snapshot");
  if (!text) return text.error();
  Result<Snapshot> snapshot = SnapshotFromJson(*text);
  if (!snapshot) {
    return MakeError(fmt::format("snapshot '{}': {}", path, snapshot.error().message));
  }
  return snapshot;
}

}  // namespace partalign
