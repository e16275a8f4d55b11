// SPDX-License-Identifier: GPL-3.0-or-later
// Completing an interrupted move (data and partition table) or rolling it back to the old
// layout, from whatever instant the interruption hit - after proving that the disk holds the
// state the journal describes (docs/mover.md §7). A disk finds its journal through the registry
// and the journal directory; without one, every unfinished move is listed. Then the kernel is
// told, as apply does. `partalign resume` and the boot runner (docs/at-boot.md) run this.
#pragma once

#include <string>

#include "cli/commands.h"

namespace partalign {

struct ResumeCommand {
  std::string what;  ///< a journal or a disk; empty: list every unfinished move
  std::string device;
  bool rollback = false;
  bool forget = false;
  bool yes = false;
  bool progress = false;
};

/// Runs `partalign resume` as `command` says; prints what it does on `io`, returns the exit
/// status (a disk without an unfinished move: kOk, saying so).
ExitCode RunResume(const ResumeCommand& command, Streams io);

}  // namespace partalign
