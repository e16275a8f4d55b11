// SPDX-License-Identifier: GPL-3.0-or-later
// Where partalign keeps what must survive a reboot (the registry of unfinished moves, table
// backups, table-write markers, a plan staged for the next boot): $PARTALIGN_STATE_DIR, or
// /var/lib/partalign (FHS: state data that must persist across reboots).
#pragma once

#include <string>

namespace partalign {

/// $PARTALIGN_STATE_DIR when set and not empty, else "/var/lib/partalign"; read at each call
/// (the boot runner points it at the journal partition: docs/at-boot.md).
std::string StateDir();

}  // namespace partalign
