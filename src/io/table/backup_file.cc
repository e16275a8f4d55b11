// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/table/backup_file.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/device/blkid_probe.h"
#include "io/table/fdisk_table.h"
#include "io/table/fdisk_transition.h"
#include "io/table/table_writer.h"
#include "io/util/durable_file.h"
#include "io/util/state_dir.h"
#include "io/util/text_file.h"
#include "io/util/unique_fd.h"
#include "io/util/xxhash_digest.h"

namespace partalign {

std::string DefaultBackupDir() { return StateDir() + "/backups"; }
namespace {

// Backups hold raw table sectors and device identities: readable by root only.
constexpr mode_t kBackupDirMode = 0700;
constexpr mode_t kBackupFileMode = 0600;

}  // namespace

Status MakeBackupDirectory(const std::string& dir) {
  std::error_code ec;
  std::filesystem::path p(dir);
  std::filesystem::path so_far;
  for (const std::filesystem::path& part : p) {
    so_far /= part;
    if (std::filesystem::is_directory(so_far, ec)) continue;
    if (::mkdir(so_far.c_str(), kBackupDirMode) != 0 && errno != EEXIST) {
      return ErrnoError(errno,
                        fmt::format("cannot create the backup directory '{}'", so_far.string()));
    }
  }
  if (!std::filesystem::is_directory(dir, ec)) {
    return MakeError(fmt::format("backup directory '{}' is not a directory", dir));
  }
  return {};
}

void HashBackupRanges(const TableTransition& transition, TableBackup* backup) {
  const bool paired = transition.ranges.size() == backup->ranges.size();
  for (size_t i = 0; i < backup->ranges.size(); ++i) {
    BackupRange& r = backup->ranges[i];
    r.xxh64 = Xxh64Hex(r.bytes.data(), r.bytes.size());
    if (paired && transition.ranges[i].offset_bytes == r.offset_bytes) {
      const std::vector<uint8_t>& applied = transition.ranges[i].new_bytes;
      r.applied_xxh64 = Xxh64Hex(applied.data(), applied.size());
    }
  }
}

Result<std::string> WriteBackupFile(const std::string& dir, const std::string& file_name,
                                    const TableBackup& backup) {
  // A backup is never overwritten, not even by another backup.
  return WriteFileDurably(dir, file_name, BackupToJson(backup).dump(1) + "\n",
                          {.file_mode = kBackupFileMode,
                           .dir_mode = kBackupDirMode,
                           .replace = false,
                           .what = "backup"});
}

Result<PartitionTable> ReadSavedTable(const TableBackup& backup) {
  Result<UniqueFd> scratch = CreateScratchDisk(backup.device.disk.size_bytes);
  if (!scratch) return scratch.error();
  for (const BackupRange& r : backup.ranges) {
    TableRange copy{r.role, r.offset_bytes, r.length_bytes, {}, {}, {}, r.bytes};
    if (Status s = WriteTableRanges(scratch->get(), "scratch copy", backup.sector_size, {copy});
        !s) {
      return s.error();
    }
  }
  const std::string scratch_path = fmt::format("/proc/self/fd/{}", scratch->get());
  Result<TableRead> read = ReadPartitionTable(
      scratch_path, {.sector_size = backup.saved_table_sector_size(), .probe_contents = false});
  if (!read) {
    // The scratch copy's name means nothing to the user: name the backup's table instead.
    std::string why = read.error().message;
    if (why.rfind("'" + scratch_path + "': ", 0) == 0) why = why.substr(scratch_path.size() + 4);
    return MakeError(fmt::format("the table its ranges hold is unreadable: {}", why));
  }
  if (read->table.label != backup.label) {
    return MakeError(fmt::format("its ranges hold a {} table, not the {} table it names",
                                 ToString(read->table.label), ToString(backup.label)));
  }
  if (read->table.fingerprint != backup.table_fingerprint) {
    return MakeError(
        fmt::format("the table its ranges hold has fingerprint {}, not the {} it "
                    "names (a range is missing or not where it was saved from)",
                    read->table.fingerprint, backup.table_fingerprint));
  }
  return std::move(read->table);
}

Result<std::vector<std::vector<uint8_t>>> ReadBackupRangesNow(int fd, const std::string& path,
                                                              const TableBackup& backup) {
  std::vector<std::vector<uint8_t>> current;
  for (const BackupRange& r : backup.ranges) {
    Result<std::vector<uint8_t>> bytes = ReadExactly(fd, path, r.offset_bytes, r.length_bytes);
    if (!bytes) return bytes.error();
    current.push_back(std::move(*bytes));
  }
  return current;
}

std::vector<std::string> HashContext(int fd, const std::string& path,
                                     const std::vector<BackupContext>& context) {
  std::vector<std::string> out;
  for (const BackupContext& c : context) {
    Result<std::vector<uint8_t>> bytes = ReadExactly(fd, path, c.offset_bytes, c.length_bytes);
    out.push_back(bytes ? Xxh64Hex(bytes->data(), bytes->size()) : std::string());
  }
  return out;
}

std::vector<PartitionSeen> LookAtPartitions(int fd, const std::string& path,
                                            const std::vector<BackupPartition>& places) {
  std::vector<PartitionSeen> out;
  for (const BackupPartition& p : places) {
    PartitionSeen seen;
    if (Result<PartitionContents> contents =
            ProbePartitionContents(fd, path, p.offset_bytes, p.length_bytes)) {
      seen.fs_type = contents->fs_type;
      seen.fs_uuid = contents->fs_uuid;
      seen.fs_label = contents->fs_label;
    }
    Result<std::vector<uint8_t>> head = ReadExactly(fd, path, p.offset_bytes, p.head_bytes);
    if (head && std::any_of(head->begin(), head->end(), [](uint8_t b) { return b != 0; })) {
      seen.head_xxh64 = Xxh64Hex(head->data(), head->size());
    }
    out.push_back(std::move(seen));
  }
  return out;
}

Result<TableBackup> ReadBackupFile(const std::string& path) {
  Result<std::string> text = ReadWholeFile(path, "backup");
  if (!text) return text.error();
  Result<TableBackup> backup = BackupFromJson(*text);
  if (!backup) {
    return MakeError(fmt::format("backup '{}': {}", path, backup.error().message));
  }
  for (size_t i = 0; i < backup->ranges.size(); ++i) {
    const BackupRange& r = backup->ranges[i];
    if (Xxh64Hex(r.bytes.data(), r.bytes.size()) != r.xxh64) {
      return MakeError(fmt::format(
          "backup '{}': ranges[{}]: the saved bytes do not match their xxh64 (corrupt file)", path,
          i));
    }
  }
  return backup;
}

bool IsBackupOf(const TableBackup& backup, const BackupDevice& now) {
  if (!BackupDeviceMismatches(backup.device, now).empty()) return false;
  // A loop device is its backing file: another one, or none (the image itself), is not it.
  if (!backup.device.backing_file.empty() && backup.device.backing_file != now.backing_file) {
    return false;
  }
  const DiskIdentity& d = backup.device.disk;
  return !d.serial.empty() || !d.wwn.empty() || !backup.device.backing_file.empty() ||
         d.path == now.disk.path;
}

std::vector<TableBackup> FindDiskBackups(const std::string& dir, const BackupDevice& now) {
  std::vector<TableBackup> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file(ec) || name.size() <= kBackupSuffix.size() ||
        name.compare(name.size() - kBackupSuffix.size(), kBackupSuffix.size(), kBackupSuffix) !=
            0) {
      continue;
    }
    Result<TableBackup> backup = ReadBackupFile(entry.path().string());
    if (backup && IsBackupOf(*backup, now)) out.push_back(std::move(*backup));
  }
  return out;
}

}  // namespace partalign
