// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/device/in_use.h"

#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "io/device/mount_table.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;

// What the kernel appends to a loop device's backing_file when the file was unlinked.
constexpr std::string_view kDeletedSuffix = " (deleted)";

// One node of the disk: the disk itself (partition 0) or a partition.
struct Node {
  uint32_t partition = 0;
  std::string path;
  dev_t rdev = 0;  // block devices only
  std::string sysfs_dir;
};

std::optional<std::string> ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

std::optional<dev_t> ParseDev(const std::string& text) {
  size_t colon = text.find(':');
  if (colon == std::string::npos) return std::nullopt;
  Result<uint64_t> ma = ParseUint(text.substr(0, colon));
  Result<uint64_t> mi = ParseUint(text.substr(colon + 1));
  if (!ma || !mi) return std::nullopt;
  return makedev(*ma, *mi);
}

// The disk and its partitions, from sysfs ("<disk>/<part>/partition" marks a partition).
Result<std::vector<Node>> BlockNodes(const std::string& path, dev_t rdev,
                                     const std::string& sysfs_root) {
  std::vector<Node> nodes;
  const fs::path link =
      fs::path(sysfs_root) / "dev" / "block" / fmt::format("{}:{}", major(rdev), minor(rdev));
  std::error_code ec;
  fs::path dir = fs::canonical(link, ec);
  if (ec) {
    return ErrnoError(ec.value(),
                      fmt::format("cannot find '{}' in sysfs ('{}')", path, link.string()));
  }
  nodes.push_back({0, path, rdev, dir.string()});
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    std::optional<std::string> number = ReadText(entry.path() / "partition");
    std::optional<std::string> dev = ReadText(entry.path() / "dev");
    if (!number || !dev) continue;
    Result<uint64_t> n = ParseUint(*number);
    std::optional<dev_t> d = ParseDev(*dev);
    if (!n || !d) continue;
    nodes.push_back({static_cast<uint32_t>(*n), "/dev/" + entry.path().filename().string(), *d,
                     entry.path().string()});
  }
  return nodes;
}

const Node* MatchBlock(const std::vector<Node>& nodes, const std::string& file) {
  struct stat st {};
  if (file.empty() || ::stat(file.c_str(), &st) != 0 || !S_ISBLK(st.st_mode)) return nullptr;
  for (const Node& n : nodes) {
    if (n.rdev != 0 && n.rdev == st.st_rdev) return &n;
  }
  return nullptr;
}

bool SameFile(const struct stat& a, const std::string& file) {
  struct stat st {};
  return ::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == a.st_dev &&
         st.st_ino == a.st_ino;
}

// Users of holders: device-mapper (and LVM on it) and md name themselves in sysfs.
std::string HolderName(const fs::path& sysfs_root, const std::string& holder) {
  const fs::path block = sysfs_root / "block" / holder;
  std::error_code ec;
  if (std::optional<std::string> dm = ReadText(block / "dm" / "name")) {
    return fmt::format("device-mapper device '{}' ({})", *dm, holder);
  }
  if (fs::exists(block / "md", ec)) return fmt::format("md array '{}'", holder);
  return fmt::format("'{}'", holder);
}

void FindHolders(const std::vector<Node>& nodes, const std::string& sysfs_root,
                 std::vector<DiskUser>* out) {
  for (const Node& n : nodes) {
    std::error_code ec;
    for (const fs::directory_entry& h :
         fs::directory_iterator(fs::path(n.sysfs_dir) / "holders", ec)) {
      out->push_back({n.partition, n.path,
                      "is held by " + HolderName(sysfs_root, h.path().filename().string())});
    }
  }
}

Status FindMounts(const std::vector<Node>& nodes, const std::string& mountinfo,
                  std::vector<DiskUser>* out) {
  Result<std::vector<MountEntry>> mounts = ReadMountTable(mountinfo);
  if (!mounts) return mounts.error();
  for (const MountEntry& m : *mounts) {
    const Node* hit = nullptr;
    for (const Node& n : nodes) {
      if (n.rdev != 0 && makedev(m.major, m.minor) == n.rdev) hit = &n;
    }
    if (!hit && !m.source.empty() && m.source.front() == '/') hit = MatchBlock(nodes, m.source);
    if (hit)
      out->push_back({hit->partition, hit->path, fmt::format("is mounted on '{}'", m.target)});
  }
  return {};
}

