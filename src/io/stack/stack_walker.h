// SPDX-License-Identifier: GPL-3.0-or-later
// The stack walk: from a partition (or a whole disk), what lies inside, layer by layer - LUKS
// (libcryptsetup), an LVM2 PV and the segments of its LVs on this PV (own parser), an MD
// member (own parser), a filesystem (libblkid, and the superblock for stripe geometry) - with
// each layer's absolute data offset and geometry. Composes the readers of this folder; the
// checks are the core's (partalign/stack/stack_check.h). docs/stack.md says what is walked
// into and what is not (ciphertext, the other members of a striped array, other PVs).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "partalign/stack/stack_layer.h"

namespace partalign {

/// Layers nest at most this deep (partition > MD > LUKS > PV > LV > filesystem is 5).
inline constexpr int kMaxStackDepth = 6;

/// Walks [offset, offset + size) of `fd`. `known_type` is what libblkid already found there
/// (PartitionContents::fs_type), so that empty partitions cost nothing; pass std::nullopt to
/// probe (a whole disk). Never fails as a whole: what cannot be read ends up in `errors`.
StackWalk WalkStack(int fd, const std::string& path, uint64_t offset, uint64_t size,
                    std::optional<std::string_view> known_type);

}  // namespace partalign
