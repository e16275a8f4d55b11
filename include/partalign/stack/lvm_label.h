// SPDX-License-Identifier: GPL-3.0-or-later
// The binary part of an LVM2 physical volume, parsed from bytes read elsewhere: the label in
// one of the first four sectors with its pv_header (where the data area starts: pe_start, and
// where the metadata areas are), and the header of a metadata area (where the committed VG
// metadata text lies in its circular buffer). Layouts restated from lvm2 2.03
// `lib/label/label.h` (struct label_header), `lib/format_text/layout.h` (pv_header, mda_header,
// raw_locn) and `lib/misc/crc.c`; all fields little-endian. Every value is untrusted: counts,
// offsets and sizes are bounded and checked before use.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "partalign/util/result.h"

namespace partalign {

/// The label is in one of the first 4 sectors of 512 bytes (LABEL_SCAN_SECTORS): read this
/// many bytes from the start of the PV.
inline constexpr uint64_t kLvmLabelScanBytes = 4 * 512;
/// Each metadata area starts with a 512-byte header (MDA_HEADER_SIZE).
inline constexpr uint64_t kLvmMdaHeaderBytes = 512;
/// lvm2's CRC seed (INITIAL_CRC in lib/misc/crc.h).
inline constexpr uint32_t kLvmInitialCrc = 0xf597a6cf;

/// A {offset, size} pair of the pv_header (struct disk_locn), in bytes from the PV's start.
struct LvmDiskArea {
  uint64_t offset_bytes = 0;
  uint64_t size_bytes = 0;  ///< 0 for the data area: "up to the end of the device"
  bool operator==(const LvmDiskArea&) const = default;
};

struct LvmLabel {
  uint64_t label_sector = 0;  ///< 0..3: the sector holding "LABELONE"
  std::string pv_uuid;        ///< the 32 characters as stored (no dashes)
  uint64_t device_size_bytes = 0;
  /// The data areas; the first one's offset is pe_start (lvm2 keeps exactly one).
  std::vector<LvmDiskArea> data_areas;
  /// The metadata areas: the first at 4096 (one page), an optional second at the end.
  std::vector<LvmDiskArea> metadata_areas;

  uint64_t pe_start_bytes() const { return data_areas.front().offset_bytes; }
};

/// Parses the label and pv_header in `head` (the first kLvmLabelScanBytes bytes of the PV, or
/// more). Checks "LABELONE", the label's sector number, its CRC, the "LVM2 001" type, and that
/// the areas lie inside the device; an error names the first thing that is wrong.
Result<LvmLabel> ParseLvmLabel(std::span<const uint8_t> head);

/// "iXlvul-snGa-az9X-TxJH-lUPh-Nom7-f64aiY": how lvm2 prints a 32-character id (6-4-4-4-4-4-6),
/// and how the VG metadata names PVs.
std::string FormatLvmUuid(std::string_view raw);

/// One slot of the metadata area's location list (struct raw_locn): where a copy of the VG
/// metadata text is, relative to the area's start.
struct LvmRawLocation {
  uint64_t offset_bytes = 0;
  uint64_t size_bytes = 0;
  uint32_t checksum = 0;
  uint32_t flags = 0;
  bool ignored() const { return (flags & 1u) != 0; }  ///< RAW_LOCN_IGNORED
};

struct LvmMdaHeader {
  uint64_t start_bytes = 0;  ///< the area's own start, from the PV's start
  uint64_t size_bytes = 0;
  std::vector<LvmRawLocation> locations;  ///< the first one is the committed metadata
};

/// Parses the 512-byte header of the metadata area `area` (checksum, magic, version 1, start
/// equal to the area's offset, locations inside the area).
Result<LvmMdaHeader> ParseLvmMdaHeader(std::span<const uint8_t> bytes, const LvmDiskArea& area);

/// Where the committed text of `header` lies, from the PV's start: one run, or two when it
/// wraps around the end of the circular buffer (which restarts right after the header). Empty
/// when the area holds no metadata (an orphan PV, or an ignored area).
Result<std::vector<LvmDiskArea>> LvmMetadataTextRuns(const LvmMdaHeader& header);

/// lvm2's calc_crc(): the reflected CRC-32 (polynomial 0xEDB88320) without pre- or
/// post-inversion, continued from `crc`.
uint32_t LvmCrc(uint32_t crc, std::span<const uint8_t> bytes);

}  // namespace partalign
