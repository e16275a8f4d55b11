// SPDX-License-Identifier: GPL-3.0-or-later
// Linux MD (software RAID) version-1 superblocks, parsed from bytes read elsewhere: where the
// array's data starts on this member (data_offset), the chunk size, the level, the number of
// devices and this member's role. Layout restated from the kernel's
// include/uapi/linux/raid/md_p.h (struct mdp_superblock_1) and mdadm super1.c
// (calc_sb_1_csum, the three superblock positions); all fields little-endian. Untrusted input:
// the checksum is verified and every size bounded.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "partalign/util/result.h"

namespace partalign {

/// The superblock's fixed part; the dev_roles array (2 bytes per device) follows it.
inline constexpr uint64_t kMdSuperblockFixedBytes = 256;
/// Bytes to read at a candidate position: the fixed part and up to 1920 roles (mdadm writes
/// at most 384; the kernel accepts a superblock of up to 4 KiB).
inline constexpr uint64_t kMdSuperblockReadBytes = 4096;

/// The three version-1 placements (mdadm super1.c).
enum class MdSuperblockVersion {
  k1_0,  ///< at the end: (size - 8 KiB) rounded down to 4 KiB
  k1_1,  ///< at byte 0
  k1_2,  ///< at byte 4096
};

std::string_view ToString(MdSuperblockVersion version);  ///< "1.0", "1.1", "1.2"

/// Where the superblock of `version` lies on a member of `device_size_bytes` bytes, or nullopt
/// when the member is too small to hold one.
std::optional<uint64_t> MdSuperblockOffset(MdSuperblockVersion version, uint64_t device_size_bytes);

struct MdSuperblock {
  MdSuperblockVersion version = MdSuperblockVersion::k1_2;
  std::string array_name;  ///< set_name ("host:0")
  int32_t level = 0;       ///< 0, 1, 4, 5, 6, 10; -1 linear; -4 multipath
  uint32_t layout = 0;
  uint64_t chunk_bytes = 0;  ///< 0 for levels without chunks (1, linear)
  uint32_t raid_disks = 0;
  uint64_t data_offset_bytes = 0;  ///< from the member's start
  uint64_t data_size_bytes = 0;
  uint64_t super_offset_bytes = 0;
  /// This member's slot (dev_roles[dev_number]); nullopt for a spare or a faulty member.
  std::optional<uint32_t> role;

  /// How many members hold data of one stripe: raid0 all, raid4/5 one less, raid6 two less,
  /// raid10 raid_disks / near copies; 1 for raid1 and linear.
  uint32_t data_disks() const;
  /// True for the levels that stripe data in chunks (0, 4, 5, 6, 10).
  bool striped() const;
  /// "raid5", "raid1", "linear", ...
  std::string level_name() const;
};

/// Parses the superblock at the start of `bytes` (read at `at_offset_bytes` of a member of
/// `device_size_bytes`), expecting the placement `version`. Checks the magic, major version
/// 1, super_offset equal to where it was read, the checksum, a non-zero chunk size for striped
/// levels and that the data area lies inside the member. Judging the chunk is the checks' job.
Result<MdSuperblock> ParseMdSuperblock(std::span<const uint8_t> bytes, MdSuperblockVersion version,
                                       uint64_t at_offset_bytes, uint64_t device_size_bytes);

/// mdadm's calc_sb_1_csum() over a superblock whose sb_csum field reads as `bytes` has it
/// (the field itself counts as 0); `bytes` must cover the fixed part and the roles.
uint32_t MdSuperblockChecksum(std::span<const uint8_t> bytes, uint32_t max_dev);

}  // namespace partalign
