// SPDX-License-Identifier: GPL-3.0-or-later
// ext4 filesystems made straight into an image file at a byte offset (mke2fs -E offset, -d: no
// mount, no loop device, no root), and checked there after a move (e2fsck -fn, debugfs reads
// every file back).
#pragma once

#include <cstdint>
#include <string>

#include "support/moved_disk.h"
#include "support/temp_dir.h"

namespace partalign::test {

/// An ext4 filesystem (4096-byte blocks) of `sectors` 512-byte sectors at sector `start` of
/// `image`, holding `files` (written to a directory of `dir` named `name` first). Throws on
/// failure.
void MakeExt4At(const std::string& image, uint64_t start, uint64_t sectors, const FileSet& files,
                const TempDir& dir, const std::string& name);

/// "" when the ext4 filesystem of `sectors` 512-byte sectors at sector `start` of `image` is
/// clean (e2fsck -fn on a copy of its bytes) and holds exactly `files`, else what differs.
std::string CheckExt4At(const std::string& image, uint64_t start, uint64_t sectors,
                        const FileSet& files, const TempDir& dir);

}  // namespace partalign::test
