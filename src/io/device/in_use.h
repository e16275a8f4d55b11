// SPDX-License-Identifier: GPL-3.0-or-later
// Is a disk in use? Before any write: mounted partitions (libmount, by device number), active
// swap (/proc/swaps), holders in sysfs (device-mapper, md, LVM), loop devices backed by the
// disk, one of its partitions or the image file; then the exclusive open (O_EXCL) and the lock
// (flock, as sfdisk --lock and udev take it) that keep it so while partalign writes. The same
// storage seen through another device counts: a partition mounted through a second loop device
// over the same image file (or an offset loop over one partition), or through another path to
// the same disk (same WWID: dm-multipath's paths), is in use here too.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/device/target.h"
#include "partalign/util/byte_extent.h"
#include "partalign/util/result.h"

namespace partalign {

/// Somebody using the disk or one of its partitions.
struct DiskUser {
  uint32_t partition = 0;  ///< 0: the disk (or image file) itself
  std::string node;        ///< "/dev/loop3p2", or the disk's own path
  std::string user;        ///< "is mounted on '/mnt/x'", "is active swap", ...
  /// The partition's bytes on the disk, as the kernel has them (sysfs); empty for the disk.
  ByteExtent extent;
  bool operator==(const DiskUser&) const = default;
};

/// What a write changes, for the in-use check: the partitions whose table entries change
/// (moved, resized, deleted, renumbered) and the bytes it writes (data moved from and to, table
/// sectors). A user of anything else may stay: that partition is neither read nor written, and
/// its kernel partition is left alone (docs/apply.md, "In use").
struct WriteScope {
  /// Every byte and every partition (translate, the table of a disk in use as a whole).
  bool whole_disk = true;
  std::vector<uint32_t> partitions;
  std::vector<ByteExtent> bytes;
  static WriteScope WholeDisk() { return {}; }
};

/// Whether `user` keeps a write of `scope` from going ahead: a user of the whole disk, of a
/// partition it changes, or of bytes it writes.
bool Blocks(const DiskUser& user, const WriteScope& scope);

/// "partition 2 ('/dev/loop3p2') is mounted on '/mnt/x'", "'/dev/loop3' is active swap".
std::string Describe(const DiskUser& user);

/// Where the facts come from; tests point them at fake files and trees.
struct InUseSources {
  std::string sysfs_root = "/sys";
  std::string mountinfo = "/proc/self/mountinfo";
  std::string swaps = "/proc/swaps";
};

/// Everybody using the disk `path` (a block device or an image file) or its partitions. Empty
/// when nobody is.
Result<std::vector<DiskUser>> FindDiskUsers(const std::string& path,
                                            const InUseSources& sources = {});

/// The file names listed in a /proc/swaps text, with the kernel's octal escapes ("\040")
/// undone.
std::vector<std::string> ParseProcSwaps(std::string_view text);

/// Opens `path` for writing the partition table: read-write, exclusively (O_EXCL, block
/// devices: fails while anything holds the disk or a partition of it, and keeps everybody from
/// claiming one until closed) and locked (flock LOCK_EX | LOCK_NB). Closing the target releases
/// both. See IsBusy() for the errors that mean "somebody else has it".
Result<Target> OpenForTableWrite(const std::string& path);

/// Opens `path` for a write of `scope`. Nobody using the disk: OpenForTableWrite. Somebody
/// using only what the write leaves alone: read-write without O_EXCL on the disk (the kernel
/// refuses it while a partition is mounted), the flock, and O_EXCL on the node of every
/// partition the write changes or whose bytes it writes (Target::claims: nobody mounts them
/// while partalign writes; released before the kernel is told, since BLKPG cannot delete a
/// partition that is open). `staying` receives those users. A user the write must not have
/// fails with EBUSY (IsBusy), naming each.
Result<Target> OpenForScopedWrite(const std::string& path, const WriteScope& scope,
                                  std::vector<DiskUser>* staying = nullptr);

/// Takes the lock OpenForTableWrite takes (flock LOCK_EX | LOCK_NB) on an open target; fails
/// with EWOULDBLOCK (IsBusy) when another program holds it.
Status LockExclusive(const Target& target);

/// True for OpenForTableWrite's "in use" and "locked" errors: a refusal, not a failure.
bool IsBusy(const Error& error);

/// How long a lock or an exclusive open waits for a holder that is going away: a process killed
/// with I/O in flight keeps its files open until that I/O completes (io_uring requests hold a
/// reference), which takes milliseconds. A live holder is reported after this.
inline constexpr int kBusyWaitMilliseconds = 5000;

/// Calls `attempt` until it succeeds, fails with something other than EBUSY/EWOULDBLOCK, or
/// kBusyWaitMilliseconds have passed.
Status RetryWhileBusy(const std::function<Status()>& attempt);

/// The same for an attempt that makes something (an exclusive open): its last result.
template <typename T>
Result<T> RetryWhileBusy(const std::function<Result<T>()>& attempt) {
  std::optional<Result<T>> result;
  (void)RetryWhileBusy(std::function<Status()>([&]() -> Status {
    result.emplace(attempt());
    return *result ? Status{} : Status(result->error());
  }));
  return std::move(*result);
}

}  // namespace partalign
