// SPDX-License-Identifier: GPL-3.0-or-later
// How small a partition's contents can be made (docs/resize.md): what `plan --make-room` and the
// planner offer, read from the contents' own free-space maps without writing anything.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "partalign/resize/shrink_way.h"
#include "partalign/util/result.h"

namespace partalign {

struct ShrinkLimit {
  std::optional<ShrinkTool> tool;  ///< nullopt: the contents cannot be shrunk (`reason`)
  std::string reason;
  /// The smallest size the partition may be given (ShrinkFloorBytes of what its contents use),
  /// its whole size when it cannot shrink.
  uint64_t min_bytes = 0;
  uint64_t used_bytes = 0;  ///< what the contents use, for the user
};

/// The limit for the partition at [`offset_bytes`, `offset_bytes` + `length_bytes`) of the open
/// disk `fd` (`path` names it; libext2fs opens it by name) holding libblkid TYPE `fs_type`.
/// Contents whose map cannot be read or that are not clean (a dirty ext4 or FAT, which their
/// used map copies whole) cannot shrink, and say why; so does a swap area holding a hibernation
/// image. FAT asks libparted's FAT resizer for its minimum, on a scratch copy of the volume's
/// used bytes in `scratch_dir` (removed again). An error only when the disk cannot be read.
Result<ShrinkLimit> ReadShrinkLimit(int fd, const std::string& path, uint64_t offset_bytes,
                                    uint64_t length_bytes, const std::string& fs_type,
                                    const std::string& scratch_dir);

}  // namespace partalign
