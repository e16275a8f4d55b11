// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/stack/lvm_label.h"

#include <array>

#include <fmt/format.h>

#include "partalign/util/byte_order.h"
#include "partalign/util/checked_math.h"

namespace partalign {
namespace {

constexpr uint64_t kLabelSectorBytes = 512;
// struct label_header: id[8] "LABELONE", sector_xl u64, crc_xl u32, offset_xl u32, type[8].
constexpr std::string_view kLabelId = "LABELONE";
constexpr std::string_view kLabelType = "LVM2 001";
constexpr size_t kLabelSectorOffset = 8;
constexpr size_t kLabelCrcOffset = 16;
constexpr size_t kLabelCrcFrom = 20;  // the CRC covers offset_xl to the end of the sector
constexpr size_t kLabelPvHeaderOffset = 20;
constexpr size_t kLabelTypeOffset = 24;
constexpr size_t kLabelHeaderBytes = 32;
// struct pv_header: pv_uuid[32], device_size_xl u64, then two zero-terminated disk_locn lists.
constexpr size_t kUuidBytes = 32;
constexpr size_t kDiskLocnBytes = 16;
// struct mda_header: checksum_xl u32, magic[16], version u32, start u64, size u64, raw_locns.
constexpr std::string_view kMdaMagic =
    "\040\114\126\115\062\040\170\133\065\101\045\162\060\116\052\076";
constexpr size_t kMdaMagicOffset = 4;
constexpr size_t kMdaVersionOffset = 20;
constexpr size_t kMdaStartOffset = 24;
constexpr size_t kMdaSizeOffset = 32;
constexpr size_t kMdaLocationsOffset = 40;
constexpr size_t kRawLocnBytes = 24;
constexpr uint32_t kMdaVersion = 1;

constexpr std::array<uint32_t, 256> MakeCrcTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kCrcTable = MakeCrcTable();

// Reads one zero-terminated disk_locn list starting at `*offset` of `sector`; advances
// `*offset` past the terminator.
Result<std::vector<LvmDiskArea>> ReadAreaList(std::span<const uint8_t> sector, size_t* offset,
                                              std::string_view what) {
  std::vector<LvmDiskArea> areas;
  for (;;) {
    std::optional<uint64_t> area_offset = Le<uint64_t>(sector, *offset);
    std::optional<uint64_t> area_size = Le<uint64_t>(sector, *offset + 8);
    if (!area_offset || !area_size) {
      return MakeError(
          fmt::format("LVM2 PV label: the list of {} areas runs past the label sector", what));
    }
    *offset += kDiskLocnBytes;
    if (*area_offset == 0) return areas;
    areas.push_back({*area_offset, *area_size});
  }
}

}  // namespace

uint32_t LvmCrc(uint32_t crc, std::span<const uint8_t> bytes) {
  for (uint8_t b : bytes) crc = kCrcTable[(crc ^ b) & 0xff] ^ (crc >> 8);
  return crc;
}

std::string FormatLvmUuid(std::string_view raw) {
  static constexpr size_t kGroups[] = {6, 4, 4, 4, 4, 4, 6};
  std::string out;
  size_t at = 0;
  for (size_t group : kGroups) {
    if (!out.empty()) out += '-';
    out += raw.substr(std::min(at, raw.size()), group);
    at += group;
  }
  return out;
}

Result<LvmLabel> ParseLvmLabel(std::span<const uint8_t> head) {
  for (uint64_t sector = 0; sector * kLabelSectorBytes < kLvmLabelScanBytes; ++sector) {
    const size_t at = static_cast<size_t>(sector * kLabelSectorBytes);
    if (head.size() < at + kLabelSectorBytes) break;
    std::span<const uint8_t> s = head.subspan(at, kLabelSectorBytes);
    if (!HasMagic(s, 0, kLabelId)) continue;
    if (Le<uint64_t>(s, kLabelSectorOffset) != sector) {
      return MakeError(fmt::format("LVM2 PV label in sector {} names sector {}", sector,
                                   *Le<uint64_t>(s, kLabelSectorOffset)));
    }
    const uint32_t crc = LvmCrc(kLvmInitialCrc, s.subspan(kLabelCrcFrom));
    if (Le<uint32_t>(s, kLabelCrcOffset) != crc) {
      return MakeError(fmt::format("LVM2 PV label in sector {}: checksum mismatch", sector));
    }
    if (!HasMagic(s, kLabelTypeOffset, kLabelType)) {
      return MakeError(fmt::format("LVM2 PV label in sector {} is not of type 'LVM2 001'", sector));
    }
    const uint32_t header_at = *Le<uint32_t>(s, kLabelPvHeaderOffset);
    if (header_at < kLabelHeaderBytes || header_at + kUuidBytes + 8 > kLabelSectorBytes) {
      return MakeError(
          fmt::format("LVM2 PV label: pv_header offset {} is outside the label sector", header_at));
    }
    LvmLabel label;
    label.label_sector = sector;
    label.pv_uuid.assign(reinterpret_cast<const char*>(s.data() + header_at), kUuidBytes);
    label.device_size_bytes = *Le<uint64_t>(s, header_at + kUuidBytes);
    size_t offset = header_at + kUuidBytes + 8;
    Result<std::vector<LvmDiskArea>> data = ReadAreaList(s, &offset, "data");
    if (!data) return data.error();
    Result<std::vector<LvmDiskArea>> metadata = ReadAreaList(s, &offset, "metadata");
    if (!metadata) return metadata.error();
    if (data->empty()) return MakeError("LVM2 PV label has no data area (no pe_start)");
    label.data_areas = std::move(*data);
    label.metadata_areas = std::move(*metadata);
    const uint64_t size = label.device_size_bytes;
    auto inside = [size](const LvmDiskArea& a) {
      std::optional<uint64_t> end = CheckedAdd(a.offset_bytes, a.size_bytes);
      return size == 0 || (end && *end <= size && a.offset_bytes < size);
    };
    for (const LvmDiskArea& a : label.data_areas) {
      if (!inside(a)) {
        return MakeError(
            fmt::format("LVM2 PV label: data area at byte {} lies past the device "
                        "size {}",
                        a.offset_bytes, size));
      }
    }
    for (const LvmDiskArea& a : label.metadata_areas) {
      if (!inside(a) || a.size_bytes < kLvmMdaHeaderBytes) {
        return MakeError(
            fmt::format("LVM2 PV label: metadata area at byte {} ({} bytes) does not "
                        "fit the device size {}",
                        a.offset_bytes, a.size_bytes, size));
      }
    }
    return label;
  }
  return MakeError("no LVM2 PV label in the first 4 sectors");
}

Result<LvmMdaHeader> ParseLvmMdaHeader(std::span<const uint8_t> bytes, const LvmDiskArea& area) {
  if (bytes.size() < kLvmMdaHeaderBytes) {
    return MakeError("LVM2 metadata area header: short read");
  }
  std::span<const uint8_t> h = bytes.first(kLvmMdaHeaderBytes);
  const std::string where = fmt::format("LVM2 metadata area at byte {}", area.offset_bytes);
  if (!HasMagic(h, kMdaMagicOffset, kMdaMagic)) {
    return MakeError(where + ": no metadata area header (wrong magic)");
  }
  if (Le<uint32_t>(h, 0) != LvmCrc(kLvmInitialCrc, h.subspan(kMdaMagicOffset))) {
    return MakeError(where + ": header checksum mismatch");
  }
  if (Le<uint32_t>(h, kMdaVersionOffset) != kMdaVersion) {
    return MakeError(
        where + fmt::format(": unknown header version {}", *Le<uint32_t>(h, kMdaVersionOffset)));
  }
  LvmMdaHeader header;
  header.start_bytes = *Le<uint64_t>(h, kMdaStartOffset);
  header.size_bytes = *Le<uint64_t>(h, kMdaSizeOffset);
  if (header.start_bytes != area.offset_bytes || header.size_bytes != area.size_bytes) {
    return MakeError(where + fmt::format(": the header says start {} size {}, the label {} and {}",
                                         header.start_bytes, header.size_bytes, area.offset_bytes,
                                         area.size_bytes));
  }
  for (size_t at = kMdaLocationsOffset; at + kRawLocnBytes <= kLvmMdaHeaderBytes;
       at += kRawLocnBytes) {
    LvmRawLocation l{*Le<uint64_t>(h, at), *Le<uint64_t>(h, at + 8), *Le<uint32_t>(h, at + 16),
                     *Le<uint32_t>(h, at + 20)};
    if (l.offset_bytes == 0) return header;
    // The text lies after the header and inside the circular buffer; it may wrap once.
    if (l.offset_bytes < kLvmMdaHeaderBytes || l.offset_bytes >= header.size_bytes ||
        l.size_bytes > header.size_bytes - kLvmMdaHeaderBytes) {
      return MakeError(where + fmt::format(": metadata text at {} ({} bytes) lies outside the area",
                                           l.offset_bytes, l.size_bytes));
    }
    header.locations.push_back(l);
  }
  return MakeError(where + ": the location list has no terminator");
}

Result<std::vector<LvmDiskArea>> LvmMetadataTextRuns(const LvmMdaHeader& header) {
  std::vector<LvmDiskArea> runs;
  if (header.locations.empty() || header.locations.front().ignored()) return runs;
  const LvmRawLocation& l = header.locations.front();
  if (l.size_bytes == 0) return runs;
  // ParseLvmMdaHeader bounded offset and size by the area's size, so none of this overflows
  // unless the area itself sits at the end of the 64-bit range.
  std::optional<uint64_t> start = CheckedAdd(header.start_bytes, l.offset_bytes);
  std::optional<uint64_t> wrap_start = CheckedAdd(header.start_bytes, kLvmMdaHeaderBytes);
  if (!start || !wrap_start) return MakeError("LVM2 metadata area lies past 2^64 bytes");
  const uint64_t end = l.offset_bytes + l.size_bytes;
  const uint64_t wrap = end > header.size_bytes ? end - header.size_bytes : 0;
  // The size bound of ParseLvmMdaHeader (at most the buffer's size) also keeps the wrapped part
  // from reaching back into the first run: wrap <= offset - header.
  runs.push_back({*start, l.size_bytes - wrap});
  if (wrap != 0) runs.push_back({*wrap_start, wrap});
  return runs;
}

}  // namespace partalign
