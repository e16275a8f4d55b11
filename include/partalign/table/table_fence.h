// SPDX-License-Identifier: GPL-3.0-or-later
// A fence: the table with one partition's entry taken out, written while that partition's data
// moves at boot, so that no system booted meanwhile (a live USB, the initramfs of an older
// kernel) finds a half-moved filesystem to mount (docs/at-boot.md, "The fence"). Pure: the
// table's bytes in, the fenced bytes out.
#pragma once

#include <cstdint>

#include "partalign/table/table_transition.h"
#include "partalign/util/result.h"

namespace partalign {

/// The transition from the table `step` starts from (the old bytes of its ranges that the old
/// table uses) to the same table without partition `number`: on a GPT its entry zeroed in the
/// primary and the backup array and both headers' CRCs recomputed; on a DOS disk a primary's
/// 16-byte entry zeroed. A DOS logical partition keeps its entry, since taking it out would
/// renumber those after it (another partition would take its name): the entry in its EBR
/// points at a one-sector placeholder `placeholder_after_ebr` sectors after the EBR (the
/// caller finds a sector no partition or table area holds). Every other byte is kept; the
/// ranges are in the crash-safe write order (SortForWrite); the unchanged ones are kept, as in
/// any transition. Fails, saying why, for a DOS extended partition (it holds the logical ones),
/// a placeholder inside the partition itself, a partition the table has no entry for, or a
/// table whose header or entries are not where its ranges say.
Result<TableTransition> FenceTransition(const TableTransition& step, uint32_t number,
                                        uint64_t placeholder_after_ebr = 1);

}  // namespace partalign
