// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/stack/md_superblock.h"

#include <algorithm>

#include <fmt/format.h>

#include "partalign/util/byte_order.h"
#include "partalign/util/checked_math.h"

namespace partalign {
namespace {

constexpr uint64_t kMdSectorBytes = 512;
constexpr uint32_t kMdMagic = 0xa92b4efc;  // MD_SB_MAGIC
// struct mdp_superblock_1 offsets.
constexpr size_t kMajorVersion = 4;
constexpr size_t kSetName = 32;
constexpr size_t kSetNameBytes = 32;
constexpr size_t kLevel = 72;
constexpr size_t kLayout = 76;
constexpr size_t kChunkSize = 88;
constexpr size_t kRaidDisks = 92;
constexpr size_t kDataOffset = 128;
constexpr size_t kDataSize = 136;
constexpr size_t kMdSuperOffset = 144;
constexpr size_t kDevNumber = 160;
constexpr size_t kChecksum = 216;
constexpr size_t kMaxDev = 220;
constexpr size_t kRoles = 256;
// The kernel refuses more roles than fit in 4 KiB (super_1_load: max_dev > (4096-256)/2).
constexpr uint32_t kMaxRoles = (4096 - 256) / 2;
constexpr uint16_t kRoleSpare = 0xffff;
constexpr uint16_t kRoleFaulty = 0xfffe;
constexpr int32_t kLevelLinear = -1;

}  // namespace

std::string_view ToString(MdSuperblockVersion version) {
  switch (version) {
    case MdSuperblockVersion::k1_0:
      return "1.0";
    case MdSuperblockVersion::k1_1:
      return "1.1";
    case MdSuperblockVersion::k1_2:
      return "1.2";
  }
  return "";
}

std::optional<uint64_t> MdSuperblockOffset(MdSuperblockVersion version,
                                           uint64_t device_size_bytes) {
  switch (version) {
    case MdSuperblockVersion::k1_1:
      return device_size_bytes >= kMdSuperblockReadBytes ? std::optional<uint64_t>(0)
                                                         : std::nullopt;
    case MdSuperblockVersion::k1_2:
      return device_size_bytes >= 2 * kMdSuperblockReadBytes ? std::optional<uint64_t>(4096)
                                                             : std::nullopt;
    case MdSuperblockVersion::k1_0: {
      // super1.c: sb_offset = (dsize - 16 sectors) & ~(8 sectors - 1).
      const uint64_t sectors = device_size_bytes / kMdSectorBytes;
      if (sectors < 32) return std::nullopt;
      return ((sectors - 16) & ~uint64_t{7}) * kMdSectorBytes;
    }
  }
  return std::nullopt;
}

uint32_t MdSuperblockChecksum(std::span<const uint8_t> bytes, uint32_t max_dev) {
  const size_t size = kRoles + 2 * static_cast<size_t>(max_dev);
  uint64_t sum = 0;
  size_t at = 0;
  for (; at + 4 <= size && at + 4 <= bytes.size(); at += 4) {
    if (at == kChecksum) continue;  // sb_csum counts as 0
    sum += *Le<uint32_t>(bytes, at);
  }
  if (size - at == 2) sum += Le<uint16_t>(bytes, at).value_or(0);
  return static_cast<uint32_t>((sum & 0xffffffffu) + (sum >> 32));
}

uint32_t MdSuperblock::data_disks() const {
  switch (level) {
    case 0:
      return raid_disks;
    case 4:
    case 5:
      return raid_disks > 1 ? raid_disks - 1 : 1;
    case 6:
      return raid_disks > 2 ? raid_disks - 2 : 1;
    case 10: {
      // layout: near copies in bits 0-7, far copies in bits 8-15 (md_p.h, raid10.c).
      const uint32_t copies = std::max<uint32_t>(1, (layout & 0xff) * ((layout >> 8) & 0xff));
      return std::max<uint32_t>(1, raid_disks / copies);
    }
    default:
      return 1;
  }
}

bool MdSuperblock::striped() const {
  return level == 0 || level == 4 || level == 5 || level == 6 || level == 10;
}

std::string MdSuperblock::level_name() const {
  if (level == kLevelLinear) return "linear";
  if (level == -4) return "multipath";
  if (level == -5) return "faulty";
  return fmt::format("raid{}", level);
}

Result<MdSuperblock> ParseMdSuperblock(std::span<const uint8_t> bytes, MdSuperblockVersion version,
                                       uint64_t at_offset_bytes, uint64_t device_size_bytes) {
  const std::string where =
      fmt::format("MD superblock {} at byte {}", ToString(version), at_offset_bytes);
  if (Le<uint32_t>(bytes, 0) != kMdMagic) return MakeError(where + ": no MD magic");
  if (Le<uint32_t>(bytes, kMajorVersion) != 1u) {
    return MakeError(where + ": not a version-1 superblock");
  }
  std::optional<uint32_t> max_dev = Le<uint32_t>(bytes, kMaxDev);
  if (!max_dev || *max_dev > kMaxRoles || bytes.size() < kRoles + 2ull * *max_dev) {
    return MakeError(where + ": its role table is larger than a superblock can be");
  }
  if (Le<uint32_t>(bytes, kChecksum) != MdSuperblockChecksum(bytes, *max_dev)) {
    return MakeError(where + ": checksum mismatch");
  }
  MdSuperblock sb;
  sb.version = version;
  const auto* name = reinterpret_cast<const char*>(bytes.data() + kSetName);
  size_t name_length = 0;
  while (name_length < kSetNameBytes && name[name_length] != '\0') ++name_length;
  sb.array_name.assign(name, name_length);
  sb.level = static_cast<int32_t>(*Le<uint32_t>(bytes, kLevel));
  sb.layout = *Le<uint32_t>(bytes, kLayout);
  sb.raid_disks = *Le<uint32_t>(bytes, kRaidDisks);
  const uint64_t chunk_sectors = *Le<uint32_t>(bytes, kChunkSize);
  sb.chunk_bytes = chunk_sectors * kMdSectorBytes;  // a u32 times 512 fits in 64 bits
  std::optional<uint64_t> data_offset =
      CheckedMul(*Le<uint64_t>(bytes, kDataOffset), kMdSectorBytes);
  std::optional<uint64_t> data_size = CheckedMul(*Le<uint64_t>(bytes, kDataSize), kMdSectorBytes);
  std::optional<uint64_t> super_offset =
      CheckedMul(*Le<uint64_t>(bytes, kMdSuperOffset), kMdSectorBytes);
  if (!data_offset || !data_size || !super_offset) {
    return MakeError(where + ": an offset or size overflows");
  }
  sb.data_offset_bytes = *data_offset;
  sb.data_size_bytes = *data_size;
  sb.super_offset_bytes = *super_offset;
  if (sb.super_offset_bytes != at_offset_bytes) {
    return MakeError(where + fmt::format(": it says it lies at byte {}", sb.super_offset_bytes));
  }
  std::optional<uint64_t> data_end = CheckedAdd(sb.data_offset_bytes, sb.data_size_bytes);
  if (!data_end || *data_end > device_size_bytes) {
    return MakeError(where + fmt::format(": data area {}+{} bytes lies past the member's end {}",
                                         sb.data_offset_bytes, sb.data_size_bytes,
                                         device_size_bytes));
  }
  if (sb.raid_disks == 0) return MakeError(where + ": the array has 0 devices");
  if (sb.striped() && sb.chunk_bytes == 0) {
    return MakeError(where + fmt::format(": {} with a chunk size of 0", sb.level_name()));
  }
  const uint32_t dev_number = *Le<uint32_t>(bytes, kDevNumber);
  if (dev_number < *max_dev) {
    const uint16_t role = *Le<uint16_t>(bytes, kRoles + 2 * dev_number);
    if (role != kRoleSpare && role != kRoleFaulty) sb.role = role;
  }
  return sb;
}

}  // namespace partalign
