// SPDX-License-Identifier: GPL-3.0-or-later
// The one place that finds every record naming a partition's place on a disk and says what a
// set of moves does to each (docs/boot-records.md). Pure: the disk is read through `DiskReader`,
// the table and the moves are values, the result is a report of findings with their byte
// edits. Windows' BCD and MountedDevices live inside NTFS files and are found by the I/O edge
// (src/io/boot/windows_stores.h), which adds its findings to the same report.
#pragma once

#include <span>
#include <string>

#include "partalign/boot/boot_disk.h"
#include "partalign/boot/boot_record.h"
#include "partalign/label/disk_reader.h"
#include "partalign/util/result.h"

namespace partalign {

struct BootScanOptions {
  /// `--allow-reinstall-bootloader`: a GRUB whose core.img is a file inside a moving
  /// filesystem (blocklists) does not refuse the move; the finding names the command to run
  /// afterwards instead.
  bool allow_reinstall_bootloader = false;
  /// The block device the disk is ("/dev/sdb"), set by the I/O edge: the commands a finding
  /// names (grub-install) name it and its partitions' nodes. Empty (an image file): they say
  /// DISK and PARTITION.
  std::string disk_device;
};

/// Finds the records on `disk` (its partitions' bytes where `table` says they are now) and
/// what `moves` do to them. With no moves, reports the records that are already stale (a disk
/// cloned by another tool: hidden sectors != start) with the edits that fix them in place.
/// An error only when `table` or `moves` are inconsistent (a move of a partition the table does
/// not have, a start that wraps); unreadable or damaged records are findings.
Result<BootReport> FindBootRecords(const DiskReader& disk, const BootDisk& table,
                                   std::span<const PartitionMove> moves,
                                   const BootScanOptions& options = {});

}  // namespace partalign
