// SPDX-License-Identifier: GPL-3.0-or-later
// Windows' records of where its partitions are, on an MBR disk: device elements of the BCD
// store (\Boot\BCD, \EFI\Microsoft\Boot\BCD) and the values of HKLM\SYSTEM\MountedDevices
// (\Windows\System32\config\SYSTEM) name a partition by the disk's MBR signature and the
// partition's byte offset. Both files are registry hives. The I/O edge reads them through
// libntfs-3g and libhivex (src/io/boot/windows_stores.h) into `WindowsStore` values; this
// decides, purely, what a set of moves does to them and which bytes of the disk to change.
//
// Why an in-place edit of a value's bytes is valid in a hive: the hive's only checksum covers
// its base block (the XOR of the first 508 bytes of the file), which an edit of a value does
// not touch; cells and hbins carry none. A hive whose base block's two sequence numbers differ
// was not cleanly written (its log would be replayed over the edit): refused.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "partalign/boot/boot_disk.h"
#include "partalign/boot/boot_record.h"
#include "partalign/label/disk_reader.h"

namespace partalign {

/// A BCD device element's reference to an MBR partition: the partition's byte offset and the
/// disk's signature, and where the offset sits in the element's data. Layout (BCD device
/// data, reverse-engineered: mistyprojects' BCDEdit notes, "Devices Partition - Data"): a
/// 16-byte GUID, then at 0x10 the device type (6 = partition), at 0x18 the length 0x48, at
/// 0x20 the partition's byte offset (u64), at 0x34 the partition style (1 = MBR), at 0x38 the
/// disk signature. The same 0x48-byte block appears nested in ramdisk and VHD devices.
struct BcdPartitionRef {
  uint64_t offset_field = 0;  ///< where the u64 byte offset sits in the element's data
  uint64_t partition_offset_bytes = 0;
  uint32_t disk_signature = 0;
  bool operator==(const BcdPartitionRef&) const = default;
};

/// Every MBR partition reference in a device element's data.
std::vector<BcdPartitionRef> FindBcdPartitionRefs(std::span<const uint8_t> element);

/// True when the BCD element type (the key name under Elements, "11000001") is a device
/// element: its format (bits 24-27) is 1.
bool IsBcdDeviceElement(uint32_t element_type);

/// A MountedDevices value naming an MBR partition: exactly 12 bytes, the disk signature (u32)
/// and the partition's byte offset (u64, at 4). GPT values ("DMIO:ID:" + GUID) are not.
struct MountedDeviceRef {
  uint32_t disk_signature = 0;
  uint64_t partition_offset_bytes = 0;
  bool operator==(const MountedDeviceRef&) const = default;
};

std::optional<MountedDeviceRef> ParseMountedDevice(std::span<const uint8_t> value);

/// Offset of the byte offset in a MountedDevices value.
inline constexpr uint64_t kMountedDeviceOffsetField = 4;

/// A registry hive's base block (the first 4096 bytes of the file): "regf", the two sequence
/// numbers (equal when the hive was written cleanly) and whether the checksum at 0x1FC (XOR of
/// the 127 dwords before it) holds.
struct HiveBaseBlock {
  uint32_t primary_sequence = 0;
  uint32_t secondary_sequence = 0;
  bool checksum_ok = false;
  bool operator==(const HiveBaseBlock&) const = default;
};

std::optional<HiveBaseBlock> ParseHiveBaseBlock(std::span<const uint8_t> bytes);

/// A run of a file's bytes and where they are in its partition (nullopt: a hole).
struct FileExtent {
  uint64_t file_offset = 0;
  uint64_t length = 0;
  std::optional<uint64_t> partition_offset;
  bool operator==(const FileExtent&) const = default;
};

/// A registry value as the hive gives it, with where its data sits in the hive file.
struct HiveValue {
  /// "Objects\{9dea862c-...}\Elements\11000001\Element", "MountedDevices\\DosDevices\C:".
  std::string path;
  uint32_t element_type = 0;  ///< BCD: the element's type from its key name; 0 otherwise
  std::vector<uint8_t> data;
  /// The data's first byte in the hive file; nullopt when it has no place of its own (data of
  /// 4 bytes or less is kept in the value's record; big data is split).
  std::optional<uint64_t> data_file_offset;
  bool operator==(const HiveValue&) const = default;
};

/// A hive file found in an NTFS partition.
struct WindowsStore {
  uint32_t partition = 0;                             ///< the partition holding the file
  std::string file_path;                              ///< "\Boot\BCD"
  BootRecordKind kind = BootRecordKind::kWindowsBcd;  ///< kWindowsBcd or kMountedDevices
  /// Non-empty when the file's bytes cannot be located on the disk: "compressed", "resident
  /// in the MFT", "sparse", "encrypted", or a hive libhivex cannot read.
  std::string unlocatable;
  HiveBaseBlock base;
  uint64_t file_size = 0;
  std::vector<FileExtent> extents;
  std::vector<HiveValue> values;  ///< the device elements / MountedDevices values
  bool operator==(const WindowsStore&) const = default;
};

/// What `moves` do to the stores' values on the MBR disk `table`: an edit of each value
/// naming (the disk's signature, the old byte offset of a moved partition) - 8 bytes at the
/// disk position the file's extents give, checked against the disk's bytes - or a refusal with
/// the repair to run from Windows recovery when the bytes cannot be located that way. With no
/// moves, values naming an offset where no partition starts are reported (stale). On GPT,
/// one finding per store: partitions are named by GUID, nothing to change.
std::vector<BootFinding> WindowsStoreFindings(const DiskReader& disk, const BootDisk& table,
                                              std::span<const PartitionMove> moves,
                                              std::span<const WindowsStore> stores);

}  // namespace partalign
