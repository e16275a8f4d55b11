// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/device/in_use.h"

#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
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
  uint64_t start = 0;  ///< bytes into the disk (sysfs "start", 512-byte units)
  uint64_t size = 0;   ///< bytes (sysfs "size", 512-byte units)
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

// A sysfs count of 512-byte units as bytes; 0 when absent.
uint64_t Sectors512(const fs::path& file) {
  std::optional<std::string> text = ReadText(file);
  Result<uint64_t> n = text ? ParseUint(*text) : Result<uint64_t>(0);
  return n ? *n * 512 : 0;
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
  nodes.push_back({0, path, rdev, dir.string(), 0, Sectors512(dir / "size")});
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    std::optional<std::string> number = ReadText(entry.path() / "partition");
    std::optional<std::string> dev = ReadText(entry.path() / "dev");
    if (!number || !dev) continue;
    Result<uint64_t> n = ParseUint(*number);
    std::optional<dev_t> d = ParseDev(*dev);
    if (!n || !d) continue;
    nodes.push_back({static_cast<uint32_t>(*n), "/dev/" + entry.path().filename().string(), *d,
                     entry.path().string(), Sectors512(entry.path() / "start"),
                     Sectors512(entry.path() / "size")});
  }
  return nodes;
}

// What a loop device is a window of: its backing file (or block device), from where, how long.
struct LoopWindow {
  std::string name;     ///< "loop3"
  std::string backing;  ///< the backing file's path as the kernel gives it
  struct stat backing_stat {};
  uint64_t offset = 0;
  uint64_t sizelimit = 0;  ///< 0: to the end of the backing file
};

std::optional<LoopWindow> ReadLoopWindow(const fs::path& sysfs_root, const std::string& name) {
  const fs::path loop = sysfs_root / "block" / name / "loop";
  std::optional<std::string> backing = ReadText(loop / "backing_file");
  if (!backing || backing->empty()) return std::nullopt;
  if (backing->size() > kDeletedSuffix.size() &&
      backing->compare(backing->size() - kDeletedSuffix.size(), kDeletedSuffix.size(),
                       kDeletedSuffix) == 0) {
    return std::nullopt;  // an unlinked file is nobody's image any more
  }
  LoopWindow w{name, *backing};
  if (::stat(backing->c_str(), &w.backing_stat) != 0) return std::nullopt;
  if (std::optional<std::string> o = ReadText(loop / "offset")) {
    if (Result<uint64_t> n = ParseUint(*o)) w.offset = *n;
  }
  if (std::optional<std::string> l = ReadText(loop / "sizelimit")) {
    if (Result<uint64_t> n = ParseUint(*l)) w.sizelimit = *n;
  }
  return w;
}

