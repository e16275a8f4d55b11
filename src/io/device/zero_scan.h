// SPDX-License-Identifier: GPL-3.0-or-later
// Proving a byte range empty: an image file's hole map (SEEK_DATA/SEEK_HOLE), or reading every
// byte. The only proofs besides the user's word that a partition holds nothing
// (docs/audit-plan.md, "Empty is proven").
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "io/block/direct_reads.h"
#include "partalign/util/result.h"

namespace partalign {

/// True when [offset, offset + length) of a sparse image file is all holes (reads as zeros)
/// without reading it: SEEK_DATA finds no data before its end. Block devices report all data
/// (the generic lseek), and so do file systems without SEEK_DATA: false for them.
bool IsAllHoles(int fd, uint64_t offset, uint64_t length);

/// Called now and then while a range is read: bytes examined so far (holes count as examined),
/// and the range's length.
using ZeroScanProgress = std::function<void(uint64_t done_bytes, uint64_t total_bytes)>;

/// Reads [offset, offset + length) of `fd` (a disk, partition or image; holes of an image file
/// are skipped, not read) up to the first byte that is not zero. Returns that byte's offset
/// from `offset`, or nullopt when every byte is zero. An error when a read fails or the range
/// ends early (past the end of the file or device): a range that cannot be read is not empty.
Result<std::optional<uint64_t>> FindFirstNonZero(int fd, const std::string& path, uint64_t offset,
                                                 uint64_t length,
                                                 const ZeroScanProgress& progress = {});

/// FindFirstNonZero of each of many short ranges of `fd` (the heads of every partition an audit
/// probes). On a block device, read with O_DIRECT, a batch of ranges in flight at once, so that
/// the page cache is neither filled nor copied from; a range that cannot be read so (a 4Kn
/// device, an odd offset, a failed read), and every range of an image file (its holes skipped,
/// its page cache kept), is scanned by FindFirstNonZero, which reports a real error as such.
/// One result per range, in order.
Result<std::vector<std::optional<uint64_t>>> FindFirstNonZeroInEach(
    int fd, const std::string& path, std::span<const ByteRange> ranges);

}  // namespace partalign
