// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/used/used_map.h"

#include <algorithm>

namespace partalign {
namespace {

// Sorts `ranges` and merges overlapping or touching ones, OR-ing their reasons.
std::vector<UsedRange> Merged(std::vector<UsedRange> ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const UsedRange& a, const UsedRange& b) { return a.offset_bytes < b.offset_bytes; });
  std::vector<UsedRange> out;
  for (const UsedRange& r : ranges) {
    if (!out.empty() && r.offset_bytes <= out.back().offset_bytes + out.back().length_bytes) {
      UsedRange& last = out.back();
      const uint64_t end =
          std::max(last.offset_bytes + last.length_bytes, r.offset_bytes + r.length_bytes);
      last.length_bytes = end - last.offset_bytes;
      last.reasons |= r.reasons;
      continue;
    }
    out.push_back(r);
  }
  return out;
}

uint64_t TotalBytes(const std::vector<UsedRange>& ranges) {
  uint64_t total = 0;
  for (const UsedRange& r : ranges) total += r.length_bytes;
  return total;
}

}  // namespace

const char* ToString(UsedReason reason) {
  switch (reason) {
    case UsedReason::kWhole:
      return "whole";
    case UsedReason::kHead:
      return "head";
    case UsedReason::kBeyondFilesystem:
      return "beyond-filesystem";
    case UsedReason::kSuperblock:
      return "superblocks";
    case UsedReason::kAllocated:
      return "allocated";
    case UsedReason::kUninitGroup:
      return "uninit-groups";
    case UsedReason::kJournal:
      return "journal";
    case UsedReason::kFatTables:
      return "fat-tables";
    case UsedReason::kSwapHeader:
      return "swap-header";
    case UsedReason::kLvmMetadata:
      return "lvm-metadata";
    case UsedReason::kLvmExtents:
      return "lvm-extents";
    case UsedReason::kBtrfsDevExtents:
      return "btrfs-dev-extents";
  }
  return "unknown";
}

UsedMap UsedMap::Whole(uint64_t length_bytes, std::string note) {
  UsedMap map(length_bytes);
  map.Add(0, length_bytes, UsedReason::kWhole);
  if (!note.empty()) map.AddNote(std::move(note));
  return map;
}

UsedMap UsedMap::WholeBecause(uint64_t length_bytes, const std::string& type,
                              const std::string& why) {
  const std::string name = type.empty() ? "unknown" : type;
  UsedMap map = Whole(length_bytes, name + ": " + why + "; the whole partition is copied");
  map.source = name + ": whole partition";
  return map;
}

void UsedMap::Add(uint64_t offset_bytes, uint64_t length_bytes, UsedReason reason) {
  if (offset_bytes >= length_bytes_ || length_bytes == 0) return;
  const uint64_t length = std::min(length_bytes, length_bytes_ - offset_bytes);
  std::vector<UsedRange>& list = added_[static_cast<size_t>(reason)];
  // Providers add in ascending order: extend the last range instead of growing the list.
  if (!list.empty() && list.back().offset_bytes + list.back().length_bytes == offset_bytes) {
    list.back().length_bytes += length;
  } else {
    list.push_back({offset_bytes, length, ReasonBit(reason)});
  }
  dirty_ = true;
}

void UsedMap::Normalize() const {
  if (!dirty_) return;
  std::vector<UsedRange> all;
  for (const std::vector<UsedRange>& list : added_) all.insert(all.end(), list.begin(), list.end());
  merged_ = Merged(std::move(all));
  dirty_ = false;
}

const std::vector<UsedRange>& UsedMap::ranges() const {
  Normalize();
  return merged_;
}

uint64_t UsedMap::used_bytes() const { return TotalBytes(ranges()); }

std::array<uint64_t, kUsedReasonCount> UsedMap::BytesByReason() const {
  std::array<uint64_t, kUsedReasonCount> bytes{};
  for (size_t i = 0; i < kUsedReasonCount; ++i) bytes[i] = TotalBytes(Merged(added_[i]));
  return bytes;
}

std::vector<ChunkRun> ChunkRunsOf(const UsedMap& map, uint64_t chunk_bytes) {
  std::vector<ChunkRun> runs;
  if (chunk_bytes == 0) return runs;
  for (const UsedRange& r : map.ranges()) {
    const uint64_t first = r.offset_bytes / chunk_bytes;
    const uint64_t last = (r.offset_bytes + r.length_bytes - 1) / chunk_bytes;
    if (!runs.empty() && first <= runs.back().first_chunk + runs.back().chunk_count) {
      ChunkRun& run = runs.back();
      run.chunk_count = std::max(run.chunk_count, last + 1 - run.first_chunk);
      continue;
    }
    runs.push_back({first, last + 1 - first});
  }
  return runs;
}

uint64_t ChunkTotal(const std::vector<ChunkRun>& runs) {
  uint64_t total = 0;
  for (const ChunkRun& r : runs) total += r.chunk_count;
  return total;
}

}  // namespace partalign
