// SPDX-License-Identifier: GPL-3.0-or-later
// What the boot domain reports (docs/boot-records.md): every record outside the partition table
// that names a partition's place - a boot sector's hidden sectors, exFAT's PartitionOffset,
// GRUB's sector pointers, Windows' BCD and MountedDevices, LDM, a BSD disklabel - with its
// verdict (update, refuse, nothing to do) and, for an update, the bytes to change.
//
// A byte edit names the partition its bytes belong to and an offset relative to that
// partition's start, so that it can be applied at the partition's new place after the data has
// moved (the bytes are moved with it), journaled (old and new bytes: redo and undo) and backed
// up. Partition 0 is the disk itself (the MBR: offsets are absolute). Each edit is at most one
// sector.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace partalign {

enum class BootRecordKind {
  kNtfsBootSector,     ///< NTFS hidden sectors (0x1C), primary and backup boot sector
  kFatBootSector,      ///< FAT12/16/32 BPB_HiddSec (0x1C); FAT32's backup at BPB_BkBootSec
  kExfatBootRegion,    ///< exFAT PartitionOffset (64), main and backup boot region
  kSyslinuxVbr,        ///< a SYSLINUX/EXTLINUX volume boot record on a non-FAT volume
  kGrubBootImage,      ///< GRUB 2's boot.img: core.img's first sector (u64 at 0x5C)
  kGrubCoreImage,      ///< GRUB 2's core.img: diskboot's blocklist of absolute sectors
  kBiosBootPartition,  ///< a GPT BIOS boot partition (GRUB's core.img)
  kWindowsBcd,         ///< a device element of the Windows BCD store
  kMountedDevices,     ///< a value of HKLM\SYSTEM\MountedDevices
  kLdm,                ///< Windows dynamic disk (LDM): refused
  kBsdDisklabel,       ///< a BSD disklabel inside a DOS slice (absolute p_offset)
  kDiskIdentity,       ///< the MBR disk signature / GPT GUIDs other records name
};

std::string_view ToString(BootRecordKind kind);

enum class BootVerdict {
  kNothingToDo,  ///< the record is right (or does not depend on the partition's place)
  kUpdate,       ///< the edits make it right
  kRefuse,       ///< the move (or the fix) must not happen; `reason` says why
};

std::string_view ToString(BootVerdict verdict);

/// Bytes to change. `partition` is the partition the bytes belong to (0 = outside every
/// partition: `offset_bytes` is then absolute), `offset_bytes` relative to that partition's
/// start. `old_bytes` must be there before the write (checked), `new_bytes` replace them
/// (same length, at most one sector).
struct ByteEdit {
  uint32_t partition = 0;
  uint64_t offset_bytes = 0;
  std::vector<uint8_t> old_bytes;
  std::vector<uint8_t> new_bytes;
  /// The partition whose move makes the edit (apply writes it in that partition's journaled
  /// step); 0 for a record fixed where it stands (no move).
  uint32_t cause = 0;
  bool operator==(const ByteEdit&) const = default;
};

struct BootFinding {
  /// The partition the record belongs to (0 = the disk itself: MBR, embedding area, LDM).
  uint32_t partition = 0;
  BootRecordKind kind = BootRecordKind::kNtfsBootSector;
  /// One line: "NTFS boot sector: hidden sectors 63 -> 2048, primary and backup".
  std::string description;
  BootVerdict verdict = BootVerdict::kNothingToDo;
  /// kRefuse: why, one line, with the repair when there is one. Otherwise a warning or empty.
  std::string reason;
  /// A command the user must run after apply (GRUB reinstalled with
  /// --allow-reinstall-bootloader); empty for none.
  std::string follow_up;
  std::vector<ByteEdit> edits;  ///< kUpdate only
  bool operator==(const BootFinding&) const = default;
};

struct BootReport {
  std::vector<BootFinding> findings;

  /// True when a finding refuses.
  bool refused() const;
  /// The refusing findings' reasons, one line each.
  std::vector<std::string> RefusalReasons() const;
  /// Every edit of every kUpdate finding, in finding order.
  std::vector<ByteEdit> Edits() const;
  /// The edits whose bytes belong to `partition` (0: those at absolute offsets).
  std::vector<ByteEdit> EditsFor(uint32_t partition) const;
  bool operator==(const BootReport&) const = default;
};

/// The report as lines for plan, audit and report: "partition 2: NTFS boot sector: hidden
/// sectors 63 -> 2048, primary and backup", a refusal as "... : apply refuses: REASON", and the
/// warnings and commands to run afterwards. Findings with nothing to do and nothing to say are
/// left out.
std::vector<std::string> BootReportLines(const BootReport& report);

/// The absolute byte offset of `edit` when its partition starts at `partition_start_bytes`
/// (ignored for partition 0); nullopt when the sum passes 2^64.
std::optional<uint64_t> AbsoluteOffset(const ByteEdit& edit, uint64_t partition_start_bytes);

}  // namespace partalign
