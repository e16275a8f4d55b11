// SPDX-License-Identifier: GPL-3.0-or-later
// How the contents of a partition are made smaller, by the tool made for them, or why they
// cannot be (docs/resize.md). Pure: which tool for which libblkid TYPE, the size a shrunk
// partition's filesystem gets, and the changes a tool made, as ranges to journal.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "partalign/util/byte_extent.h"
#include "partalign/util/units.h"

namespace partalign {

/// The tool that shrinks a partition's contents. Each runs on a scratch copy of the partition,
/// never on the disk (docs/resize.md, "Why a scratch copy").
enum class ShrinkTool {
  kResize2fs,   ///< ext2/3/4: e2fsck -f, resize2fs, e2fsck -fn (e2fsprogs)
  kNtfsresize,  ///< NTFS: ntfsresize --check, ntfsresize, ntfsresize --check (ntfs-3g)
  kFatResize,   ///< FAT12/16/32: libparted's FAT resizer (libparted-fs-resize), fsck.fat -n
  kMkswap,      ///< Linux swap: re-created smaller by mkswap, same UUID, label and page size
};

/// "resize2fs", "ntfsresize", "libparted-fat", "mkswap": stable names for JSON and journals.
const char* ToString(ShrinkTool tool);
std::optional<ShrinkTool> ShrinkToolFromString(std::string_view name);

struct ShrinkWay {
  std::optional<ShrinkTool> tool;  ///< nullopt: the contents cannot be shrunk
  std::string reason;              ///< why not, when tool is nullopt
};

/// How small a partition's contents can be made, as read from the disk (ReadShrinkLimit,
/// src/io/resize/shrink_limit.h): what the room search offers (way_through.h) and what apply
/// checks a plan's shrink against (plan_check.h).
struct ShrinkOffer {
  uint32_t partition = 0;
  std::optional<ShrinkTool> tool;  ///< nullopt: the contents cannot be shrunk (`reason`)
  std::string reason;
  uint64_t min_bytes = 0;   ///< the smallest size the partition may be given
  uint64_t used_bytes = 0;  ///< what its contents use, for the person
  bool operator==(const ShrinkOffer&) const = default;
};

/// The way for libblkid's TYPE `fs_type` ("" when it found none). XFS cannot shrink; btrfs
/// shrinks only mounted; encrypted, LVM, RAID members and unknown contents are not looked into.
ShrinkWay ShrinkWayFor(std::string_view fs_type);

/// The size, in bytes, that `tool` is asked to give the contents of a partition shrunk to
/// `partition_bytes`: the whole partition, except NTFS, whose volume ends one sector before
/// its partition (the last sector holds the backup boot sector, as Windows formats it).
uint64_t ShrunkContentsBytes(ShrinkTool tool, uint64_t partition_bytes,
                             uint64_t logical_sector_size);

/// The smallest size partalign lets `tool` shrink contents of `contents_bytes` to, of which the
/// contents use `used_bytes` (their own free-space map: ext's bitmaps, FAT's clusters, NTFS's
/// $Bitmap): the used bytes and a reserve the tool needs to lay them out again (the larger of
/// 16 MiB and a twentieth of the contents; a shrink that needs more free space than that is
/// refused by the plan, and one the tool finds too tight by the tool on its scratch copy,
/// before anything is written). A swap area keeps at least kMinSwapBytes.
uint64_t ShrinkFloorBytes(ShrinkTool tool, uint64_t used_bytes, uint64_t contents_bytes);

/// The smallest size a FAT volume whose boot sector is `boot` (its first 512 bytes) can be
/// shrunk to keeping its type and its cluster size: FAT32 needs at least 65525 clusters and
/// FAT16 4085 (Microsoft's FAT specification decides the type by the cluster count), after its
/// reserved sectors, FATs and root directory as they are now. Below it libparted's FAT resizer
/// changes the cluster size or the type (measured: a FAT32 of 4 KiB clusters shrunk to
/// libparted's own minimum came out with 33639 clusters, which fsck.fat then repaired).
/// nullopt for bytes that are not a FAT boot sector.
std::optional<uint64_t> FatTypeFloorBytes(std::span<const uint8_t> boot);

/// The boot sector a shrunk FAT volume gets: `resized`'s layout fields (bytes and sectors per
/// cluster, reserved sectors, FATs, root entries, total sectors, FAT size, and FAT32's root
/// cluster, FSInfo and backup boot sector) in `old` (everything else: the jump and boot code,
/// the OEM name, the media byte, the CHS geometry, the hidden sectors, the drive number, the
/// volume ID and label). libparted's FAT resizer writes a boot sector of its own, which names the
/// volume "NO NAME" and counts the hidden sectors from its device's start (fsck.fat then wants
/// to copy the label back from the root directory). Both must be 512 bytes or more.
std::vector<uint8_t> FatBootSectorAfterResize(std::span<const uint8_t> old,
                                              std::span<const uint8_t> resized);

/// mkswap refuses fewer than 10 pages; partalign keeps a swap area at least 1 MiB.
inline constexpr uint64_t kMinSwapBytes = 1 * kMiB;
inline constexpr uint64_t kShrinkReserveBytes = 16 * kMiB;

/// The ranges a tool changed, ready to journal: sector-aligned (a journal writes whole
/// sectors), sorted, and merged where they are less than `gap_bytes` apart. When more than
/// `max_ranges` remain, the gap doubles until they fit: a merged range rewrites the unchanged
/// bytes between two changes with themselves, which is harmless and keeps the journal's
/// header (one entry per range) small.
std::vector<ByteExtent> CoalesceChanges(std::vector<ByteExtent> changes, uint64_t sector_bytes,
                                        uint64_t gap_bytes, size_t max_ranges);

/// Merging changes closer than this costs less than another journal entry (whose bytes are
/// padded to 4 KiB anyway).
inline constexpr uint64_t kChangeGapBytes = 64 * kKiB;
/// Journal entries a shrink may have: each takes about 150 bytes of the 64 KiB header.
inline constexpr size_t kMaxChangeRanges = 256;

}  // namespace partalign
