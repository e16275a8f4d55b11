// SPDX-License-Identifier: GPL-3.0-or-later
// Loop devices for files partalign makes itself (demo --ssd): attach a file with direct I/O
// (LOOP_CTL_GET_FREE, then LOOP_CONFIGURE, as losetup does) and detach it by name.
#pragma once

#include <string>

#include "partalign/util/result.h"

namespace partalign {

/// Attaches `file` to a free loop device, with direct I/O (O_DIRECT on the file, so that every
/// I/O reaches it with its own offset and length, uncached) and partition scanning allowed (what
/// libfdisk and BLKPG expect). Returns the device's path ("/dev/loop3"). Retries when another
/// program takes the free device first.
Result<std::string> AttachLoop(const std::string& file);

/// Detaches the loop device `path` (LOOP_CLR_FD). Partition nodes added through BLKPG survive
/// a detach (environment.md): delete them first.
Status DetachLoop(const std::string& path);

}  // namespace partalign
