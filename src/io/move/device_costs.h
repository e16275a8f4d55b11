// SPDX-License-Identifier: GPL-3.0-or-later
// What a flush and a journal write cost on this machine now: measured at the start of a move,
// before anything is written to the disk, so that the move takes the cheaper of its two safe
// ways (partalign/move/move_way.h, docs/mover.md §5a).
#pragma once

#include <functional>
#include <string>

#include "partalign/move/move_way.h"
#include "partalign/util/result.h"

namespace partalign {

/// Measures, on a scratch file beside `journal_path` (its name plus ".probe", created
/// exclusively, O_DIRECT when the file system has it, removed before returning), the two
/// write patterns DeviceCosts describes: 8 MiB written at once and flushed, and chunks of
/// `ordered_chunk_bytes` (up to 64 of them, at most 8 MiB; fewer when `decided` says so) each
/// written and flushed, then a 4 KiB block written and flushed twice. The journal's storage stands
/// for the disk's: the disk cannot be written before the move starts (on the test machine both are
/// the same virtual disk). Errors say which step failed and where.
///
/// `decided`, when given, is asked after every kOrderedCyclesPerLook chunks of the ordered
/// pattern with the rates measured so far (WayIsClear): true ends the measurement there. Every
/// 4: each chunk costs three flushes (0.3 ms each on the test machine while it works), and the
/// bench's move, whose saved copies are estimated at a third of the ordered way, was decided
/// after 16 chunks, 14-15 ms of the move's start, where 4 decide it too (docs/mover.md §5a).
inline constexpr uint64_t kOrderedCyclesPerLook = 4;
using CostsDecided = std::function<bool(const DeviceCosts& so_far)>;
Result<DeviceCosts> MeasureDeviceCosts(const std::string& journal_path,
                                       uint64_t ordered_chunk_bytes,
                                       const CostsDecided& decided = {});

}  // namespace partalign