bool SameStorage(const struct stat& a, const struct stat& b) {
  if (S_ISBLK(a.st_mode) && S_ISBLK(b.st_mode)) return a.st_rdev == b.st_rdev;
  return S_ISREG(a.st_mode) && S_ISREG(b.st_mode) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// The identity a disk's other paths share (dm-multipath's paths, a disk seen twice): its
// WWID, where the kernel gives one.
std::optional<std::string> Wwid(const fs::path& sysfs_root, const std::string& name) {
  for (const char* file : {"wwid", "device/wwid"}) {
    std::optional<std::string> id = ReadText(sysfs_root / "block" / name / file);
    if (id && !id->empty()) return id;
  }
  return std::nullopt;
}

// Another block device over the storage of the disk being checked: where the disk's byte 0
// lies in it (`shift`: alias byte = disk byte + shift) and why it counts.
struct Alias {
  std::string name;  ///< "loop7"
  int64_t shift = 0;
  std::string why;  ///< "another loop device over the same file '/x.img'"
};

std::vector<Alias> FindAliases(const fs::path& sysfs_root, const std::string& self) {
  std::vector<Alias> aliases;
  const std::optional<LoopWindow> mine = ReadLoopWindow(sysfs_root, self);
  const std::optional<std::string> my_wwid = mine ? std::nullopt : Wwid(sysfs_root, self);
  if (!mine && !my_wwid) return aliases;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(sysfs_root / "block", ec)) {
    const std::string name = e.path().filename().string();
    if (name == self) continue;
    if (mine) {
      std::optional<LoopWindow> other = ReadLoopWindow(sysfs_root, name);
      if (!other || !SameStorage(mine->backing_stat, other->backing_stat)) continue;
      aliases.push_back(
          {name, static_cast<int64_t>(mine->offset) - static_cast<int64_t>(other->offset),
           fmt::format("another loop device over the same {} '{}'",
                       S_ISBLK(mine->backing_stat.st_mode) ? "device" : "file", mine->backing)});
    } else if (Wwid(sysfs_root, name) == my_wwid) {
      aliases.push_back(
          {name, 0, fmt::format("another path to the same disk (WWID {})", *my_wwid)});
    }
  }
  return aliases;
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

// The users of every alias of the disk, each given to the partition of `nodes` whose bytes
// its node overlaps (the disk itself when it overlaps several, or none).
Status FindAliasUsers(const std::vector<Node>& nodes, const InUseSources& sources,
                      std::vector<DiskUser>* out) {
  const std::string self = fs::path(nodes.front().sysfs_dir).filename().string();
  for (const Alias& alias : FindAliases(sources.sysfs_root, self)) {
    const std::string path = "/dev/" + alias.name;
    const fs::path link = fs::path(sources.sysfs_root) / "block" / alias.name / "dev";
    std::optional<std::string> dev_text = ReadText(link);
    std::optional<dev_t> rdev = dev_text ? ParseDev(*dev_text) : std::nullopt;
    if (!rdev) continue;
    Result<std::vector<Node>> theirs = BlockNodes(path, *rdev, sources.sysfs_root);
    if (!theirs) continue;  // gone since the listing
    std::vector<DiskUser> found;
    if (Status s = FindMounts(*theirs, sources.mountinfo, &found); !s) return s;
    FindSwaps(*theirs, std::nullopt, sources.swaps, &found);
    FindHolders(*theirs, sources.sysfs_root, &found);
    FindLoopBacking(*theirs, std::nullopt, sources.sysfs_root, &found);
    for (const DiskUser& u : found) {
      const Node* node = nullptr;
      for (const Node& n : *theirs) {
        if (n.partition == u.partition) node = &n;
      }
      // The node's bytes on the disk being checked.
      const int64_t first = node ? static_cast<int64_t>(node->start) - alias.shift : 0;
      const int64_t end = node ? first + static_cast<int64_t>(node->size) : 0;
      uint32_t partition = 0;
      if (node && node->size > 0) {
        int hits = 0;
        for (const Node& mine : nodes) {
          if (mine.partition == 0 || mine.size == 0) continue;
          const int64_t a = static_cast<int64_t>(mine.start);
          const int64_t b = a + static_cast<int64_t>(mine.size);
          if (first < b && a < end) {
            ++hits;
            partition = mine.partition;
          }
        }
        if (hits != 1) partition = 0;
      }
      std::string node_path = nodes.front().path;
      for (const Node& mine : nodes) {
        if (mine.partition == partition) node_path = mine.path;
      }
      out->push_back(
          {partition, node_path, fmt::format("{} through '{}' ({})", u.user, u.node, alias.why)});
    }
  }
  return {};
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
  // The same storage through another device: a partition mounted there is as mounted as here.
  if (!image) {
    if (Status s = FindAliasUsers(nodes, sources, &users); !s) return s.error();
  }
  for (DiskUser& u : users) {
    for (const Node& n : nodes) {
      if (u.partition != 0 && n.partition == u.partition) u.extent = {n.start, n.size};
    }
  }
  return users;
}

bool Blocks(const DiskUser& user, const WriteScope& scope) {
  if (scope.whole_disk || user.partition == 0) return true;
  for (uint32_t p : scope.partitions) {
    if (p == user.partition) return true;
  }
  // A partition the kernel has nowhere (extent empty) is judged by its number alone.
  return OverlapsAny(user.extent, scope.bytes);
}

Result<Target> OpenForScopedWrite(const std::string& path, const WriteScope& scope,
                                  std::vector<DiskUser>* staying) {
  Result<std::vector<DiskUser>> users = FindDiskUsers(path);
  if (!users) return users.error();
  std::string blocking;
  for (const DiskUser& u : *users) {
    if (Blocks(u, scope)) blocking += (blocking.empty() ? "" : "; ") + Describe(u);
  }
  if (!blocking.empty()) {
    return Error{fmt::format("'{}' is in use where the write changes it: {}", path, blocking),
                 EBUSY};
  }
  if (users->empty()) return OpenForTableWrite(path);
  Result<Target> target = OpenTarget(path, {.write = true});
  if (!target) return target.error();
  if (Status s = LockExclusive(*target); !s) return s.error();
  if (target->kind == TargetKind::kBlockDevice) {
    Result<std::vector<Node>> nodes =
        BlockNodes(path, makedev(target->major, target->minor), "/sys");
    if (!nodes) return nodes.error();
    for (const Node& n : *nodes) {
      if (n.partition == 0) continue;
      const DiskUser as_user{n.partition, n.path, "", {n.start, n.size}};
      if (!Blocks(as_user, scope)) continue;
      const int fd = ::open(n.path.c_str(), O_RDONLY | O_EXCL | O_CLOEXEC);
      if (fd < 0) {
        const int err = errno;  // EBUSY: somebody holds it (IsBusy: a refusal)
        return Error{fmt::format("cannot hold partition {} ('{}') for the write: {}", n.partition,
                                 n.path, std::strerror(err)),
                     err};
      }
      target->claims.emplace_back(fd);
    }
  }
  // Checked again while held: a mount of a partition the write changes is impossible now, but
  // one made between the first look and the claims would not have been seen.
  Result<std::vector<DiskUser>> again = FindDiskUsers(path);
  if (!again) return again.error();
  for (const DiskUser& u : *again) {
    if (Blocks(u, scope)) {
      return Error{fmt::format("'{}' is in use where the write changes it: {}", path, Describe(u)),
                   EBUSY};
    }
  }
  if (staying) *staying = std::move(*again);
  // Held now: no partition the write changes can be mounted and written through its node.
  // What was cached of them before the hold is forgotten, so the used maps read next are theirs.
  DropCachedPages(*target);
  return target;
}

Result<Target> OpenForTableWrite(const std::string& path) {
  Result<Target> target = OpenTarget(path, {.write = true, .exclusive = true});
  if (!target) return target.error();
  if (Status s = LockExclusive(*target); !s) return s.error();
  DropCachedPages(*target);  // held: what was cached before is forgotten (OpenForScopedWrite)
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

Status RetryWhileBusy(const std::function<Status()>& attempt) {
  constexpr int kStepMilliseconds = 50;
  for (int waited = 0;; waited += kStepMilliseconds) {
    Status status = attempt();
    if (status || !IsBusy(status.error()) || waited >= kBusyWaitMilliseconds) return status;
    ::usleep(kStepMilliseconds * 1000);
  }
}

}  // namespace partalign
