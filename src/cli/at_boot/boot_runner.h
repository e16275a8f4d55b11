// SPDX-License-Identifier: GPL-3.0-or-later
// `partalign at-boot DIR`: what the initramfs runs before the root filesystem is checked and
// mounted (docs/at-boot.md). DIR is where the journal partition of a staged plan is mounted;
// its disk is the one that partition is on. An unfinished move of an earlier boot is resumed,
// then what is left of the staged plan is applied - by the same steps as `partalign resume`
// and `partalign apply`, with the journals, backups and registry on the journal partition.
#pragma once

#include <string>

#include "cli/commands.h"

namespace partalign {

struct AtBootRequest {
  std::string mount_point;
  bool progress = true;
};

/// kOk when the boot may go on: the plan applied (the stage removed), nothing staged, or the
/// plan refused before anything was written (the stage kept, the reason printed). Any other
/// status: the disk may be half-changed, and the boot must stop (the initramfs script panics)
/// so that nothing mounts it; the next boot resumes.
ExitCode RunAtBoot(Streams io, const AtBootRequest& request);

}  // namespace partalign
