// SPDX-License-Identifier: GPL-3.0-or-later
// A disk with an unfinished data move (a kill or a power cut in apply, resume or a rollback)
// holds partitions half moved: what probe, audit, plan, report, snapshot and verify would say of
// it describes neither the old nor the new layout. Each of them looks for the move first (the
// registry and the journal directory, as apply does) and leads with it and the exact command
// that finishes it; the read-only ones go on and exit 4, those that would write a plan, a report
// or a snapshot of the half-moved disk refuse (docs/mover.md, "After an interruption").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cli/commands.h"
#include "partalign/util/result.h"

namespace partalign {

struct UnfinishedMove {
  std::string journal;
  std::string state;  ///< the journal's phase ("moving", "table-writing", ...) or "not started"
  bool registered = true;
};

/// The unfinished moves of the disk `path` (a block device or an image file); empty when it has
/// none or is not something a move could have been made on (a partition, a missing file).
/// Errors reading the registry are returned: a read-only command must not claim there is no
/// move when it could not look.
Result<std::vector<UnfinishedMove>> FindUnfinishedMoves(const std::string& path);

/// "'/dev/sdb' has an unfinished data move (journal 'J', state moving): its partitions are
/// half moved. Finish it first: partalign resume /dev/sdb (or undo it: partalign resume
/// --rollback /dev/sdb)", one line per move, each path quoted for a shell where it needs it.
std::vector<std::string> UnfinishedMoveLines(const std::string& path,
                                             const std::vector<UnfinishedMove>& moves);

/// {"journal", "state", "registered", "resume", "rollback"} objects, for the commands' JSON
/// ("unfinished_moves").
nlohmann::json UnfinishedMovesJson(const std::string& path,
                                   const std::vector<UnfinishedMove>& moves);

/// For the commands that read a disk: looks for unfinished moves of `path`. None: returns
/// nullopt and prints nothing. Some: prints their lines to `io.err` as errors when `refuse`
/// (what the command would write is refused: plan, report, snapshot), else as warnings, and
/// returns them. A registry that cannot be read is a warning, not a refusal (returns nullopt).
std::optional<std::vector<UnfinishedMove>> CheckUnfinishedMoves(Streams io, const std::string& path,
                                                                bool refuse);

/// For the commands whose output would describe the half-moved disk as if it were settled
/// (plan, report, snapshot, verify): true after printing the moves as errors (and, with `json`,
/// a JSON document naming them on `io.out`); the command then exits 4 (kUnfinished).
bool RefuseIfUnfinished(Streams io, const std::string& path, bool json);

}  // namespace partalign
