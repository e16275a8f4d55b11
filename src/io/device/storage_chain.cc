// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/device/storage_chain.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "io/device/mount_table.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;

/// Stacks deeper than this (loop on a file on a loop on ...) are not followed further; nobody
/// builds them, and a cycle must not hang the check.
constexpr int kMaxDepth = 16;

/// File systems whose contents are gone after a power failure.
const std::set<std::string> kVolatileTypes{"tmpfs", "ramfs", "devtmpfs", "hugetlbfs"};
/// File systems stored on another machine (or the VM host): libmount's list of network file
/// systems (mnt_fstype_is_netfs in util-linux libmount/src/utils.c) plus the VM host's.
const std::set<std::string> kRemoteTypes{"cifs", "smb3", "smbfs",     "nfs",    "nfs4", "ncpfs",
                                         "afs",  "ceph", "glusterfs", "lustre", "9p",   "virtiofs"};

std::string ReadLine(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

bool ParseDevNumber(const std::string& text, uint32_t* major_out, uint32_t* minor_out) {
  unsigned a = 0, b = 0;
  if (std::sscanf(text.c_str(), "%u:%u", &a, &b) != 2) return false;
  *major_out = a;
  *minor_out = b;
  return true;
}

class StorageWalk {
 public:
  StorageWalk(std::string sysfs_root, bool follow_backing_files)
      : sysfs_(std::move(sysfs_root)), follow_(follow_backing_files) {}

  Status LoadMounts() {
    Result<std::vector<MountEntry>> mounts = ReadMountTable();
    if (!mounts) return mounts.error();
    mounts_ = std::move(*mounts);
    return {};
  }

  /// The mount holding `path` (canonical): the one with the longest mount point above it, the
  /// last of those when one is mounted over another.
  const MountEntry* MountOf(const std::string& path) const {
    const MountEntry* best = nullptr;
    for (const MountEntry& m : mounts_) {
      const std::string& t = m.target;
      const bool above =
          path == t || t == "/" ||
          (path.size() > t.size() && path.compare(0, t.size(), t) == 0 && path[t.size()] == '/');
      if (above && (best == nullptr || t.size() >= best->target.size())) best = &m;
    }
    return best;
  }

  void AddBlockDevice(uint32_t major_number, uint32_t minor_number, int depth) {
    if (depth > kMaxDepth) return;
    const fs::path link =
        fs::path(sysfs_) / "dev/block" / fmt::format("{}:{}", major_number, minor_number);
    std::error_code ec;
    const fs::path dir = fs::canonical(link, ec);
    const std::string name = ec ? fmt::format("block device {}:{}", major_number, minor_number)
                                : "/dev/" + dir.filename().string();
    StorageNode node{StorageNode::Kind::kBlockDevice, major_number, minor_number, name};
    std::error_code part_ec;
    if (!ec && fs::exists(dir / "partition", part_ec)) {
      // Its place on the disk that follows it in the chain (sysfs: 512-byte units).
      unsigned long long number = 0, start = 0, size = 0;
      if (std::sscanf(ReadLine(dir / "partition").c_str(), "%llu", &number) == 1 &&
          std::sscanf(ReadLine(dir / "start").c_str(), "%llu", &start) == 1 &&
          std::sscanf(ReadLine(dir / "size").c_str(), "%llu", &size) == 1) {
        node.partition = static_cast<uint32_t>(number);
        node.extent = {start * 512, size * 512};
      }
    }
    for (const StorageNode& seen : placement_.storage) {
      if (seen.SameAs(node)) return;
    }
    placement_.storage.push_back(node);
    if (ec) return;
    uint32_t ma = 0, mi = 0;
    if (fs::exists(dir / "partition", ec) &&
        ParseDevNumber(ReadLine(dir.parent_path() / "dev"), &ma, &mi)) {
      AddBlockDevice(ma, mi, depth + 1);
    }
    for (const fs::directory_entry& slave : fs::directory_iterator(dir / "slaves", ec)) {
      if (ParseDevNumber(ReadLine(slave.path() / "dev"), &ma, &mi))
        AddBlockDevice(ma, mi, depth + 1);
    }
    const std::string backing = ReadLine(dir / "loop/backing_file");
    if (!backing.empty()) AddFile(backing, depth + 1);
  }

  /// A loop device's backing file, and, for the journal's side, what stores that file.
  void AddFile(const std::string& path, int depth) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      // "(deleted)" backing files and the like: nothing to compare, and nothing to follow.
      if (follow_) placement_.storage_known = false;
      return;
    }
    placement_.storage.push_back({StorageNode::Kind::kFile, static_cast<uint64_t>(st.st_dev),
                                  static_cast<uint64_t>(st.st_ino), path});
    if (follow_) AddFileSystemOf(path, depth + 1, /*top=*/false);
  }

  /// The file system holding `path` and everything under it.
  void AddFileSystemOf(const std::string& path, int depth, bool top) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      placement_.storage_known = false;
      return;
    }
    std::string type = "unknown";
    std::string source;
    std::error_code ec;
    const std::string canonical = fs::canonical(path, ec).string();
    if (const MountEntry* mount = MountOf(ec ? path : canonical)) {
      type = mount->fstype;
      source = mount->source;
      if (kRemoteTypes.count(type) > 0) {
        if (top) placement_.remote = true;
        if (top) placement_.fs_type = type;
        return;
      }
    }
    if (top) placement_.fs_type = type;
    if (kVolatileTypes.count(type) > 0) {
      placement_.volatile_fs = true;
      if (!top) placement_.fs_type = type;
      return;
    }
    if (major(st.st_dev) != 0) {
      AddBlockDevice(major(st.st_dev), minor(st.st_dev), depth);
      return;
    }
    // An anonymous device (btrfs, overlay, FUSE): the mount source may name the block device.
    struct stat src {};
    if (!source.empty() && ::stat(source.c_str(), &src) == 0 && S_ISBLK(src.st_mode)) {
      AddBlockDevice(major(src.st_rdev), minor(src.st_rdev), depth);
      return;
    }
    placement_.storage_known = false;
  }

  JournalPlacement& placement() { return placement_; }

 private:
  std::string sysfs_;
  bool follow_;
  std::vector<MountEntry> mounts_;
  JournalPlacement placement_;
};

}  // namespace

