// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/table_images.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <fmt/format.h>

#include "partalign/util/crc32.h"

namespace partalign::test {
namespace {

void PutLe(std::vector<uint8_t>* b, size_t offset, size_t width, uint64_t value) {
  for (size_t i = 0; i < width; ++i) (*b)[offset + i] = static_cast<uint8_t>(value >> (8 * i));
}

uint64_t GetLe(const std::vector<uint8_t>& b, size_t offset, size_t width) {
  uint64_t value = 0;
  for (size_t i = 0; i < width; ++i) value |= static_cast<uint64_t>(b[offset + i]) << (8 * i);
  return value;
}

std::vector<uint8_t> Read(const SparseDisk& disk, uint64_t offset, uint64_t length) {
  std::vector<uint8_t> bytes(length);
  if (Status s = disk.ReadAt(offset, bytes); !s) throw std::runtime_error(s.error().message);
  return bytes;
}

// A header that claims to be larger than its sector (a damaged-table case) gets the CRC of what
// the sector holds: the bytes past it are not the header's to sum.
void FixHeaderCrc(std::vector<uint8_t>* header) {
  const auto size = std::min(static_cast<size_t>(GetLe(*header, 12, 4)), header->size());
  PutLe(header, 16, 4, 0);
  PutLe(header, 16, 4, Crc32(std::span<const uint8_t>(header->data(), size)));
}

std::vector<uint8_t> MakeHeader(const GptSpec& spec, uint64_t my_lba, uint64_t alternate_lba,
                                uint64_t entries_lba, uint64_t first_usable, uint64_t last_usable,
                                uint32_t entries_crc) {
  std::vector<uint8_t> h(spec.sector_size, 0);
  const char signature[] = "EFI PART";
  std::copy(signature, signature + 8, h.begin());
  PutLe(&h, 8, 4, 0x00010000);  // revision 1.0
  PutLe(&h, 12, 4, 92);
  PutLe(&h, 24, 8, my_lba);
  PutLe(&h, 32, 8, alternate_lba);
  PutLe(&h, 40, 8, first_usable);
  PutLe(&h, 48, 8, last_usable);
  std::array<uint8_t, 16> guid = GuidBytes(spec.disk_guid);
  std::copy(guid.begin(), guid.end(), h.begin() + 56);
  PutLe(&h, 72, 8, entries_lba);
  PutLe(&h, 80, 4, spec.entry_count);
  PutLe(&h, 84, 4, spec.entry_bytes);
  PutLe(&h, 88, 4, entries_crc);
  FixHeaderCrc(&h);
  return h;
}

}  // namespace

std::array<uint8_t, 16> GuidBytes(const std::string& text) {
  std::string hex;
  for (char c : text) {
    if (c != '-') hex.push_back(c);
  }
  if (hex.size() != 32) throw std::invalid_argument("not a GUID: " + text);
  std::array<uint8_t, 16> raw{};
  for (size_t i = 0; i < 16; ++i)
    raw[i] = static_cast<uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  std::array<uint8_t, 16> out = raw;
  // time_low, time_mid, time_hi_and_version are stored little-endian.
  std::reverse_copy(raw.begin(), raw.begin() + 4, out.begin());
  std::reverse_copy(raw.begin() + 4, raw.begin() + 6, out.begin() + 4);
  std::reverse_copy(raw.begin() + 6, raw.begin() + 8, out.begin() + 6);
  return out;
}

void WriteMbr(SparseDisk* disk, uint64_t offset_bytes, const std::array<MbrEntrySpec, 4>& entries,
              uint32_t disk_id) {
  std::vector<uint8_t> mbr(512, 0);
  PutLe(&mbr, 440, 4, disk_id);
  for (size_t i = 0; i < 4; ++i) {
    const size_t at = 446 + 16 * i;
    mbr[at] = entries[i].boot;
    mbr[at + 4] = entries[i].type;
    PutLe(&mbr, at + 8, 4, entries[i].start);
    PutLe(&mbr, at + 12, 4, entries[i].count);
  }
  mbr[510] = 0x55;
  mbr[511] = 0xAA;
  disk->Write(offset_bytes, mbr);
}

SparseDisk MakeDosDisk(uint64_t size_bytes, uint64_t sector_size,
                       const std::vector<MbrEntrySpec>& primaries,
                       const std::vector<LogicalSpec>& logicals, uint64_t ext_start,
                       uint64_t ext_end) {
  SparseDisk disk(size_bytes);
  std::array<MbrEntrySpec, 4> mbr{};
  for (size_t i = 0; i < primaries.size() && i < 4; ++i) mbr[i] = primaries[i];
  if (!logicals.empty()) {
    mbr[3] = {0, 0x05, static_cast<uint32_t>(ext_start),
              static_cast<uint32_t>(ext_end - ext_start + 1)};
    for (size_t i = 0; i < logicals.size(); ++i) {
      const uint64_t ebr = i == 0 ? ext_start : logicals[i].start - 1;
      std::array<MbrEntrySpec, 4> entries{};
      entries[0] = {0, logicals[i].type, static_cast<uint32_t>(logicals[i].start - ebr),
                    static_cast<uint32_t>(logicals[i].size)};
      if (i + 1 < logicals.size()) {
        const uint64_t next_ebr = logicals[i + 1].start - 1;
        const uint64_t next_end = logicals[i + 1].start + logicals[i + 1].size - 1;
        entries[1] = {0, 0x05, static_cast<uint32_t>(next_ebr - ext_start),
                      static_cast<uint32_t>(next_end - next_ebr + 1)};
      }
      WriteMbr(&disk, ebr * sector_size, entries, 0);
    }
  }
  WriteMbr(&disk, 0, mbr);
  return disk;
}

uint64_t PrimaryHeaderLba() { return 1; }

uint64_t BackupHeaderLba(const GptSpec& spec) { return spec.disk_sectors - 1; }

SparseDisk MakeGptDisk(const GptSpec& spec) {
  const uint64_t ss = spec.sector_size;
  SparseDisk disk(spec.disk_sectors * ss);
  const uint64_t array_bytes = uint64_t{spec.entry_count} * spec.entry_bytes;
  const uint64_t array_sectors = (array_bytes + ss - 1) / ss;
  const uint64_t last = spec.disk_sectors - 1;
  const uint64_t first_usable = spec.first_usable ? spec.first_usable : 2 + array_sectors;
  const uint64_t last_usable = spec.last_usable ? spec.last_usable : last - 1 - array_sectors;
  std::vector<uint8_t> array(array_bytes, 0);
  for (const GptEntrySpec& e : spec.entries) {
    const size_t at = static_cast<size_t>(e.index) * spec.entry_bytes;
    std::array<uint8_t, 16> type = GuidBytes(e.type_guid);
    std::array<uint8_t, 16> unique = GuidBytes(
        e.unique_guid.empty() ? fmt::format("0A0B0C0D-0000-4000-8000-{:012X}", e.index + 1)
                              : e.unique_guid);
    std::copy(type.begin(), type.end(), array.begin() + static_cast<ptrdiff_t>(at));
    std::copy(unique.begin(), unique.end(), array.begin() + static_cast<ptrdiff_t>(at + 16));
    PutLe(&array, at + 32, 8, e.start);
    PutLe(&array, at + 40, 8, e.end);
  }
  const uint32_t crc = Crc32(array);
  disk.Write(2 * ss, array);
  disk.Write(PrimaryHeaderLba() * ss,
             MakeHeader(spec, PrimaryHeaderLba(), last, 2, first_usable, last_usable, crc));
  const uint64_t backup_entries = last - array_sectors;
  disk.Write(backup_entries * ss, array);
  disk.Write(last * ss, MakeHeader(spec, last, PrimaryHeaderLba(), backup_entries, first_usable,
                                   last_usable, crc));
  std::array<MbrEntrySpec, 4> mbr{};
  if (spec.mbr.empty()) {
    mbr[0] = {0, 0xEE, 1, static_cast<uint32_t>(std::min<uint64_t>(last, 0xFFFFFFFFu))};
  } else {
    for (size_t i = 0; i < spec.mbr.size() && i < 4; ++i) mbr[i] = spec.mbr[i];
  }
  WriteMbr(&disk, 0, mbr, 0);
  return disk;
}

void SetGptHeaderField(SparseDisk* disk, uint64_t sector_size, uint64_t header_lba, size_t field,
                       size_t width, uint64_t value, bool fix_crc) {
  std::vector<uint8_t> h = Read(*disk, header_lba * sector_size, sector_size);
  PutLe(&h, field, width, value);
  if (fix_crc) FixHeaderCrc(&h);
  disk->Write(header_lba * sector_size, h);
}

void SetGptEntryField(SparseDisk* disk, uint64_t sector_size, uint64_t header_lba, uint32_t index,
                      size_t field, size_t width, uint64_t value) {
  std::vector<uint8_t> h = Read(*disk, header_lba * sector_size, sector_size);
  const uint64_t entries_lba = GetLe(h, 72, 8);
  const uint64_t count = GetLe(h, 80, 4);
  const uint64_t size = GetLe(h, 84, 4);
  std::vector<uint8_t> array = Read(*disk, entries_lba * sector_size, count * size);
  PutLe(&array, static_cast<size_t>(index * size + field), width, value);
  disk->Write(entries_lba * sector_size, array);
  PutLe(&h, 88, 4, Crc32(array));
  FixHeaderCrc(&h);
  disk->Write(header_lba * sector_size, h);
}

void CorruptGptHeader(SparseDisk* disk, uint64_t sector_size, uint64_t header_lba) {
  std::vector<uint8_t> h = Read(*disk, header_lba * sector_size, sector_size);
  h[60] ^= 0xFF;  // inside the disk GUID: covered by the CRC, nothing else checks it
  disk->Write(header_lba * sector_size, h);
}

SparseDisk MakeAtariDisk(uint64_t size_bytes) {
  SparseDisk disk(size_bytes);
  std::vector<uint8_t> root(512, 0);
  auto put_be = [&](size_t offset, uint32_t value) {
    for (size_t i = 0; i < 4; ++i) root[offset + i] = static_cast<uint8_t>(value >> (24 - 8 * i));
  };
  const auto sectors = static_cast<uint32_t>(size_bytes / 512);
  put_be(0x1C2, sectors);  // hd_size (libblkid/src/partitions/atari.c, struct atari_rootsector)
  root[0x1C6] = 0x01;      // part[0].flags: active
  root[0x1C7] = 'G';
  root[0x1C8] = 'E';
  root[0x1C9] = 'M';
  put_be(0x1CA, 2);
  put_be(0x1CE, sectors - 2);
  disk.Write(0, root);
  return disk;
}

void WriteImageFile(const SparseDisk& disk, const std::string& path) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot create " + path);
    for (const auto& [offset, bytes] : disk.runs()) {
      out.seekp(static_cast<std::streamoff>(offset));
      out.write(reinterpret_cast<const char*>(bytes.data()),
                static_cast<std::streamsize>(bytes.size()));
    }
    if (!out) throw std::runtime_error("cannot write " + path);
  }
  std::filesystem::resize_file(path, disk.size_bytes());
}

SparseDisk ReadImageFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  SparseDisk disk(bytes.size());
  disk.Write(0, bytes);
  return disk;
}

}  // namespace partalign::test
