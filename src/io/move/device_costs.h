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
///
/// `ordered_cheaper`, when given, is asked once with the rates measured: true (the ordered way
/// would be taken) measures the 8 MiB again, on blocks of the probe not yet written as the
/// first were, and keeps the faster of the two stream rates (DeviceCosts::stream_samples). The
/// stream rate rests on one flush, which now and then waits behind the machine's other writes:
/// with the test suite running beside, 1 move in 40 of scripts/bench-move's 25% partition
/// measured 465 MiB/s (710 MiB/s-1.58 GiB/s in the other 39) and took the ordered way; beside
/// a compile, a move of the full partition took it and 3.77 s, against 1.58-1.59 s with saved
/// copies. Taking the ordered way wrongly costs its flushes, as many as its chunks, each as
/// slow as the machine makes it; taking saved copies wrongly costs their writes and a flush per
/// batch. So only a choice of the ordered way is measured twice, and a move that takes saved
/// copies starts as fast as before.
inline constexpr uint64_t kOrderedCyclesPerLook = 4;
using CostsDecided = std::function<bool(const DeviceCosts& so_far)>;
Result<DeviceCosts> MeasureDeviceCosts(const std::string& journal_path,
                                       uint64_t ordered_chunk_bytes,
                                       const CostsDecided& decided = {},
                                       const CostsDecided& ordered_cheaper = {});

}  // namespace partalign