Result<JournalPlacement> DescribeJournalPlacement(const std::string& directory,
                                                  const std::string& sysfs_root) {
  StorageWalk walk(sysfs_root, /*follow_backing_files=*/true);
  if (Status loaded = walk.LoadMounts(); !loaded) return loaded.error();
  struct stat st {};
  if (::stat(directory.c_str(), &st) != 0) {
    return ErrnoError(errno, fmt::format("cannot use the journal directory '{}'", directory));
  }
  if (!S_ISDIR(st.st_mode)) return MakeError(fmt::format("'{}' is not a directory", directory));
  walk.placement().directory = directory;
  walk.AddFileSystemOf(directory, 0, /*top=*/true);
  return walk.placement();
}

Result<TargetStorage> DescribeTargetStorage(const Target& target, const std::string& sysfs_root) {
  TargetStorage storage;
  storage.path = target.path;
  if (target.kind == TargetKind::kImageFile) {
    struct stat st {};
    if (::fstat(target.fd.get(), &st) != 0) {
      return ErrnoError(errno, fmt::format("cannot stat '{}'", target.path));
    }
    storage.nodes.push_back({StorageNode::Kind::kFile, static_cast<uint64_t>(st.st_dev),
                             static_cast<uint64_t>(st.st_ino), target.path});
    return storage;
  }
  // The move writes the disk and what it is built on, and a loop device's backing file - not
  // the file system holding that file (the move writes none of its other blocks).
  StorageWalk walk(sysfs_root, /*follow_backing_files=*/false);
  walk.AddBlockDevice(target.major, target.minor, 0);
  storage.nodes = walk.placement().storage;
  return storage;
}

Status CheckJournalPlacement(const std::string& journal_path, const Target& target,
                             const std::vector<ByteExtent>& written, std::string* note,
                             const std::string& sysfs_root) {
  fs::path dir = fs::path(journal_path).parent_path();
  if (dir.empty()) dir = ".";
  Result<JournalPlacement> placement = DescribeJournalPlacement(dir.string(), sysfs_root);
  if (!placement) return placement.error();
  Result<TargetStorage> storage = DescribeTargetStorage(target, sysfs_root);
  if (!storage) return storage.error();
  storage->written = written;
  if (std::optional<std::string> problem = JournalPlacementProblem(*placement, *storage)) {
    return MakeError(*problem);
  }
  if (note) *note = JournalPlacementNote(*placement, *storage).value_or("");
  return {};
}

}  // namespace partalign
