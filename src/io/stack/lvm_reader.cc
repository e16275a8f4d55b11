// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/stack/lvm_reader.h"

#include <fmt/format.h>

#include "io/device/target.h"
#include "partalign/util/checked_math.h"

namespace partalign {
namespace {

// Reads `length` bytes at `at` (from the region's start) of the region, refusing anything that
// leaves it.
Result<std::vector<uint8_t>> ReadRegion(int fd, const std::string& path, uint64_t region_offset,
                                        uint64_t region_size, uint64_t at, uint64_t length) {
  std::optional<uint64_t> end = CheckedAdd(at, length);
  std::optional<uint64_t> absolute = CheckedAdd(region_offset, at);
  if (!end || !absolute || *end > region_size) {
    return MakeError(fmt::format("'{}': {} bytes at byte {} of the PV lie past its end ({} bytes)",
                                 path, length, at, region_size));
  }
  std::vector<uint8_t> bytes(static_cast<size_t>(length));
  Result<size_t> got = ReadAt(fd, bytes.data(), bytes.size(), *absolute, path);
  if (!got) return got.error();
  if (*got != length) return MakeError(fmt::format("'{}': short read at byte {}", path, *absolute));
  return bytes;
}

// The committed VG text of one metadata area, checksum verified; nullopt when the area holds
// none.
Result<std::optional<std::string>> ReadAreaText(int fd, const std::string& path, uint64_t offset,
                                                uint64_t size, const LvmDiskArea& area) {
  Result<std::vector<uint8_t>> head =
      ReadRegion(fd, path, offset, size, area.offset_bytes, kLvmMdaHeaderBytes);
  if (!head) return head.error();
  Result<LvmMdaHeader> header = ParseLvmMdaHeader(*head, area);
  if (!header) return header.error();
  Result<std::vector<LvmDiskArea>> runs = LvmMetadataTextRuns(*header);
  if (!runs) return runs.error();
  if (runs->empty()) return std::optional<std::string>();
  std::string text;
  uint32_t crc = kLvmInitialCrc;
  for (const LvmDiskArea& run : *runs) {
    if (text.size() + run.size_bytes > kLvmMaxMetadataTextBytes) {
      return MakeError(fmt::format("LVM2 metadata text of more than {} bytes is refused",
                                   kLvmMaxMetadataTextBytes));
    }
    Result<std::vector<uint8_t>> bytes =
        ReadRegion(fd, path, offset, size, run.offset_bytes, run.size_bytes);
    if (!bytes) return bytes.error();
    crc = LvmCrc(crc, *bytes);
    text.append(bytes->begin(), bytes->end());
  }
  if (crc != header->locations.front().checksum) {
    return MakeError(fmt::format("LVM2 metadata text at byte {}: checksum mismatch",
                                 runs->front().offset_bytes));
  }
  return std::optional<std::string>(std::move(text));
}

}  // namespace

Result<LvmPvRead> ReadLvmPv(int fd, const std::string& path, uint64_t offset, uint64_t size) {
  Result<std::vector<uint8_t>> head = ReadRegion(fd, path, offset, size, 0, kLvmLabelScanBytes);
  if (!head) return head.error();
  Result<LvmLabel> label = ParseLvmLabel(*head);
  if (!label) return label.error();
  LvmPvRead pv;
  pv.label = std::move(*label);
  if (pv.label.pe_start_bytes() >= size) {
    return MakeError(fmt::format("LVM2 PV: pe_start {} lies past the end of its {} bytes",
                                 pv.label.pe_start_bytes(), size));
  }
  bool any_text = false;
  for (const LvmDiskArea& area : pv.label.metadata_areas) {
    Result<std::optional<std::string>> text = ReadAreaText(fd, path, offset, size, area);
    if (!text) {
      pv.warnings.push_back(text.error().message);
      continue;
    }
    if (!*text) continue;
    any_text = true;
    Result<LvmVolumeGroup> vg = ParseLvmVgMetadata(**text);
    if (!vg) {
      pv.warnings.push_back(vg.error().message);
      continue;
    }
    const LvmPhysicalVolume* me = vg->FindPvByUuid(FormatLvmUuid(pv.label.pv_uuid));
    if (me == nullptr) {
      pv.warnings.push_back(fmt::format("the metadata of VG {} does not list this PV ({})",
                                        vg->name, FormatLvmUuid(pv.label.pv_uuid)));
      continue;
    }
    pv.pv_name = me->name;
    pv.vg = std::move(*vg);
    return pv;
  }
  if (!pv.warnings.empty() && (any_text || pv.label.metadata_areas.size() == pv.warnings.size())) {
    return MakeError(pv.warnings.front());
  }
  return pv;
}

}  // namespace partalign
