// SPDX-License-Identifier: GPL-3.0-or-later
// Filesystems of every kind partalign shrinks (ext4, NTFS, FAT32, swap), made by their own
// mkfs at a sector of an image file, over pseudo-random bytes (so that a byte a shrink reads
// but never copied shows up as damage), with known files; and the checks that they survived:
// the filesystem's own checker clean and every file read back by its own tools.
#pragma once

#include <cstdint>
#include <string>

#include "support/moved_disk.h"
#include "support/temp_dir.h"

namespace partalign::test {

/// The swap areas these helpers make carry this UUID and label.
inline constexpr const char* kTestSwapUuid = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
inline constexpr const char* kTestSwapLabel = "oldswap";

/// Writes pseudo-random bytes (seeded by `seed`) over `length` bytes of `image` at `offset`.
void FillRandom(const std::string& image, uint64_t offset, uint64_t length, uint64_t seed);

/// Makes a filesystem of libblkid TYPE `type` ("ext4", "ntfs", "vfat" as FAT32, "swap") of
/// `sectors` 512-byte sectors at sector `start` of `image`, holding `files` (none for swap).
/// Throws on failure.
void MakeFilesystemAt(const std::string& image, const std::string& type, uint64_t start,
                      uint64_t sectors, const FileSet& files, const TempDir& dir);

/// "" when the filesystem of `type` in `sectors` sectors at `start` of `image` is clean by its
/// own checker (e2fsck -fn, ntfsfix -n, fsck.fat -n; for swap: the UUID, label and page size it
/// was made with, and a size that fits) and holds exactly `files` (NTFS read with ntfscat
/// --force: a volume ntfsresize shrank is marked for Windows' chkdsk); else what is wrong.
std::string CheckFilesystemAt(const std::string& image, const std::string& type, uint64_t start,
                              uint64_t sectors, const FileSet& files, const TempDir& dir);

}  // namespace partalign::test
