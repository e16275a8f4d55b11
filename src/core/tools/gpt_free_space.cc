// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/gpt_free_space.h"

#include <algorithm>

namespace partalign {

bool GptFreeSpace::IsFree(uint64_t s) const {
  if (s < first_ || s > last_) return false;
  return std::none_of(used_.begin(), used_.end(),
                      [&](const Extent& e) { return s >= e.start && s <= e.end; });
}

uint64_t GptFreeSpace::FirstAvailable(uint64_t start) const {
  uint64_t first = std::max(start, first_);
  bool moved;
  do {
    moved = false;
    for (const Extent& e : used_) {
      if (first >= e.start && first <= e.end) {
        first = e.end + 1;
        moved = true;
      }
    }
  } while (moved);
  return first > last_ ? 0 : first;
}

uint64_t GptFreeSpace::LastFree(uint64_t start) const {
  uint64_t nearest = last_;
  for (const Extent& e : used_) {
    if (nearest > e.start && e.start > start) nearest = e.start - 1;
  }
  return nearest;
}

uint64_t GptFreeSpace::FirstInLargest() const {
  uint64_t start = 0, best = 0, best_size = 0;
  for (;;) {
    uint64_t first = FirstAvailable(start);
    if (first == 0) break;
    uint64_t last = LastFree(first);
    if (last - first + 1 > best_size) {
      best_size = last - first + 1;
      best = first;
    }
    start = last + 1;
  }
  return best;
}

}  // namespace partalign
