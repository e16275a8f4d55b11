// SPDX-License-Identifier: GPL-3.0-or-later
// ext2/3/4: the used map from the filesystem's own block bitmaps, through libext2fs (the
// library e2fsck, e2image and partclone.extfs read them with). The only file that includes
// <ext2fs/ext2fs.h>.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partalign/used/used_map.h"
#include "partalign/util/result.h"

namespace partalign {

/// The used map of the ext2/3/4 filesystem at [offset, offset + length) of `path` (a disk or an
/// image; the filesystem is read in place, through libext2fs's "offset=" option):
/// - allocated blocks, from the block bitmaps (libext2fs synthesises those of BLOCK_UNINIT
///   groups: their superblock and descriptor backups, bitmaps and inode table);
/// - every group's superblock and descriptor backups (reserved GDT blocks included) and every
///   group's bitmaps and inode table, explicitly, with their reasons;
/// - the internal journal's blocks; the first 64 KiB; everything after the filesystem's end.
/// The whole range, with a note, when libext2fs cannot open or read the filesystem, when it
/// needs recovery (needs_recovery), was not cleanly unmounted or has errors, or is larger than
/// the range. Never fails: what it cannot read it copies.
UsedMap ReadExtUsedMap(const std::string& path, uint64_t offset_bytes, uint64_t length_bytes);

/// The first bytes (up to `head_bytes`) of each of `files` ("/swapfile": paths from the root,
/// symbolic links not followed) in the ext2/3/4 filesystem at [offset, offset + length) of
/// `path`, read-only: nullopt for a name that is not a regular file there. What the swap files
/// of a hibernated system hold (docs/used-map.md, "Hibernation is a refusal"). An error when
/// libext2fs cannot open the filesystem.
Result<std::vector<std::optional<std::vector<uint8_t>>>> ReadExtFileHeads(
    const std::string& path, uint64_t offset_bytes, uint64_t length_bytes,
    const std::vector<std::string>& files, uint64_t head_bytes);

}  // namespace partalign
