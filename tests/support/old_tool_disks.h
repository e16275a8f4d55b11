// SPDX-License-Identifier: GPL-3.0-or-later
// Disks laid out as the old tools wrote them, byte for byte (issue 38): Windows XP's Disk
// Management, and the Linux fdisk of before util-linux 2.17.1 in its DOS-compatible mode (the
// default then). Both count in cylinders of 255 heads x 63 sectors: the first partition starts
// at sector 63 (cylinder 0, head 1), every other partition and every EBR on a cylinder
// boundary, every logical partition one track (63 sectors) after its EBR, every partition ends
// on the last sector of a cylinder, the extended partition runs to the disk's last whole
// cylinder (XP: type 0x0f, old fdisk: 0x05; the links between EBRs are 0x05), and the CHS
// fields say the same as the LBA fields (cylinders past 1023 as 1023/254/63). The MBR's boot
// code is a stand-in (partalign's tests carry no Microsoft code): 440 bytes a test checks are
// kept. Then each partition gets its filesystem as the real tool makes it (mkntfs and
// mkfs.vfat told the partition's start and geometry, mkfs.ext4, mkswap) and files.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace partalign::test {

inline constexpr uint64_t kOldHeads = 255;
inline constexpr uint64_t kOldTrackSectors = 63;
inline constexpr uint64_t kCylinderSectors = kOldHeads * kOldTrackSectors;  // 16065

enum class OldTool { kWindowsXp, kOldFdisk };

struct OldPartition {
  std::string fs;          ///< "ntfs", "vfat" (FAT32), "ext4", "swap"
  uint64_t cylinders = 0;  ///< 0 for the last partition: up to the last whole cylinder
  bool bootable = false;
};

struct OldLayout {
  OldTool tool = OldTool::kWindowsXp;
  uint64_t disk_bytes = 0;  ///< 512-byte sectors
  std::vector<OldPartition> primaries;
  /// In an extended partition after the primaries (number primaries + 1), numbered from 5.
  std::vector<OldPartition> logicals;
};

/// One entry of the table the layout makes: a partition (the extended one included) and, for
/// a logical partition, its EBR.
struct OldPlace {
  uint32_t number = 0;
  uint64_t start = 0;  ///< sectors
  uint64_t size = 0;
  uint8_t type = 0;
  std::string fs;  ///< empty for the extended partition
  bool bootable = false;
  std::optional<uint64_t> ebr;  ///< logical partitions: the sector of their EBR
  uint64_t end() const { return start + size - 1; }
};

/// Every partition of `layout`, in number order.
std::vector<OldPlace> OldPlaces(const OldLayout& layout);

/// The disk of issue 38: 2 GiB as Windows XP laid it out: NTFS (bootable) at 63, an extended
/// partition (0x0f) to the last whole cylinder with ext4, FAT32 and swap logical partitions,
/// 1339 sectors free at the end.
OldLayout XpDiskOfIssue38();
/// A 2 GiB disk whose only partition is an NTFS filling it to the last whole cylinder (XP).
OldLayout XpSingleNtfs();
/// A 2 GiB disk as the old Linux fdisk laid it out in DOS-compatible mode: ext4 (bootable) at
/// 63, an extended partition (0x05) to the last whole cylinder with NTFS, FAT32 and swap.
OldLayout OldFdiskDisk();

/// Writes `layout`'s MBR and EBRs into `image` (a file of at least layout.disk_bytes) byte for
/// byte, the MBR's boot code the stand-in, `disk_id` its disk signature. Throws on failure.
void WriteOldToolTable(const OldLayout& layout, const std::string& image, uint32_t disk_id);

/// Files per partition number (name -> contents), to read back after the disk changed.
using OldFiles = std::map<uint32_t, std::map<std::string, std::string>>;

/// Writes `layout`'s table into `image` (a sparse file of the disk's size, made here) byte for
/// byte, makes each filesystem through a loop device (attached and detached here) and fills it
/// with files (`seed`: their bytes); returns them. The last file of each filesystem is the
/// largest, written last, so that data reaches far into the partition. Throws on failure.
OldFiles BuildOldToolImage(const OldLayout& layout, const std::string& image, uint64_t seed);

/// The MBR's boot-code stand-in (bytes 0-439 of sector 0 of an image BuildOldToolImage made).
std::string OldBootCode();

}  // namespace partalign::test
