#include "io/mount_users.h"

#include <libmount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "io/c_handle.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;

using MountTable = CHandle<mnt_unref_table, libmnt_table*>;
using MountIter = CHandle<mnt_free_iter, libmnt_iter*>;

struct BlockDev {
  dev_t number;
  std::string name;  ///< "/dev/loop0p1"
  fs::path sysfs;
};

std::string ReadLine(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::optional<dev_t> ParseDev(const std::string& text) {
  unsigned a = 0, b = 0;
  if (std::sscanf(text.c_str(), "%u:%u", &a, &b) != 2) return std::nullopt;
  return makedev(a, b);
}

// The disk and its partitions, from sysfs.
std::vector<BlockDev> DiskAndPartitions(const Target& target, const std::string& sysfs_root) {
  std::vector<BlockDev> devs;
  std::error_code ec;
  const fs::path dir = fs::canonical(
      fs::path(sysfs_root) / "dev/block" / fmt::format("{}:{}", target.major, target.minor), ec);
  if (ec) {
    devs.push_back({makedev(target.major, target.minor), target.path, {}});
    return devs;
  }
  devs.push_back({makedev(target.major, target.minor), "/dev/" + dir.filename().string(), dir});
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (!fs::exists(entry.path() / "partition")) continue;
    if (std::optional<dev_t> number = ParseDev(ReadLine(entry.path() / "dev"))) {
      devs.push_back({*number, "/dev/" + entry.path().filename().string(), entry.path()});
    }
  }
  return devs;
}

Status AddMounts(const std::vector<BlockDev>& devs, std::vector<std::string>* users) {
  MountTable table(mnt_new_table_from_file("/proc/self/mountinfo"));
  if (!table) return ErrnoError(errno, "cannot read /proc/self/mountinfo");
  MountIter iter(mnt_new_iter(MNT_ITER_FORWARD));
  libmnt_fs* mount = nullptr;
  while (mnt_table_next_fs(table.get(), iter.get(), &mount) == 0) {
    const dev_t number = mnt_fs_get_devno(mount);
    for (const BlockDev& dev : devs) {
      if (dev.number != number) continue;
      const char* target = mnt_fs_get_target(mount);
      users->push_back(fmt::format("'{}' is mounted on '{}'", dev.name, target ? target : "?"));
    }
  }
  return {};
}

void AddSwaps(const std::vector<BlockDev>& devs, std::vector<std::string>* users) {
  std::ifstream swaps("/proc/swaps");
  std::string line;
  std::getline(swaps, line);  // header
  while (std::getline(swaps, line)) {
    std::istringstream fields(line);
    std::string path;
    fields >> path;
    struct stat st {};
    if (path.empty() || ::stat(path.c_str(), &st) != 0 || !S_ISBLK(st.st_mode)) continue;
    for (const BlockDev& dev : devs) {
      if (dev.number == st.st_rdev) users->push_back(fmt::format("'{}' is active swap", dev.name));
    }
  }
}

void AddHolders(const std::vector<BlockDev>& devs, std::vector<std::string>* users) {
  for (const BlockDev& dev : devs) {
    std::error_code ec;
    if (dev.sysfs.empty()) continue;
    for (const fs::directory_entry& holder : fs::directory_iterator(dev.sysfs / "holders", ec)) {
      users->push_back(fmt::format("'{}' is held by '/dev/{}' (device-mapper, md or LVM)", dev.name,
                                   holder.path().filename().string()));
    }
  }
}

// Loop devices whose backing file is this image.
Status AddLoopAttachments(const Target& target, const std::string& sysfs_root,
                          std::vector<std::string>* users) {
  struct stat image {};
  if (::fstat(target.fd.get(), &image) != 0) {
    return ErrnoError(errno, fmt::format("cannot stat '{}'", target.path));
  }
  std::error_code ec;
  for (const fs::directory_entry& entry :
       fs::directory_iterator(fs::path(sysfs_root) / "block", ec)) {
    const std::string backing = ReadLine(entry.path() / "loop/backing_file");
    struct stat st {};
    if (backing.empty() || ::stat(backing.c_str(), &st) != 0) continue;
    if (st.st_dev == image.st_dev && st.st_ino == image.st_ino) {
      users->push_back(
          fmt::format("'{}' is attached to '/dev/{}'; move the data through that "
                      "device, or detach it",
                      target.path, entry.path().filename().string()));
    }
  }
  return {};
}

}  // namespace

Result<std::vector<std::string>> FindTargetUsers(const Target& target,
                                                 const std::string& sysfs_root) {
  std::vector<std::string> users;
  if (target.kind == TargetKind::kImageFile) {
    if (Status s = AddLoopAttachments(target, sysfs_root, &users); !s) return s.error();
    return users;
  }
  const std::vector<BlockDev> devs = DiskAndPartitions(target, sysfs_root);
  if (Status s = AddMounts(devs, &users); !s) return s.error();
  AddSwaps(devs, &users);
  AddHolders(devs, &users);
  return users;
}

}  // namespace partalign
