// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/boot/ntfs_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <ctime>
#include <functional>
#include <memory>

#include <fmt/format.h>

#include "partalign/util/checked_math.h"

// Last: libntfs-3g's headers need <ctime>, <cstdarg> and <sys/types.h> before them, and
// define min() and max() macros (support.h) that would break any C++ header after them.
extern "C" {
#include <ntfs-3g/attrib.h>
#include <ntfs-3g/device.h>
#include <ntfs-3g/dir.h>
#include <ntfs-3g/inode.h>
#include <ntfs-3g/logging.h>
#include <ntfs-3g/runlist.h>
#include <ntfs-3g/volume.h>
}
#undef min
#undef max

namespace partalign {
namespace {

// The partition as libntfs-3g's device: reads are preads at `offset` of the disk's fd.
struct PartitionDevice {
  int fd = -1;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t position = 0;
};

PartitionDevice& Part(struct ntfs_device* dev) {
  return *static_cast<PartitionDevice*>(dev->d_private);
}

int DevOpen(struct ntfs_device* dev, int flags) {
  if ((flags & O_ACCMODE) != O_RDONLY) {
    errno = EROFS;
    return -1;
  }
  NDevSetReadOnly(dev);
  NDevSetOpen(dev);
  return 0;
}

int DevClose(struct ntfs_device* dev) {
  NDevClearOpen(dev);
  return 0;
}

s64 DevSeek(struct ntfs_device* dev, s64 offset, int whence) {
  PartitionDevice& p = Part(dev);
  s64 base = 0;
  if (whence == SEEK_CUR) base = static_cast<s64>(p.position);
  if (whence == SEEK_END) base = static_cast<s64>(p.size);
  if (base + offset < 0) {
    errno = EINVAL;
    return -1;
  }
  p.position = static_cast<uint64_t>(base + offset);
  return static_cast<s64>(p.position);
}

s64 DevPread(struct ntfs_device* dev, void* buf, s64 count, s64 offset) {
  PartitionDevice& p = Part(dev);
  if (count < 0 || offset < 0) {
    errno = EINVAL;
    return -1;
  }
  const auto at = static_cast<uint64_t>(offset);
  if (at >= p.size) return 0;
  const uint64_t n = std::min<uint64_t>(static_cast<uint64_t>(count), p.size - at);
  uint64_t done = 0;
  while (done < n) {
    const ssize_t got = pread(p.fd, static_cast<char*>(buf) + done, n - done,
                              static_cast<off_t>(p.offset + at + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return -1;
    if (got == 0) break;
    done += static_cast<uint64_t>(got);
  }
  return static_cast<s64>(done);
}

s64 DevRead(struct ntfs_device* dev, void* buf, s64 count) {
  const s64 got = DevPread(dev, buf, count, static_cast<s64>(Part(dev).position));
  if (got > 0) Part(dev).position += static_cast<uint64_t>(got);
  return got;
}

s64 DevWrite(struct ntfs_device*, const void*, s64) {
  errno = EROFS;
  return -1;
}

s64 DevPwrite(struct ntfs_device*, const void*, s64, s64) {
  errno = EROFS;
  return -1;
}

int DevSync(struct ntfs_device*) { return 0; }

int DevStat(struct ntfs_device* dev, struct stat* buf) {
  *buf = {};
  buf->st_mode = S_IFREG | 0400;
  buf->st_size = static_cast<off_t>(Part(dev).size);
  return 0;
}

int DevIoctl(struct ntfs_device*, unsigned long, void*) {
  errno = ENOTTY;
  return -1;
}

struct ntfs_device_operations kPartitionDeviceOps = {
    DevOpen, DevClose, DevSeek, DevRead, DevWrite, DevPread, DevPwrite, DevSync, DevStat, DevIoctl};

// What a data attribute's flags say about finding its bytes on the disk.
std::string Unlocatable(ntfs_attr* na) {
  if (!NAttrNonResident(na)) return "resident in the MFT";
  if (NAttrCompressed(na)) return "compressed";
  if (NAttrEncrypted(na)) return "encrypted";
  if (NAttrSparse(na)) return "sparse";
  return "";
}

Result<std::optional<NtfsFile>> ReadOne(ntfs_volume* vol, const std::string& path,
                                        const std::string& what) {
  ntfs_inode* ni = ntfs_pathname_to_inode(vol, nullptr, path.c_str());
  if (ni == nullptr) return std::optional<NtfsFile>();
  std::unique_ptr<ntfs_inode, int (*)(ntfs_inode*)> inode(ni, ntfs_inode_close);
  ntfs_attr* na = ntfs_attr_open(ni, AT_DATA, AT_UNNAMED, 0);
  if (na == nullptr) return std::optional<NtfsFile>();
  std::unique_ptr<ntfs_attr, void (*)(ntfs_attr*)> attr(na, ntfs_attr_close);
  NtfsFile file;
  const auto size = static_cast<uint64_t>(na->data_size);
  if (size > kMaxNtfsFileBytes) {
    return MakeError(
        fmt::format("{}: '{}' is larger than {} bytes", what, path, kMaxNtfsFileBytes));
  }
  // Past the initialised size the file reads as zeros whatever the clusters hold.
  const uint64_t initialized =
      std::min<uint64_t>(size, static_cast<uint64_t>(na->initialized_size));
  file.data.resize(initialized);
  if (initialized != 0 && ntfs_attr_pread(na, 0, static_cast<s64>(initialized), file.data.data()) !=
                              static_cast<s64>(initialized)) {
    return ErrnoError(errno, fmt::format("{}: cannot read '{}'", what, path));
  }
  file.unlocatable = Unlocatable(na);
  if (!file.unlocatable.empty()) return std::optional<NtfsFile>(std::move(file));
  if (ntfs_attr_map_whole_runlist(na) != 0) {
    return ErrnoError(errno, fmt::format("{}: cannot map the clusters of '{}'", what, path));
  }
  const uint64_t cluster = vol->cluster_size;
  for (runlist_element* rl = na->rl; rl != nullptr && rl->length != 0; ++rl) {
    std::optional<uint64_t> from = CheckedMul(static_cast<uint64_t>(rl->vcn), cluster);
    std::optional<uint64_t> length = CheckedMul(static_cast<uint64_t>(rl->length), cluster);
    if (rl->vcn < 0 || rl->length < 0 || !from || !length) {
      return MakeError(fmt::format("{}: '{}' has a damaged runlist", what, path));
    }
    if (*from >= initialized) break;
    FileExtent e{*from, std::min(*length, initialized - *from), std::nullopt};
    if (rl->lcn >= 0) {
      e.partition_offset = CheckedMul(static_cast<uint64_t>(rl->lcn), cluster);
    }
    file.extents.push_back(e);
  }
  return std::optional<NtfsFile>(std::move(file));
}

}  // namespace

namespace {

// Mounts the NTFS volume at [offset, offset + size) of `fd` read-only through libntfs-3g, runs
// `use` on it and unmounts it.
template <typename T>
Result<T> WithNtfsVolume(int fd, uint64_t offset_bytes, uint64_t size_bytes,
                         const std::string& what,
                         const std::function<Result<T>(ntfs_volume*)>& use) {
  // libntfs-3g logs to stderr by default; partalign reports what matters itself.
  ntfs_log_set_handler(ntfs_log_handler_null);
  PartitionDevice part{fd, offset_bytes, size_bytes, 0};
  struct ntfs_device* dev = ntfs_device_alloc(what.c_str(), 0, &kPartitionDeviceOps, &part);
  if (dev == nullptr) return ErrnoError(errno, what + ": cannot set up libntfs-3g");
  ntfs_volume* vol = ntfs_device_mount(dev, NTFS_MNT_RDONLY);
  if (vol == nullptr) {
    const int err = errno;
    ntfs_device_free(dev);
    return ErrnoError(err, what + ": libntfs-3g cannot open the NTFS volume");
  }
  Result<T> result = use(vol);
  ntfs_umount(vol, FALSE);  // frees `dev` too
  return result;
}

}  // namespace

Result<uint64_t> NtfsUsedBytes(int fd, uint64_t offset_bytes, uint64_t size_bytes,
                               const std::string& what) {
  return WithNtfsVolume<uint64_t>(
      fd, offset_bytes, size_bytes, what, [&](ntfs_volume* vol) -> Result<uint64_t> {
        if (ntfs_volume_get_free_space(vol) != 0 || vol->free_clusters < 0 ||
            vol->free_clusters > vol->nr_clusters) {
          return MakeError(what + ": libntfs-3g cannot count the free clusters");
        }
        return static_cast<uint64_t>(vol->nr_clusters - vol->free_clusters) * vol->cluster_size;
      });
}

Result<std::vector<std::optional<NtfsFile>>> ReadNtfsFiles(int fd, uint64_t offset_bytes,
                                                           uint64_t size_bytes,
                                                           const std::vector<std::string>& paths,
                                                           const std::string& what) {
  using Files = std::vector<std::optional<NtfsFile>>;
  return WithNtfsVolume<Files>(fd, offset_bytes, size_bytes, what,
                               [&](ntfs_volume* vol) -> Result<Files> {
                                 Files out;
                                 for (const std::string& path : paths) {
                                   Result<std::optional<NtfsFile>> one = ReadOne(vol, path, what);
                                   if (!one) return one.error();
                                   out.push_back(std::move(*one));
                                 }
                                 return out;
                               });
}

Result<NtfsWakeState> ReadNtfsWakeState(int fd, uint64_t offset_bytes, uint64_t size_bytes,
                                        uint64_t head_bytes, const std::string& what) {
  return WithNtfsVolume<NtfsWakeState>(
      fd, offset_bytes, size_bytes, what, [&](ntfs_volume* vol) -> Result<NtfsWakeState> {
        NtfsWakeState state;
        state.dirty = (vol->flags & VOLUME_IS_DIRTY) != 0;
        ntfs_inode* ni = ntfs_pathname_to_inode(vol, nullptr, "hiberfil.sys");
        if (ni == nullptr) return state;
        std::unique_ptr<ntfs_inode, int (*)(ntfs_inode*)> inode(ni, ntfs_inode_close);
        ntfs_attr* na = ntfs_attr_open(ni, AT_DATA, AT_UNNAMED, 0);
        // A hiberfil.sys without data holds no image.
        if (na == nullptr) return state;
        std::unique_ptr<ntfs_attr, void (*)(ntfs_attr*)> attr(na, ntfs_attr_close);
        std::vector<uint8_t> head(
            std::min<uint64_t>(head_bytes, static_cast<uint64_t>(std::max<s64>(na->data_size, 0))));
        const s64 got =
            head.empty() ? 0 : ntfs_attr_pread(na, 0, static_cast<s64>(head.size()), head.data());
        if (got < 0) return ErrnoError(errno, what + ": cannot read 'hiberfil.sys'");
        head.resize(static_cast<size_t>(got));
        state.hiberfil_head = std::move(head);
        return state;
      });
}

}  // namespace partalign
