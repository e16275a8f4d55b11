// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/boot/nested_label.h"

#include <algorithm>
#include <string>

#include "partalign/boot/boot_disk.h"
#include "partalign/util/byte_order.h"

namespace partalign {
namespace {

// NetBSD's MAXPARTITIONS (22 on some ports); FreeBSD and OpenBSD have 8 and 16.
constexpr uint16_t kBsdMaxPartitions = 22;
// struct disklabel: d_magic 0, d_secsize 40, d_magic2 132, d_checksum 136, d_npartitions 138.
constexpr uint64_t kBsdSecsize = 40;
constexpr uint64_t kBsdMagic2 = 132;
constexpr uint64_t kBsdChecksum = 136;
constexpr uint64_t kBsdNpartitions = 138;

}  // namespace

bool IsBsdSliceType(std::string_view dos_type_code) {
  const std::string t = UpperTypeCode(dos_type_code);
  return t == "0XA5" || t == "0XA6" || t == "0XA9" || t == "0XB7";
}

uint16_t BsdDisklabelChecksum(std::span<const uint8_t> label) {
  uint16_t sum = 0;
  for (uint64_t at = 0; at + 1 < label.size(); at += 2) {
    if (at == kBsdChecksum) continue;
    sum ^= *Le<uint16_t>(label, at);
  }
  return sum;
}

std::optional<BsdDisklabel> ParseBsdDisklabel(std::span<const uint8_t> sector) {
  for (uint64_t at : {uint64_t{0}, uint64_t{64}}) {
    if (Le<uint32_t>(sector, at) != kBsdDiskMagic) continue;
    std::span<const uint8_t> rest = sector.subspan(at);
    if (Le<uint32_t>(rest, kBsdMagic2) != kBsdDiskMagic) continue;
    std::optional<uint16_t> n = Le<uint16_t>(rest, kBsdNpartitions);
    if (!n || *n == 0 || *n > kBsdMaxPartitions) continue;
    BsdDisklabel label;
    label.offset_in_sector = at;
    label.sector_size = Le<uint32_t>(rest, kBsdSecsize).value_or(0);
    const uint64_t size = kBsdPartitionsOffset + uint64_t{*n} * kBsdPartitionEntryBytes;
    if (size > rest.size()) continue;
    std::span<const uint8_t> bytes = rest.first(size);
    if (BsdDisklabelChecksum(bytes) != *Le<uint16_t>(bytes, kBsdChecksum)) continue;
    for (uint16_t i = 0; i < *n; ++i) {
      const uint64_t e = kBsdPartitionsOffset + i * kBsdPartitionEntryBytes;
      label.partitions.push_back(
          {*Le<uint32_t>(bytes, e), *Le<uint32_t>(bytes, e + 4), bytes[e + 12]});
    }
    return label;
  }
  return std::nullopt;
}

std::optional<std::vector<uint8_t>> ShiftBsdDisklabel(std::span<const uint8_t> sector,
                                                      const BsdDisklabel& label, uint64_t old_start,
                                                      uint64_t old_size, uint64_t new_start,
                                                      uint64_t new_size) {
  if (label.offset_in_sector + label.size_bytes() > sector.size()) return std::nullopt;
  std::vector<uint8_t> out(
      sector.begin() + static_cast<ptrdiff_t>(label.offset_in_sector),
      sector.begin() + static_cast<ptrdiff_t>(label.offset_in_sector + label.size_bytes()));
  for (size_t i = 0; i < label.partitions.size(); ++i) {
    const BsdPartitionEntry& p = label.partitions[i];
    if (p.size_sectors == 0) continue;
    if (p.offset_sectors < old_start || p.offset_sectors - old_start >= old_size) continue;
    const uint64_t moved = new_start + (p.offset_sectors - old_start);
    if (moved > UINT32_MAX) return std::nullopt;
    if (moved + p.size_sectors > new_start + new_size) return std::nullopt;
    PutLe<uint32_t>(out, kBsdPartitionsOffset + i * kBsdPartitionEntryBytes + 4,
                    static_cast<uint32_t>(moved));
  }
  const uint16_t sum = BsdDisklabelChecksum(out);
  out[kBsdChecksum] = static_cast<uint8_t>(sum);
  out[kBsdChecksum + 1] = static_cast<uint8_t>(sum >> 8);
  return out;
}

bool IsLdmPartitionType(std::string_view type_code) {
  const std::string t = UpperTypeCode(type_code);
  return t == "0X42" || t == "5808C8AA-7E8F-42E0-85D2-E1E90434CFB3" ||
         t == "AF9B60A0-1431-4F62-BC68-3311714A69AD";
}

bool IsLdmPrivateHeader(std::span<const uint8_t> sector) { return HasMagic(sector, 0, "PRIVHEAD"); }

}  // namespace partalign
