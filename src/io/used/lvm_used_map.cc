// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/used/lvm_used_map.h"

#include <fmt/format.h>

#include "io/stack/lvm_reader.h"

namespace partalign {

UsedMap ReadLvmUsedMap(int fd, const std::string& path, uint64_t offset_bytes,
                       uint64_t length_bytes) {
  Result<LvmPvRead> pv = ReadLvmPv(fd, path, offset_bytes, length_bytes);
  if (!pv) return UsedMap::WholeBecause(length_bytes, "LVM2_member", pv.error().message);
  const LvmLabel& label = pv->label;
  UsedMap map(length_bytes);
  map.source = "LVM2_member: PV label, metadata areas and allocated extents";
  map.Add(0, kUsedHeadBytes, UsedReason::kHead);
  map.Add(0, label.pe_start_bytes(), UsedReason::kLvmMetadata);
  for (const LvmDiskArea& mda : label.metadata_areas) {
    map.Add(mda.offset_bytes, mda.size_bytes, UsedReason::kLvmMetadata);
  }
  // Past the PV (pvresize made it smaller than its partition): not LVM's, so data.
  if (label.device_size_bytes != 0 && label.device_size_bytes < length_bytes) {
    map.Add(label.device_size_bytes, length_bytes - label.device_size_bytes,
            UsedReason::kBeyondFilesystem);
  }
  if (!pv->vg) {
    map.AddNote(
        "LVM2_member: the PV belongs to no volume group: only its label and metadata "
        "are copied");
    return map;
  }
  const LvmVolumeGroup& vg = *pv->vg;
  const LvmPhysicalVolume* self = nullptr;
  for (const LvmPhysicalVolume& p : vg.physical_volumes) {
    if (p.name == pv->pv_name) self = &p;
  }
  if (self == nullptr || vg.extent_size_bytes == 0) {
    return UsedMap::WholeBecause(length_bytes, "LVM2_member",
                                 "the PV is not in its volume group's metadata");
  }
  // Extents [first, first + count) of this PV, as bytes; false when they leave it.
  auto add_extents = [&](uint64_t first, uint64_t count) {
    if (first > self->pe_count || count > self->pe_count - first) return false;
    const uint64_t at = self->pe_start_bytes + first * vg.extent_size_bytes;
    const uint64_t bytes = count * vg.extent_size_bytes;
    if (at > length_bytes || bytes > length_bytes - at) return false;
    map.Add(at, bytes, UsedReason::kLvmExtents);
    return true;
  };
  if (self->pe_count > length_bytes / vg.extent_size_bytes) {
    return UsedMap::WholeBecause(length_bytes, "LVM2_member",
                                 fmt::format("{} extents of {} bytes do not fit the partition",
                                             self->pe_count, vg.extent_size_bytes));
  }
  for (const LvmLogicalVolume& lv : vg.logical_volumes) {
    for (const LvmSegment& seg : lv.segments) {
      for (const LvmStripe& stripe : seg.stripes) {
        if (stripe.pv_name != self->name) continue;
        if (seg.type != "striped" || seg.stripe_count == 0 ||
            seg.stripes.size() != seg.stripe_count || seg.extent_count % seg.stripe_count != 0) {
          return UsedMap::WholeBecause(
              length_bytes, "LVM2_member",
              fmt::format("LV '{}' has a '{}' segment on this PV that partalign does not read",
                          lv.name, seg.type));
        }
        if (!add_extents(stripe.start_extent, seg.extent_count / seg.stripe_count)) {
          return UsedMap::WholeBecause(
              length_bytes, "LVM2_member",
              fmt::format("LV '{}' places extents beyond the PV's {}", lv.name, self->pe_count));
        }
      }
    }
  }
  for (const std::string& warning : pv->warnings) map.AddNote("LVM2_member: " + warning);
  return map;
}

}  // namespace partalign
