// SPDX-License-Identifier: GPL-3.0-or-later
// What partalign knows about a target besides its topology: identity (where it is attached,
// what it is) and the partition table found on it. Plain values, filled in by src/io.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "partalign/topology/topology.h"

namespace partalign {

/// How the disk is attached. Determined from the sysfs device path (see docs/architecture.md).
enum class Transport { kUnknown, kFile, kLoop, kUsb, kSata, kScsi, kNvme, kVirtio, kMmc };

std::string_view ToString(Transport transport);

/// The USB-to-SATA (or NVMe) bridge a disk sits behind: the nearest USB device in sysfs.
struct UsbBridge {
  std::string vendor_id;   ///< idVendor, four hex digits ("152d" = JMicron)
  std::string product_id;  ///< idProduct ("0578")
  std::string manufacturer;
  std::string product;
  std::string driver;  ///< "uas" or "usb-storage" (BOT), when known
  bool operator==(const UsbBridge&) const = default;
};

struct Identity {
  std::string path;  ///< as given on the command line
  bool is_block_device = false;
  bool is_partition = false;
  std::string kernel_name;  ///< "sda1", "loop0"; empty for image files
  std::string disk_name;    ///< the whole disk ("sda") of a partition, else kernel_name
  uint32_t major = 0;
  uint32_t minor = 0;
  Transport transport = Transport::kUnknown;
  std::string vendor;
  std::string model;
  std::string serial;
  std::string wwn;
  std::optional<UsbBridge> usb_bridge;
  std::optional<bool> rotational;
  std::optional<uint64_t> discard_granularity;
  std::string backing_file;  ///< loop devices: the file behind them
  /// The raw sysfs alignment_offset; -1 means "misaligned stack", which libblkid reports as 0.
  std::optional<int64_t> sysfs_alignment_offset;
  /// Partition devices: where the partition starts on its disk, in bytes.
  std::optional<uint64_t> partition_start_bytes;
  bool operator==(const Identity&) const = default;
};

enum class LabelType { kNone, kDos, kGpt, kOther };

std::string_view ToString(LabelType label);
/// The inverse of ToString(LabelType): "none", "dos", "gpt", "other".
std::optional<LabelType> LabelTypeFromString(std::string_view text);

/// The partition table found at the start of the target.
struct TableInfo {
  LabelType label = LabelType::kNone;
  std::string label_name;  ///< libblkid's name ("gpt", "dos", "sun", ...); empty if none
  /// The logical sector size the table was written for, when the on-disk bytes say so. It
  /// differs from the device's logical sector size after a move between a 4K-translating USB
  /// bridge and a SATA port (alignment-heuristics.md §1.3).
  std::optional<uint64_t> written_for_sector_size;
  /// How written_for_sector_size was decided, one sentence.
  std::string written_for_reason;
  bool operator==(const TableInfo&) const = default;
};

/// Everything `probe` reports about one target.
struct DeviceInfo {
  Topology topology;
  Identity identity;
  TableInfo table;
};

}  // namespace partalign
