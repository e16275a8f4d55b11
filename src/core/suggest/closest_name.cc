// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/suggest/closest_name.h"

#include <algorithm>
#include <vector>

namespace partalign {
namespace {

// What a typist reaches for when the letter is meant: 0 for o, 1 for l.
char LooksLike(char c) {
  if (c == '0') return 'o';
  if (c == '1') return 'l';
  return c;
}

size_t MaxDistance(size_t length) {
  if (length <= 2) return 0;  // "-x": any other letter is as near as the next
  if (length <= 4) return 1;
  if (length <= 8) return 2;
  return 3;
}

}  // namespace

size_t EditDistance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic programme: the one before the previous for the swap.
  std::vector<size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::optional<std::string> ClosestName(std::string_view typed,
                                       const std::vector<std::string>& names) {
  if (typed.empty()) return std::nullopt;
  std::string seen(typed);
  std::transform(seen.begin(), seen.end(), seen.begin(), LooksLike);
  std::vector<const std::string*> prefixed;
  for (const std::string& name : names) {
    if (name.size() > seen.size() && name.compare(0, seen.size(), seen) == 0) {
      prefixed.push_back(&name);
    }
  }
  if (prefixed.size() == 1) return *prefixed.front();
  const std::string* best = nullptr;
  size_t best_distance = MaxDistance(seen.size()) + 1;
  for (const std::string& name : names) {
    if (name == typed) continue;
    const size_t d = EditDistance(seen, name);
    if (d < best_distance) {
      best = &name;
      best_distance = d;
    }
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

}  // namespace partalign