void FindSwaps(const std::vector<Node>& nodes, const std::optional<struct stat>& image,
               const std::string& swaps, std::vector<DiskUser>* out) {
  std::optional<std::string> text = ReadText(swaps);
  if (!text) return;  // no swap support in the kernel: nothing can be swap
  for (const std::string& file : ParseProcSwaps(*text)) {
    if (const Node* n = MatchBlock(nodes, file)) {
      out->push_back({n->partition, n->path, "is active swap"});
    } else if (image && SameFile(*image, file)) {
      out->push_back({0, nodes.front().path, "is active swap (a swap file)"});
    }
  }
}

void FindLoopBacking(const std::vector<Node>& nodes, const std::optional<struct stat>& image,
                     const std::string& sysfs_root, std::vector<DiskUser>* out) {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(fs::path(sysfs_root) / "block", ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("loop", 0) != 0) continue;
    std::optional<std::string> backing = ReadText(e.path() / "loop" / "backing_file");
    if (!backing || backing->empty()) continue;
    if (backing->size() > kDeletedSuffix.size() &&
        backing->compare(backing->size() - kDeletedSuffix.size(), kDeletedSuffix.size(),
                         kDeletedSuffix) == 0) {
      continue;  // an unlinked file is no file of ours
    }
    if (const Node* n = MatchBlock(nodes, *backing)) {
      out->push_back({n->partition, n->path,
                      fmt::format("is the backing device of loop device '/dev/{}'", name)});
    } else if (image && SameFile(*image, *backing)) {
      out->push_back(
          {0, nodes.front().path, fmt::format("is attached to loop device '/dev/{}'", name)});
    }
  }
}

}  // namespace

std::string Describe(const DiskUser& user) {
  if (user.partition == 0) return fmt::format("'{}' {}", user.node, user.user);
  return fmt::format("partition {} ('{}') {}", user.partition, user.node, user.user);
}

std::vector<std::string> ParseProcSwaps(std::string_view text) {
  std::vector<std::string> files;
  std::istringstream in{std::string(text)};
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (header) {  // "Filename  Type  Size  Used  Priority"
      header = false;
      continue;
    }
    std::string raw = line.substr(0, line.find_first_of(" \t"));
    if (raw.empty()) continue;
    // The kernel writes the name with seq_file_path(): space, tab, newline and backslash as
    // three-digit octal escapes.
    std::string name;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '\\' && i + 3 < raw.size()) {
        const std::string digits = raw.substr(i + 1, 3);
        if (digits.find_first_not_of("01234567") == std::string::npos) {
          name += static_cast<char>(std::stoi(digits, nullptr, 8));
          i += 3;
          continue;
        }
      }
      name += raw[i];
    }
    files.push_back(name);
  }
  return files;
}

Result<std::vector<DiskUser>> FindDiskUsers(const std::string& path, const InUseSources& sources) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return ErrnoError(errno, fmt::format("cannot open '{}'", path));
  }
  std::vector<Node> nodes;
  std::optional<struct stat> image;
  if (S_ISBLK(st.st_mode)) {
    Result<std::vector<Node>> block = BlockNodes(path, st.st_rdev, sources.sysfs_root);
    if (!block) return block.error();
    nodes = std::move(*block);
  } else if (S_ISREG(st.st_mode)) {
    nodes.push_back({0, path, 0, ""});
    image = st;
  } else {
    return MakeError(fmt::format("'{}' is not a block device or image file", path));
  }
  std::vector<DiskUser> users;
  if (Status s = FindMounts(nodes, sources.mountinfo, &users); !s) return s.error();
  FindSwaps(nodes, image, sources.swaps, &users);
  if (!image) FindHolders(nodes, sources.sysfs_root, &users);
  FindLoopBacking(nodes, image, sources.sysfs_root, &users);
  return users;
}

Result<Target> OpenForTableWrite(const std::string& path) {
  Result<Target> target = OpenTarget(path, {.write = true, .exclusive = true});
  if (!target) return target.error();
  if (Status s = LockExclusive(*target); !s) return s.error();
  return target;
}

Status LockExclusive(const Target& target) {
  if (::flock(target.fd.get(), LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    if (err == EWOULDBLOCK) {
      return Error{fmt::format("'{}' is locked by another program (flock; sfdisk --lock, udev "
                               "and systemd-repart take the same lock)",
                               target.path),
                   EWOULDBLOCK};
    }
    return ErrnoError(err, fmt::format("cannot lock '{}'", target.path));
  }
  return {};
}

bool IsBusy(const Error& error) {
  return error.errno_value == EBUSY || error.errno_value == EWOULDBLOCK;
}

}  // namespace partalign
