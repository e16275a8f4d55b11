// SPDX-License-Identifier: GPL-3.0-or-later
// Writes an MD version-1 superblock (struct mdp_superblock_1, include/uapi/linux/raid/md_p.h)
// the way mdadm --create would, for tests: this machine's kernel has no md driver, so mdadm
// cannot create arrays, but `mdadm --examine` reads (and checks the checksum of) a superblock
// written by other means (environment.md). Header-only so that the unit tests can use it too;
// the checksum is computed here independently of partalign's parser.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace partalign::test {

struct MdMemberSpec {
  std::string version = "1.2";  ///< "1.0", "1.1" or "1.2": where the superblock goes
  int32_t level = 5;
  uint32_t layout = 2;  ///< raid5 left-symmetric (mdadm's default)
  uint32_t chunk_bytes = 64 * 1024;
  uint32_t raid_disks = 3;
  uint32_t role = 0;  ///< this member's slot
  uint64_t data_offset_bytes = 1024 * 1024;
  uint64_t member_size_bytes = 64ull * 1024 * 1024;
  std::string name = "test:0";
};

/// Where the superblock of `spec` lies on its member (mdadm super1.c).
inline uint64_t MdSuperblockPosition(const MdMemberSpec& spec) {
  if (spec.version == "1.1") return 0;
  if (spec.version == "1.2") return 4096;
  return ((spec.member_size_bytes / 512 - 16) & ~uint64_t{7}) * 512;
}

/// The 4096 bytes to write at MdSuperblockPosition(spec).
inline std::vector<uint8_t> MakeMdSuperblock(const MdMemberSpec& spec) {
  std::vector<uint8_t> sb(4096, 0);
  auto put32 = [&](size_t at, uint32_t v) { std::memcpy(sb.data() + at, &v, 4); };
  auto put64 = [&](size_t at, uint64_t v) { std::memcpy(sb.data() + at, &v, 8); };
  const uint32_t max_dev = 384;  // what mdadm reserves (super1.c: 384 roles)
  put32(0, 0xa92b4efc);          // magic
  put32(4, 1);                   // major_version
  for (int i = 0; i < 16; ++i) sb[16 + i] = static_cast<uint8_t>(0x11 * (i + 1));  // set_uuid
  std::memcpy(sb.data() + 32, spec.name.data(), std::min<size_t>(spec.name.size(), 32));
  put64(64, 1700000000);  // ctime
  put32(72, static_cast<uint32_t>(spec.level));
  put32(76, spec.layout);
  // The data area ends at the member's end, or before a 1.0 superblock; whole chunks.
  const uint64_t end = spec.version == "1.0" ? MdSuperblockPosition(spec) : spec.member_size_bytes;
  const uint64_t chunk_sectors = spec.chunk_bytes / 512 ? spec.chunk_bytes / 512 : 1;
  const uint64_t data_size = (end - spec.data_offset_bytes) / 512 / chunk_sectors * chunk_sectors;
  put64(80, data_size);  // size: used size of each member, in sectors
  put32(88, spec.chunk_bytes / 512);
  put32(92, spec.raid_disks);
  put64(128, spec.data_offset_bytes / 512);
  put64(136, data_size);
  put64(144, MdSuperblockPosition(spec) / 512);
  put32(160, spec.role);                                                      // dev_number = role
  for (int i = 0; i < 16; ++i) sb[168 + i] = static_cast<uint8_t>(0x22 + i);  // device_uuid
  put64(192, 1700000001);                                                     // utime
  put64(200, 5);                                                              // events
  put64(208, ~uint64_t{0});  // resync_offset: clean
  put32(220, max_dev);
  for (uint32_t d = 0; d < max_dev; ++d) {
    uint16_t role = d < spec.raid_disks ? static_cast<uint16_t>(d) : 0xffff;
    std::memcpy(sb.data() + 256 + 2 * d, &role, 2);
  }
  // mdadm calc_sb_1_csum(): the 32-bit little-endian words of the superblock and the roles
  // (sb_csum counted as 0) summed in 64 bits, the carry folded in once.
  uint64_t sum = 0;
  const size_t size = 256 + 2 * max_dev;
  for (size_t at = 0; at + 4 <= size; at += 4) {
    uint32_t word = 0;
    std::memcpy(&word, sb.data() + at, 4);
    sum += word;
  }
  put32(216, static_cast<uint32_t>((sum & 0xffffffff) + (sum >> 32)));
  return sb;
}

}  // namespace partalign::test
