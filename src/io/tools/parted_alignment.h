// SPDX-License-Identifier: GPL-3.0-or-later
// libparted, asked live: the version linked into partalign and the minimum and optimum
// alignment it computes for a device or image (ped_device_get_minimum_alignment,
// ped_device_get_optimum_alignment). The only file that includes <parted/parted.h>. Read-only:
// ped_device_get() probes with a read-only open; nothing is ever committed.
#pragma once

#include <string>

#include "partalign/tools/explain_report.h"

namespace partalign {

/// Fills the libparted fields of `live` (version, minimum and optimum alignment, or
/// parted_error) for `path`. libparted's exceptions are recorded, never printed.
void QueryPartedAlignment(const std::string& path, LiveAlignment* live);

}  // namespace partalign
