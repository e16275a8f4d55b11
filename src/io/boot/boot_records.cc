// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/boot/boot_records.h"

#include <sys/stat.h>

#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "io/boot/hive_values.h"
#include "io/boot/ntfs_file.h"
#include "io/device/target.h"
#include "io/label/table_gate.h"
#include "partalign/boot/volume_boot_sector.h"
#include "partalign/util/checked_math.h"

namespace partalign {
namespace {

// A store from a hive file read in an NTFS partition: its base block, where its bytes are,
// and the values that name partitions.
WindowsStore StoreFromFile(uint32_t partition, std::string file_path, BootRecordKind kind,
                           NtfsFile file) {
  WindowsStore store;
  store.partition = partition;
  store.file_path = std::move(file_path);
  store.kind = kind;
  store.file_size = file.data.size();
  store.unlocatable = std::move(file.unlocatable);
  store.extents = std::move(file.extents);
  std::optional<HiveBaseBlock> base = ParseHiveBaseBlock(file.data);
  if (!base) {
    if (store.unlocatable.empty()) store.unlocatable = "not a registry hive";
    return store;
  }
  store.base = *base;
  Result<std::vector<HiveValue>> values = kind == BootRecordKind::kWindowsBcd
                                              ? ReadBcdDeviceElements(file.data)
                                              : ReadMountedDevices(file.data);
  if (!values) {
    if (store.unlocatable.empty()) store.unlocatable = values.error().message;
    return store;
  }
  store.values = std::move(*values);
  return store;
}

std::string WindowsPath(std::string path) {
  for (char& c : path) {
    if (c == '/') c = '\\';
  }
  return path;
}

}  // namespace

Result<std::vector<WindowsStore>> FindWindowsStores(int fd, const std::string& path,
                                                    uint64_t size_bytes, const BootDisk& table) {
  FdDiskReader disk(fd, path, size_bytes);
  std::vector<WindowsStore> stores;
  for (const BootPartition& p : table.partitions) {
    if (p.extended || p.size_sectors == 0) continue;
    std::optional<uint64_t> base = CheckedMul(p.start_sector, table.sector_size);
    std::optional<uint64_t> size = CheckedMul(p.size_sectors, table.sector_size);
    if (!base || !size || !CheckedAdd(*base, *size) || *base + *size > size_bytes) continue;
    std::vector<uint8_t> first(512);
    if (!disk.ReadAt(*base, first) || !ParseNtfsBootSector(first)) continue;
    const std::vector<std::string> paths = {kBcdPaths[0], kBcdPaths[1], kSystemHivePath};
    Result<std::vector<std::optional<NtfsFile>>> files =
        ReadNtfsFiles(fd, *base, *size, paths, fmt::format("'{}' partition {}", path, p.number));
    if (!files) {
      // An NTFS volume libntfs-3g cannot open (damaged, or left hibernated): its stores cannot
      // be read, which matters only if something in it must change - say so as a store.
      WindowsStore unknown;
      unknown.partition = p.number;
      unknown.file_path = "(its NTFS volume)";
      unknown.unlocatable = files.error().message;
      stores.push_back(std::move(unknown));
      continue;
    }
    for (size_t i = 0; i < paths.size(); ++i) {
      if (!(*files)[i]) continue;
      const BootRecordKind kind =
          i < 2 ? BootRecordKind::kWindowsBcd : BootRecordKind::kMountedDevices;
      stores.push_back(
          StoreFromFile(p.number, WindowsPath(paths[i]), kind, std::move(*(*files)[i])));
    }
  }
  return stores;
}

Result<BootReport> ScanBootRecords(int fd, const std::string& path, uint64_t size_bytes,
                                   const BootDisk& table, std::span<const PartitionMove> moves,
                                   const BootScanOptions& options) {
  FdDiskReader disk(fd, path, size_bytes);
  BootScanOptions scan = options;
  if (struct stat st{}; ::fstat(fd, &st) == 0 && S_ISBLK(st.st_mode)) scan.disk_device = path;
  Result<BootReport> report = FindBootRecords(disk, table, moves, scan);
  if (!report) return report.error();
  Result<std::vector<WindowsStore>> stores = FindWindowsStores(fd, path, size_bytes, table);
  if (!stores) return stores.error();
  for (BootFinding& f : WindowsStoreFindings(disk, table, moves, *stores)) {
    report->findings.push_back(std::move(f));
  }
  return report;
}

Result<EditState> ReadEditState(int fd, const std::string& path, const ByteEdit& edit,
                                uint64_t partition_start_bytes) {
  std::optional<uint64_t> at = AbsoluteOffset(edit, partition_start_bytes);
  if (!at) return MakeError(fmt::format("'{}': an edit past 2^64 bytes", path));
  std::vector<uint8_t> now(edit.old_bytes.size());
  Result<size_t> got = ReadAt(fd, now.data(), now.size(), *at, path);
  if (!got) return got.error();
  if (*got != now.size()) {
    return MakeError(fmt::format("'{}': an edit at byte {} lies past its end", path, *at));
  }
  if (now == edit.old_bytes) return EditState::kOld;
  if (now == edit.new_bytes) return EditState::kNew;
  return EditState::kNeither;
}

Status WriteByteEdits(int fd, const std::string& path, std::span<const ByteEdit> edits,
                      const std::map<uint32_t, uint64_t>& partition_starts) {
  std::vector<std::pair<const ByteEdit*, uint64_t>> pending;
  for (const ByteEdit& e : edits) {
    if (e.old_bytes.size() != e.new_bytes.size() || e.new_bytes.empty()) {
      return MakeError(
          fmt::format("'{}': an edit of partition {} at byte {} has {} old and {} "
                      "new bytes",
                      path, e.partition, e.offset_bytes, e.old_bytes.size(), e.new_bytes.size()));
    }
    uint64_t start = 0;
    if (e.partition != 0) {
      auto it = partition_starts.find(e.partition);
      if (it == partition_starts.end()) {
        return MakeError(fmt::format("'{}': no place given for partition {}", path, e.partition));
      }
      start = it->second;
    }
    Result<EditState> state = ReadEditState(fd, path, e, start);
    if (!state) return state.error();
    if (*state == EditState::kNeither) {
      return MakeError(
          fmt::format("'{}': partition {} byte {}: the bytes there are neither the "
                      "record's old nor its new ones; nothing written",
                      path, e.partition, e.offset_bytes));
    }
    if (*state == EditState::kOld) pending.emplace_back(&e, *AbsoluteOffset(e, start));
  }
  for (const auto& [e, at] : pending) {
    size_t done = 0;
    while (done < e->new_bytes.size()) {
      const ssize_t n = pwrite(fd, e->new_bytes.data() + done, e->new_bytes.size() - done,
                               static_cast<off_t>(at + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return ErrnoError(errno, fmt::format("'{}': writing byte {}", path, at + done));
      done += static_cast<size_t>(n);
    }
  }
  if (!pending.empty() && fdatasync(fd) != 0) {
    return ErrnoError(errno, fmt::format("'{}': fdatasync", path));
  }
  return {};
}

}  // namespace partalign
