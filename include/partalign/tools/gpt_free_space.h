// SPDX-License-Identifier: GPL-3.0-or-later
// Free space on a GPT the way GPT fdisk finds it (gpt.cc: FindFirstAvailable, FindLastInFree,
// FindFirstInLargest, IsFree) and libfdisk copied it (gpt.c: find_first_available,
// find_last_free, find_first_in_largest, "From gdisk"): both sgdisk's `-n 0:0:...` and
// sfdisk's default start begin at the first sector of the largest free area. Restated; no
// upstream code is copied.
#pragma once

#include <cstdint>
#include <vector>

namespace partalign {

class GptFreeSpace {
 public:
  GptFreeSpace(uint64_t first_usable_lba, uint64_t last_usable_lba)
      : first_(first_usable_lba), last_(last_usable_lba) {}

  /// A partition that now uses [start, end] (sectors, inclusive).
  void Use(uint64_t start, uint64_t end) { used_.push_back({start, end}); }

  /// Inside the usable area and no partition's.
  bool IsFree(uint64_t sector) const;
  /// The first free sector at or after `start` (and FirstUsableLBA); 0 when there is none.
  uint64_t FirstAvailable(uint64_t start) const;
  /// The last sector before the next partition that starts after `start`, or LastUsableLBA.
  uint64_t LastFree(uint64_t start) const;
  /// The first sector of the largest free area (the first of equal ones); 0 when none.
  uint64_t FirstInLargest() const;

  uint64_t first_usable() const { return first_; }
  uint64_t last_usable() const { return last_; }

 private:
  struct Extent {
    uint64_t start;
    uint64_t end;
  };
  uint64_t first_, last_;
  std::vector<Extent> used_;
};

}  // namespace partalign
