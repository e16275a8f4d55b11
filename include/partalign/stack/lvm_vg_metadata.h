// SPDX-License-Identifier: GPL-3.0-or-later
// The text part of an LVM2 volume group: the metadata written into every PV's metadata area
// ("vg0 { id = ... extent_size = 8192 physical_volumes { pv0 { ... pe_start = 2048 } }
// logical_volumes { lv { segment1 { start_extent = 0 extent_count = 10 type = "striped"
// stripe_count = 2 stripe_size = 16 stripes = ["pv0", 0, "pv1", 0] } } } }"). The syntax is
// lvm2's config format (libdm/libdm-config.c): sections, `key = value`, strings, integers,
// arrays, `#` comments. Sizes in it are 512-byte sectors; this model holds bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "partalign/util/result.h"

namespace partalign {

/// The largest metadata text partalign parses. lvm2's default metadata area is about 1 MiB and
/// a text copy must fit in half of it; larger text is refused as implausible.
inline constexpr uint64_t kLvmMaxMetadataTextBytes = 16ull * 1024 * 1024;

struct LvmPhysicalVolume {
  std::string name;    ///< "pv0": how segments refer to it
  std::string uuid;    ///< "iXlvul-snGa-...": as FormatLvmUuid prints the label's
  std::string device;  ///< the device path lvm2 last saw it at (a hint only)
  uint64_t pe_start_bytes = 0;
  uint64_t pe_count = 0;
};

struct LvmStripe {
  std::string pv_name;  ///< "pv0"
  uint64_t start_extent = 0;
};

struct LvmSegment {
  uint64_t start_extent = 0;  ///< in the LV
  uint64_t extent_count = 0;
  std::string type;                ///< "striped" (linear is striped with one stripe), "raid1", ...
  uint64_t stripe_count = 0;       ///< 0 when the type has no `stripes` list
  uint64_t stripe_size_bytes = 0;  ///< 0 for a linear segment
  std::vector<LvmStripe> stripes;
};

struct LvmLogicalVolume {
  std::string name;
  std::vector<LvmSegment> segments;
};

struct LvmVolumeGroup {
  std::string name;
  uint64_t seqno = 0;
  uint64_t extent_size_bytes = 0;
  std::vector<LvmPhysicalVolume> physical_volumes;
  std::vector<LvmLogicalVolume> logical_volumes;

  /// The PV whose id is `uuid` (dashed form), or nullptr.
  const LvmPhysicalVolume* FindPvByUuid(std::string_view uuid) const;
};

/// Parses the committed metadata text of one VG. Refuses text over kLvmMaxMetadataTextBytes,
/// nesting deeper than lvm2 writes, malformed syntax (the error names the line), a missing or
/// zero extent size, sizes that overflow when turned into bytes, and segments that refer to a
/// PV the VG does not list.
Result<LvmVolumeGroup> ParseLvmVgMetadata(std::string_view text);

}  // namespace partalign
