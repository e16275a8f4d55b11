// SPDX-License-Identifier: GPL-3.0-or-later
// LVM2 physical volumes: the used map from the PV's label and metadata areas and the extents its
// VG allocates on it, read with the stack walk's LVM2 reader (src/io/stack/lvm_reader.h: the
// label, the first metadata area that checks out, the VG text parsed in the core).
#pragma once

#include <cstdint>
#include <string>

#include "partalign/used/used_map.h"

namespace partalign {

/// The used map of the LVM2 PV at [offset, offset + length) of `fd`: everything before
/// pe_start (the label and the first metadata area), every metadata area (a second one sits at
/// the end), and the extents of every striped (or linear) segment stripe the VG places on this
/// PV; what follows the PV's last extent (pe_count) is not used. Whole, with a note, when the
/// PV or its VG cannot be read, when an extent lies outside the PV, or when a segment that is not
/// striped names this PV directly (an allocation this reader does not understand). Never fails.
UsedMap ReadLvmUsedMap(int fd, const std::string& path, uint64_t offset_bytes,
                       uint64_t length_bytes);

}  // namespace partalign
