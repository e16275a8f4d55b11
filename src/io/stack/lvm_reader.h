// SPDX-License-Identifier: GPL-3.0-or-later
// An LVM2 physical volume read from a region of a disk or image, without the lvm2 tools (they
// need block devices and scan the host's disks): the label, then the first metadata area whose
// header and committed text check out, parsed into the VG (partalign/stack/lvm_label.h,
// lvm_vg_metadata.h). Every read is bounded by the region and by kLvmMaxMetadataTextBytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partalign/stack/lvm_label.h"
#include "partalign/stack/lvm_vg_metadata.h"
#include "partalign/util/result.h"

namespace partalign {

struct LvmPvRead {
  LvmLabel label;
  /// The VG the PV belongs to; nullopt for a PV in no VG (an orphan: pvcreate alone) or whose
  /// metadata areas are all ignored.
  std::optional<LvmVolumeGroup> vg;
  /// This PV's entry in the VG (its name there, "pv0"); empty when vg is nullopt.
  std::string pv_name;
  /// Metadata areas that were skipped, and why (a damaged first copy when the second is good).
  std::vector<std::string> warnings;
};

/// Reads the PV at [offset, offset + size) of `fd`. Fails when the label is missing or broken,
/// or when every metadata area that should hold text is unreadable.
Result<LvmPvRead> ReadLvmPv(int fd, const std::string& path, uint64_t offset, uint64_t size);

}  // namespace partalign
