// SPDX-License-Identifier: GPL-3.0-or-later
// The way on after a translate that was interrupted (killed, power lost) part-way through its
// table write: the disk holds some of the new table's sectors and some of the old one's, which
// no command reads as one table. Translate's backup puts the old table back (restore proves the
// disk is the backup's by its partitions' contents, also when no table is left), and translate
// then starts over. Said by every command that reads the table (audit, plan, report, the
// planner: LoadDisk) and by translate itself, which refuses to start from a torn table
// (docs/migration.md, "Interrupted").
#pragma once

#include <optional>
#include <string>

#include "partalign/topology/device.h"

namespace partalign {

/// When a translate of the disk at `path` (probed as `device`) was interrupted and left its
/// table torn: one sentence naming both commands, "a translate of '/dev/sdb' was interrupted
/// part-way through its table write (its backup: B); put the old table back with 'partalign
/// restore B', then run 'partalign translate --from-sector-size 512 /dev/sdb' again". nullopt
/// when no such translate is marked (table_write_marker.h), or the disk holds its old or its
/// new table whole.
std::optional<std::string> InterruptedTranslateAdvice(const std::string& path,
                                                      const DeviceInfo& device);

}  // namespace partalign
