// SPDX-License-Identifier: GPL-3.0-or-later
// What the boot tests do to a disk in place of apply (tests/io/boot/): move a partition's bytes
// as the mover would, rewrite its table entry with the real sfdisk (everything else kept), read
// the table as the boot domain's values with sfdisk as the oracle, and run the boot domain on
// it. Image files and devices alike.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "partalign/boot/boot_disk.h"
#include "partalign/boot/boot_record.h"

namespace partalign::test {

/// Copies `count` sectors at `old_start` to `new_start` of `target`, in the direction that
/// never overwrites a sector before it is copied (as the mover does). `wipe_old`: the old
/// sectors the new place does not cover are zeroed afterwards (space a later tool reuses).
void MoveSectors(const std::string& target, unsigned sector_size, uint64_t old_start,
                 uint64_t new_start, uint64_t count, bool wipe_old = false);

/// Rewrites partition `number`'s start and size in `target`'s table with the real sfdisk:
/// `sfdisk -d`, that one line edited, written back (label-id, types, GUIDs, flags kept).
void RewritePartition(const std::string& target, uint32_t number, uint64_t new_start,
                      uint64_t new_size);

/// `target`'s table as the boot domain's values, read by `sfdisk -J`.
BootDisk BootDiskBySfdisk(const std::string& target, unsigned sector_size);

/// The boot domain's report for `target` (the I/O edge's ScanBootRecords); throws on an error.
BootReport ScanBoot(const std::string& target, const BootDisk& table,
                    const std::vector<PartitionMove>& moves, bool allow_reinstall = false);

/// Writes the report's edits on `target`, each partition's at `starts` (sectors, where its
/// bytes are now); throws when the I/O edge refuses them.
void ApplyBootEdits(const std::string& target, unsigned sector_size, const BootReport& report,
                    const std::map<uint32_t, uint64_t>& starts);

/// The report as lines "partition kind verdict: description [reason]", for failure messages.
std::string DescribeReport(const BootReport& report);

/// A filesystem mounted through its FUSE driver (`mount.exfat-fuse`, `ntfs-3g`: this kernel has
/// no exFAT or NTFS driver) for the duration of a test; unmounted by the destructor, also when
/// the test fails.
class FuseMount {
 public:
  /// Runs `helper DEVICE DIRECTORY`; throws (failing the test) on error.
  FuseMount(const std::string& helper, const std::string& device, const std::string& directory);
  ~FuseMount();
  FuseMount(const FuseMount&) = delete;
  FuseMount& operator=(const FuseMount&) = delete;
  const std::string& path() const { return directory_; }

 private:
  std::string directory_;
};

/// `count` bytes of `target` at `offset`.
std::vector<uint8_t> ReadBytes(const std::string& target, uint64_t offset, uint64_t count);

/// The bytes that differ between `a` and `b` (same length), as [first, last] runs.
std::vector<std::pair<uint64_t, uint64_t>> DifferingRuns(const std::vector<uint8_t>& a,
                                                         const std::vector<uint8_t>& b);

}  // namespace partalign::test
