// SPDX-License-Identifier: GPL-3.0-or-later
// Boot sectors built byte by byte as the specifications lay them out (NTFS, FAT, exFAT,
// GRUB's boot.img and diskboot.img, a BSD disklabel, BCD device data), for the boot domain's
// unit tests. The device tests (tests/io/boot/) check the same parsers on what mkntfs,
// mkfs.fat, mkfs.exfat, grub-mkimage and extlinux write. Header-only.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace partalign::test {

using Bytes = std::vector<uint8_t>;

inline void PutLe(Bytes& b, size_t at, uint64_t value, size_t width) {
  for (size_t i = 0; i < width; ++i) b[at + i] = static_cast<uint8_t>(value >> (8 * i));
}

inline void PutText(Bytes& b, size_t at, std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) b[at + i] = static_cast<uint8_t>(text[i]);
}

inline void Sign(Bytes& b) {
  b[510] = 0x55;
  b[511] = 0xAA;
}

/// An NTFS boot sector as mkntfs writes one: 512-byte sectors, 8 sectors per cluster.
inline Bytes NtfsBootSectorBytes(uint32_t hidden, uint64_t number_of_sectors, uint16_t bps = 512) {
  Bytes b(bps, 0);
  b[0] = 0xEB;
  b[1] = 0x52;
  b[2] = 0x90;
  PutText(b, 3, "NTFS    ");
  PutLe(b, 0x0B, bps, 2);
  b[0x0D] = 8;
  b[0x15] = 0xF8;
  PutLe(b, 0x18, 63, 2);
  PutLe(b, 0x1A, 255, 2);
  PutLe(b, 0x1C, hidden, 4);
  PutLe(b, 0x28, number_of_sectors, 8);
  PutLe(b, 0x30, 4, 8);  // $MFT cluster
  PutLe(b, 0x38, 2, 8);  // $MFTMirr cluster
  b[0x40] = 0xF6;        // 1 KiB MFT records
  b[0x44] = 1;
  Sign(b);
  return b;
}

/// A FAT boot sector: FAT32 when `fat32`, else FAT16; `total` sectors, `hidden` sectors.
inline Bytes FatBootSectorBytes(bool fat32, uint32_t hidden, uint32_t total,
                                std::string_view oem = "mkfs.fat", uint16_t backup = 6) {
  Bytes b(512, 0);
  b[0] = 0xEB;
  b[1] = fat32 ? 0x58 : 0x3C;
  b[2] = 0x90;
  PutText(b, 3, oem);
  PutLe(b, 0x0B, 512, 2);
  b[0x0D] = 1;
  PutLe(b, 0x0E, fat32 ? 32 : 4, 2);  // reserved sectors
  b[0x10] = 2;
  PutLe(b, 0x11, fat32 ? 0 : 512, 2);
  b[0x15] = 0xF8;
  PutLe(b, 0x18, 63, 2);
  PutLe(b, 0x1A, 255, 2);
  PutLe(b, 0x1C, hidden, 4);
  PutLe(b, 0x20, total, 4);
  if (fat32) {
    PutLe(b, 0x24, (total / 128) + 1, 4);
    PutLe(b, 0x2C, 2, 4);  // root cluster
    PutLe(b, 0x30, 1, 2);  // FSInfo
    PutLe(b, 0x32, backup, 2);
  } else {
    PutLe(b, 0x16, (total / 256) + 1, 2);
  }
  Sign(b);
  return b;
}

/// exFAT's boot checksum, written out independently of the code under test (specification
/// 3.4): every byte of sectors 0..10 but 106, 107 and 112.
inline uint32_t ReferenceExfatChecksum(const Bytes& region, size_t bps) {
  uint32_t sum = 0;
  for (size_t i = 0; i < 11 * bps; ++i) {
    if (i == 106 || i == 107 || i == 112) continue;
    sum = (sum >> 1) | (sum << 31);
    sum += region[i];
  }
  return sum;
}

