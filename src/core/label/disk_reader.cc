// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/label/disk_reader.h"

#include <algorithm>

#include <fmt/format.h>

#include "partalign/util/checked_math.h"

namespace partalign {

Status SparseDisk::ReadAt(uint64_t offset_bytes, std::span<uint8_t> out) const {
  std::optional<uint64_t> end = CheckedAdd(offset_bytes, out.size());
  if (!end || *end > size_bytes_) {
    return MakeError(fmt::format("cannot read {} bytes at byte {}: the disk has {} bytes",
                                 out.size(), offset_bytes, size_bytes_));
  }
  std::fill(out.begin(), out.end(), uint8_t{0});
  // The first run that may overlap: the last one starting at or before offset_bytes.
  auto it = runs_.upper_bound(offset_bytes);
  if (it != runs_.begin()) --it;
  for (; it != runs_.end() && it->first < *end; ++it) {
    const uint64_t run_begin = it->first;
    const uint64_t run_end = run_begin + it->second.size();
    const uint64_t from = std::max(run_begin, offset_bytes);
    const uint64_t to = std::min(run_end, *end);
    if (from >= to) continue;
    std::copy(it->second.begin() + static_cast<ptrdiff_t>(from - run_begin),
              it->second.begin() + static_cast<ptrdiff_t>(to - run_begin),
              out.begin() + static_cast<ptrdiff_t>(from - offset_bytes));
  }
  return {};
}

void SparseDisk::Write(uint64_t offset_bytes, std::span<const uint8_t> bytes) {
  if (offset_bytes >= size_bytes_ || bytes.empty()) return;
  const uint64_t length = std::min<uint64_t>(bytes.size(), size_bytes_ - offset_bytes);
  uint64_t begin = offset_bytes;
  uint64_t end = offset_bytes + length;
  // Merge with every run that overlaps or touches [begin, end): the result is one run.
  auto first = runs_.upper_bound(begin);
  if (first != runs_.begin()) {
    auto before = std::prev(first);
    if (before->first + before->second.size() >= begin) first = before;
  }
  auto last = first;
  while (last != runs_.end() && last->first <= end) ++last;
  if (first != last) {
    begin = std::min(begin, first->first);
    auto back = std::prev(last);
    end = std::max<uint64_t>(end, back->first + back->second.size());
  }
  std::vector<uint8_t> merged(end - begin, 0);
  for (auto it = first; it != last; ++it) {
    std::copy(it->second.begin(), it->second.end(),
              merged.begin() + static_cast<ptrdiff_t>(it->first - begin));
  }
  std::copy(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(length),
            merged.begin() + static_cast<ptrdiff_t>(offset_bytes - begin));
  runs_.erase(first, last);
  runs_.emplace(begin, std::move(merged));
}

}  // namespace partalign
