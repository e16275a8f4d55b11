// SPDX-License-Identifier: GPL-3.0-or-later
// Many small ranges of a disk read at the device's speed: one O_DIRECT descriptor, every read
// in flight together (TransferAll), instead of one buffered read after the other, each waiting
// for the device (a block device's page cache is empty at each open).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/block/block_io.h"
#include "partalign/util/result.h"

namespace partalign {

/// Reads every range of `path` (read-only; O_DIRECT when the device or file system allows it
/// and every offset and length is a multiple of 512, buffered otherwise), all requests in
/// flight together. The buffers, one per range in order, hold exactly its bytes (an
/// AlignedBuffer is a whole number of pages: the bytes past `length` are not the disk's). An
/// error when any read fails or a range ends past the end of `path`.
Result<std::vector<AlignedBuffer>> ReadRanges(const std::string& path,
                                              const std::vector<ByteRange>& ranges);

}  // namespace partalign