/// An exFAT boot region (12 sectors of 512 bytes): main boot sector, 8 extended boot sectors
/// signed 55 AA at their end, OEM parameters, reserved, the checksum sector.
inline Bytes ExfatBootRegionBytes(uint64_t partition_offset, uint64_t volume_length) {
  const size_t bps = 512;
  Bytes r(12 * bps, 0);
  r[0] = 0xEB;
  r[1] = 0x76;
  r[2] = 0x90;
  PutText(r, 3, "EXFAT   ");
  PutLe(r, 64, partition_offset, 8);
  PutLe(r, 72, volume_length, 8);
  PutLe(r, 80, 2048, 4);  // FAT offset
  PutLe(r, 84, 64, 4);    // FAT length
  PutLe(r, 88, 4096, 4);  // cluster heap offset
  PutLe(r, 92, 1000, 4);  // cluster count
  PutLe(r, 96, 5, 4);     // root directory cluster
  PutLe(r, 100, 0x1234abcd, 4);
  PutLe(r, 104, 0x100, 2);  // revision 1.00
  PutLe(r, 106, 0, 2);      // volume flags
  r[108] = 9;
  r[109] = 3;
  r[110] = 1;
  r[111] = 0x80;
  r[112] = 7;  // percent in use
  r[510] = 0x55;
  r[511] = 0xAA;
  for (size_t s = 1; s <= 8; ++s) {
    r[s * bps + bps - 2] = 0x55;
    r[s * bps + bps - 1] = 0xAA;
  }
  const uint32_t sum = ReferenceExfatChecksum(r, bps);
  for (size_t at = 11 * bps; at < 12 * bps; at += 4) PutLe(r, at, sum, 4);
  return r;
}

/// GRUB 2's boot.img as grub-setup leaves it: EB 63 90, kernel_sector at 0x5C, the messages
/// at 0x180, 55 AA.
inline Bytes GrubBootImageBytes(uint64_t kernel_sector) {
  Bytes b(512, 0);
  b[0] = 0xEB;
  b[1] = 0x63;
  b[2] = 0x90;
  PutLe(b, 0x5C, kernel_sector, 8);
  PutText(b, 0x180, std::string_view("GRUB \0Geom\0Hard Disk\0Read\0 Error\r\n\0", 35));
  Sign(b);
  return b;
}

struct GrubBlockSpec {
  uint64_t start = 0;
  uint16_t sectors = 0;
};

/// GRUB 2's diskboot.img with `blocks` in its blocklist, segments from 0x820 as grub-setup
/// fills them.
inline Bytes GrubDiskbootBytes(const std::vector<GrubBlockSpec>& blocks) {
  Bytes b(512, 0);
  b[0] = 0x52;
  b[1] = 0x56;
  PutText(b, 0x11B, std::string_view("loading\0.\0\r\n\0Geom\0Read\0 Error\0", 30));
  uint16_t segment = 0x820;
  size_t at = 0x1F4;
  for (const GrubBlockSpec& s : blocks) {
    PutLe(b, at, s.start, 8);
    PutLe(b, at + 8, s.sectors, 2);
    PutLe(b, at + 10, segment, 2);
    segment = static_cast<uint16_t>(segment + s.sectors * 0x20);
    at -= 12;
  }
  return b;
}

struct BsdEntrySpec {
  uint32_t size = 0;
  uint32_t offset = 0;
  uint8_t fstype = 7;  // FS_BSDFFS
};

/// A slice's second sector holding a BSD disklabel (at byte 0) with `entries`, checksummed.
inline Bytes BsdLabelSectorBytes(const std::vector<BsdEntrySpec>& entries) {
  Bytes b(512, 0);
  PutLe(b, 0, 0x82564557, 4);
  PutLe(b, 40, 512, 4);
  PutLe(b, 132, 0x82564557, 4);
  PutLe(b, 138, entries.size(), 2);
  PutLe(b, 140, 8192, 4);
  PutLe(b, 144, 8192, 4);
  for (size_t i = 0; i < entries.size(); ++i) {
    PutLe(b, 148 + 16 * i, entries[i].size, 4);
    PutLe(b, 148 + 16 * i + 4, entries[i].offset, 4);
    b[148 + 16 * i + 12] = entries[i].fstype;
  }
  uint16_t sum = 0;
  for (size_t at = 0; at < 148 + 16 * entries.size(); at += 2) {
    if (at != 136) sum ^= static_cast<uint16_t>(b[at] | (b[at + 1] << 8));
  }
  PutLe(b, 136, sum, 2);
  return b;
}

/// BCD device data for an MBR partition (88 bytes, the layout of mistyprojects' BCDEdit
/// notes): device type 6 at 0x10, length 0x48 at 0x18, the partition's byte offset at 0x20,
/// style 1 (MBR) at 0x34, the disk signature at 0x38.
inline Bytes BcdPartitionDeviceBytes(uint64_t offset_bytes, uint32_t signature) {
  Bytes b(0x58, 0);
  PutLe(b, 0x10, 6, 4);
  PutLe(b, 0x18, 0x48, 4);
  PutLe(b, 0x20, offset_bytes, 8);
  PutLe(b, 0x34, 1, 4);
  PutLe(b, 0x38, signature, 4);
  return b;
}

/// A MountedDevices value for an MBR partition: signature, then byte offset.
inline Bytes MountedDeviceBytes(uint32_t signature, uint64_t offset_bytes) {
  Bytes b(12, 0);
  PutLe(b, 0, signature, 4);
  PutLe(b, 4, offset_bytes, 8);
  return b;
}

}  // namespace partalign::test
