// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/table/table_write_marker.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "io/table/backup_file.h"
#include "io/util/durable_file.h"
#include "io/util/state_dir.h"
#include "io/util/text_file.h"
#include "io/util/unique_fd.h"

namespace partalign {
namespace {

constexpr const char* kMarkerSuffix = ".table-write";
// A marker holds one absolute path: anything longer is not one.
constexpr size_t kMaxMarkerBytes = 4096;

}  // namespace

std::string TableWriteMarkerDir() { return StateDir() + "/table-writes"; }

Result<std::string> MarkTableWrite(const std::string& backup_path) {
  const std::string name = std::filesystem::path(backup_path).filename().string() + kMarkerSuffix;
  return WriteFileDurably(
      TableWriteMarkerDir(), name, backup_path + "\n",
      {.file_mode = 0600, .dir_mode = 0700, .replace = true, .what = "table write marker"});
}

Status UnmarkTableWrite(const std::string& marker_path) { return RemoveFileDurably(marker_path); }

std::vector<MarkedTableWrite> FindMarkedTableWrites(const BackupDevice& now) {
  std::vector<MarkedTableWrite> out;
  std::error_code ec;
  std::vector<std::pair<std::filesystem::file_time_type, std::string>> markers;
  for (const auto& entry : std::filesystem::directory_iterator(TableWriteMarkerDir(), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > std::string(kMarkerSuffix).size() && name.ends_with(kMarkerSuffix) &&
        name.front() != '.') {
      std::error_code time_ec;
      markers.emplace_back(entry.last_write_time(time_ec), entry.path().string());
    }
  }
  // Oldest first (marked in that order); the name after that, for markers of one instant.
  std::sort(markers.begin(), markers.end());
  for (const auto& [time, marker] : markers) {
    Result<std::string> text = ReadWholeFile(marker, "table write marker", kMaxMarkerBytes);
    if (!text || text->empty() || text->back() != '\n') continue;
    const std::string backup_path = text->substr(0, text->size() - 1);
    if (backup_path.empty() || backup_path.front() != '/' ||
        backup_path.find('\n') != std::string::npos) {
      continue;
    }
    Result<TableBackup> backup = ReadBackupFile(backup_path);
    if (!backup) continue;
    if (!IsBackupOf(*backup, now)) continue;
    out.push_back({marker, backup_path, std::move(*backup)});
  }
  return out;
}

}  // namespace partalign
