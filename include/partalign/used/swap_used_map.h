// SPDX-License-Identifier: GPL-3.0-or-later
// Linux swap: only the header page holds anything that outlives the swap area's use (the
// signature, UUID, label and size; mkswap's format, util-linux disk-utils/mkswap.c) - unless
// the area holds a hibernation image, which must not be moved at all.
#pragma once

#include "partalign/used/byte_source.h"
#include "partalign/used/used_map.h"
#include "partalign/util/result.h"

namespace partalign {

/// The used map of the swap area in `source`: its header page (the first 64 KiB, which covers
/// every page size Linux uses), and whatever lies past the area's last page (its size from the
/// header; every byte after the header page when the header does not say). An error when the area
/// holds a hibernation image (ReadSwapSignature, partalign/used/swap_signature.h: the swsuspend
/// signatures libblkid knows): resuming from it after a move would restore a machine whose disk
/// no longer matches. The whole range, with a note, when no swap signature is found at the end of
/// any page size.
Result<UsedMap> SwapUsedMap(const ByteSource& source);

}  // namespace partalign
