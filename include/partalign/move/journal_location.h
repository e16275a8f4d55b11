// SPDX-License-Identifier: GPL-3.0-or-later
// Where a move journal may live (docs/mover.md, "Where the journal may live"). The rule: the
// journal's file system must not be stored, at any depth, on the bytes the move changes, and it
// must survive a power failure. The I/O edge describes both sides as chains of storage (block
// devices and, through loop devices, files); this decides.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partalign/util/byte_extent.h"

namespace partalign {

/// One piece of storage: a block device (whole disks and partitions alike) or a file (the
/// backing file of a loop device, or an image file being moved).
struct StorageNode {
  enum class Kind { kBlockDevice, kFile };
  Kind kind = Kind::kBlockDevice;
  /// Block device: major and minor. File: st_dev and st_ino.
  uint64_t first = 0;
  uint64_t second = 0;
  std::string name;  ///< for messages: "/dev/sdb2", "/srv/disk.img"
  /// A partition: its number and its bytes on the disk that follows it in the chain (0: not
  /// a partition).
  uint32_t partition = 0;
  ByteExtent extent;
  bool SameAs(const StorageNode& other) const {
    return kind == other.kind && first == other.first && second == other.second;
  }
};

/// What lies under the directory chosen for the journal.
struct JournalPlacement {
  std::string directory;
  std::string fs_type;  ///< "ext4", "tmpfs", ...
  /// tmpfs, ramfs: gone after a power failure, while the disk keeps the half-moved data.
  bool volatile_fs = false;
  /// False when the file system's storage cannot be traced to block devices (overlay, FUSE):
  /// then nobody can say it is not on the disk being changed.
  bool storage_known = true;
  /// Remote file systems (NFS, CIFS, ...) are on no local disk; storage is then empty.
  bool remote = false;
  /// Everything the file system is stored on: its device, the disk of a partition, the lower
  /// devices of device-mapper/md, the backing file of a loop device and what stores that file.
  std::vector<StorageNode> storage;
};

/// The storage the move writes: the disk (and the lower devices it is built on), and for a loop
/// device or an image file, the file itself - but not the file system that holds that file,
/// which the move never writes.
struct TargetStorage {
  std::string path;
  std::vector<StorageNode> nodes;
  /// The bytes of the disk (the first node) the move writes: its source and destination and
  /// the table sectors. Empty: any byte (then no journal may lie anywhere on the disk).
  std::vector<ByteExtent> written;
};

/// Why the journal may not be placed there, or nullopt when it may. A journal stored on the
/// disk being changed is allowed only through a partition of it whose bytes the move does not
/// write (`target.written`): the move never reads or writes that partition, as it never
/// touches another disk (issue #29: one-disk machines).
std::optional<std::string> JournalPlacementProblem(const JournalPlacement& journal,
                                                   const TargetStorage& target);

/// When the journal is allowed on the disk being changed (on a partition the move does not
/// write): the line that says so and what it costs; nullopt otherwise.
std::optional<std::string> JournalPlacementNote(const JournalPlacement& journal,
                                                const TargetStorage& target);

}  // namespace partalign
