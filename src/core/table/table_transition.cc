// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/table/table_transition.h"

#include <algorithm>
#include <array>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "partalign/topology/alignment.h"
#include "partalign/util/base64.h"

namespace partalign {
namespace {

constexpr std::array<std::pair<TableAreaRole, std::string_view>, 6> kRoleNames{{
    {TableAreaRole::kMbr, "mbr"},
    {TableAreaRole::kGptHeader, "gpt-header"},
    {TableAreaRole::kGptEntries, "gpt-entries"},
    {TableAreaRole::kGptBackupEntries, "gpt-backup-entries"},
    {TableAreaRole::kGptBackupHeader, "gpt-backup-header"},
    {TableAreaRole::kEbr, "ebr"},
}};

// The order in which fdisk_locate_disklabel() lists the areas of a GPT (libfdisk/src/gpt.c,
// gpt_locate_disklabel(): n = 0..4).
constexpr std::array<TableAreaRole, 5> kGptAreaOrder{
    TableAreaRole::kMbr, TableAreaRole::kGptHeader, TableAreaRole::kGptEntries,
    TableAreaRole::kGptBackupEntries, TableAreaRole::kGptBackupHeader};

// DOS logical partitions are numbered from 5; EBR i of the chain belongs to partition 5 + i
// (libfdisk dos_locate_disklabel(): area n >= 1 is the EBR of pte n - 1 + 4).
constexpr uint32_t kTransitionFirstLogical = 5;

// GPT write order: the backup table first, so that the primary stays valid (old) until the
// backup is complete (new); then the primary entries, which invalidate the primary (its header
// CRC covers them) so readers take the new backup; then the primary header, which makes the
// primary new and valid; the protective MBR last (a GPT reader does not depend on it).
int GptWriteRank(TableAreaRole role) {
  switch (role) {
    case TableAreaRole::kGptBackupEntries:
      return 0;
    case TableAreaRole::kGptBackupHeader:
      return 1;
    case TableAreaRole::kGptEntries:
      return 2;
    case TableAreaRole::kGptHeader:
      return 3;
    case TableAreaRole::kMbr:
    case TableAreaRole::kEbr:
      return 4;
  }
  return 4;
}

// DOS write order: first the sectors only the new table uses (new EBR places: the old chain
// cannot reach them, so the old table stays intact); then the sectors both tables use, which
// switch the disk from the old table to the new one: the old chain's EBRs from its end towards
// its second link, its head, the MBR (the root of everything) last; then the sectors only the
// old table used, which nothing references once the switch is done.
std::pair<int, int64_t> DosWriteKey(const TableRange& r) {
  if (!r.old_index) return {0, static_cast<int64_t>(r.offset_bytes)};
  if (!r.new_index) return {4, static_cast<int64_t>(r.offset_bytes)};
  if (r.role == TableAreaRole::kMbr) return {3, 0};
  if (*r.old_index == 0) return {2, 0};
  return {1, -static_cast<int64_t>(*r.old_index)};
}

bool OverlapByLength(uint64_t a_start, uint64_t a_length, uint64_t b_start, uint64_t b_length) {
  return a_start < b_start + b_length && b_start < a_start + a_length;
}

struct LocatedArea {
  TableAreaRole role;
  uint32_t index;
  uint64_t offset_bytes;
  uint64_t length_bytes;
};

Result<std::vector<LocatedArea>> Locate(LabelType label, uint64_t sector_size,
                                        uint64_t disk_size_bytes,
                                        const std::vector<TableArea>& areas,
                                        std::string_view which) {
  std::vector<LocatedArea> located;
  if (label == LabelType::kGpt && areas.size() != kGptAreaOrder.size()) {
    return MakeError(fmt::format("the {} GPT has {} table areas, not {}", which, areas.size(),
                                 kGptAreaOrder.size()));
  }
  if (label == LabelType::kDos && areas.empty()) {
    return MakeError(fmt::format("the {} DOS table has no MBR area", which));
  }
  for (size_t i = 0; i < areas.size(); ++i) {
    const TableArea& a = areas[i];
    LocatedArea l{};
    if (label == LabelType::kGpt) {
      l.role = kGptAreaOrder[i];
    } else {
      l.role = i == 0 ? TableAreaRole::kMbr : TableAreaRole::kEbr;
      l.index = i == 0 ? 0 : static_cast<uint32_t>(i - 1);
    }
    l.offset_bytes = AlignDown(a.offset_bytes, sector_size);
    uint64_t end = AlignUp(a.offset_bytes + a.size_bytes, sector_size);
    l.length_bytes = end - l.offset_bytes;
    if (a.size_bytes == 0 || end > disk_size_bytes) {
      return MakeError(fmt::format("the {} table's {} at byte {} ({} bytes) is not inside the disk",
                                   which, a.name, a.offset_bytes, a.size_bytes));
    }
    located.push_back(l);
  }
  return located;
}

}  // namespace

std::string_view ToString(TableAreaRole role) {
  for (const auto& [r, name] : kRoleNames) {
    if (r == role) return name;
  }
  return "mbr";
}

std::optional<TableAreaRole> TableAreaRoleFromString(std::string_view text) {
  for (const auto& [r, name] : kRoleNames) {
    if (name == text) return r;
  }
  return std::nullopt;
}

std::string AreaName(LabelType label, const TableRange& range) {
  switch (range.role) {
    case TableAreaRole::kMbr:
      return label == LabelType::kGpt ? "protective MBR" : "MBR";
    case TableAreaRole::kGptHeader:
      return "GPT header";
    case TableAreaRole::kGptEntries:
      return "GPT entries";
    case TableAreaRole::kGptBackupEntries:
      return "GPT backup entries";
    case TableAreaRole::kGptBackupHeader:
      return "GPT backup header";
    case TableAreaRole::kEbr:
      break;
  }
  if (range.new_index && range.old_index) {
    return fmt::format("EBR of partition {}", kTransitionFirstLogical + *range.new_index);
  }
  if (range.new_index) {
    return fmt::format("EBR of partition {} (new place)",
                       kTransitionFirstLogical + *range.new_index);
  }
  return fmt::format("EBR of partition {} (old place)",
                     kTransitionFirstLogical + range.old_index.value_or(0));
}

Result<TableTransition> LayoutTransition(LabelType label, uint64_t sector_size,
                                         uint64_t disk_size_bytes,
                                         const std::vector<TableArea>& old_areas,
                                         const std::vector<TableArea>& new_areas) {
  if (label != LabelType::kGpt && label != LabelType::kDos) {
    return MakeError(
        fmt::format("cannot write a '{}' partition table (GPT and DOS only)", ToString(label)));
  }
  if (sector_size == 0) return MakeError("sector size 0");
  Result<std::vector<LocatedArea>> olds =
      Locate(label, sector_size, disk_size_bytes, old_areas, "old");
  if (!olds) return olds.error();
  Result<std::vector<LocatedArea>> news =
      Locate(label, sector_size, disk_size_bytes, new_areas, "new");
  if (!news) return news.error();

  TableTransition t;
  t.label = label;
  t.sector_size = sector_size;
  t.disk_size_bytes = disk_size_bytes;
  auto add = [&](const LocatedArea& a, bool is_new) -> Status {
    for (TableRange& r : t.ranges) {
      if (r.offset_bytes == a.offset_bytes && r.length_bytes == a.length_bytes &&
          r.role == a.role) {
        std::optional<uint32_t>& slot = is_new ? r.new_index : r.old_index;
        if (slot) {
          return MakeError(fmt::format("the {} table lists the {} at byte {} twice",
                                       is_new ? "new" : "old", AreaName(label, r), r.offset_bytes));
        }
        slot = a.index;
        return {};
      }
      if (OverlapByLength(r.offset_bytes, r.length_bytes, a.offset_bytes, a.length_bytes)) {
        return MakeError(fmt::format("table areas overlap: {} at byte {} and {} at byte {}",
                                     AreaName(label, r), r.offset_bytes, ToString(a.role),
                                     a.offset_bytes));
      }
    }
    TableRange r;
    r.role = a.role;
    r.offset_bytes = a.offset_bytes;
    r.length_bytes = a.length_bytes;
    (is_new ? r.new_index : r.old_index) = a.index;
    t.ranges.push_back(std::move(r));
    return {};
  };
  for (const LocatedArea& a : *olds) {
    if (Status s = add(a, false); !s) return s.error();
  }
  for (const LocatedArea& a : *news) {
    if (Status s = add(a, true); !s) return s.error();
  }
  SortForWrite(&t);
  return t;
}

Result<TableTransition> FreshLayoutTransition(
    LabelType old_label, LabelType new_label, uint64_t sector_size, uint64_t disk_size_bytes,
    const std::vector<TableArea>& old_areas, const std::vector<TableArea>& new_areas,
    const std::vector<std::pair<uint64_t, uint64_t>>& new_partitions) {
  if (old_label == new_label) {
    return LayoutTransition(new_label, sector_size, disk_size_bytes, old_areas, new_areas);
  }
  // Each table's areas on their own (located and checked against the shape of its label), as
  // ranges only the new, or only the old, table uses.
  Result<TableTransition> t =
      LayoutTransition(new_label, sector_size, disk_size_bytes, new_areas, new_areas);
  if (!t) return t.error();
  for (TableRange& r : t->ranges) r.old_index.reset();
  SortForWrite(&*t);
  if (old_label != LabelType::kGpt && old_label != LabelType::kDos) return t;
  Result<TableTransition> old =
      LayoutTransition(old_label, sector_size, disk_size_bytes, old_areas, old_areas);
  if (!old) return old.error();
  for (TableRange& r : old->ranges) r.new_index.reset();
  for (TableRange& r : old->ranges) {
    bool shared = false;
    for (TableRange& n : t->ranges) {
      if (n.offset_bytes == r.offset_bytes && n.length_bytes == r.length_bytes &&
          n.role == TableAreaRole::kMbr && r.role == TableAreaRole::kMbr) {
        n.old_index = r.old_index;  // LBA 0: the old MBR or protective MBR becomes the new one
        shared = true;
      } else if (OverlapByLength(n.offset_bytes, n.length_bytes, r.offset_bytes, r.length_bytes)) {
        return MakeError(fmt::format("the old {} at byte {} lies under the new {}",
                                     AreaName(old_label, r), r.offset_bytes,
                                     AreaName(new_label, n)));
      }
    }
    if (shared) continue;
    const uint64_t first = r.offset_bytes / sector_size;
    const uint64_t last = (r.offset_bytes + r.length_bytes) / sector_size - 1;
    if (std::any_of(new_partitions.begin(), new_partitions.end(),
                    [&](const auto& p) { return first <= p.second && last >= p.first; })) {
      continue;  // partition space from now on
    }
    t->ranges.push_back(std::move(r));  // after every new range: written last
  }
  return t;
}

void SortForWrite(TableTransition* transition) {
  std::vector<TableRange>& ranges = transition->ranges;
  if (transition->label == LabelType::kGpt) {
    // What only the old table used (a backup GPT left mid-disk by a copy onto a bigger disk)
    // last: nothing references it once the new table is complete.
    auto rank = [](const TableRange& r) { return r.new_index ? GptWriteRank(r.role) : 5; };
    std::stable_sort(ranges.begin(), ranges.end(),
                     [&](const TableRange& a, const TableRange& b) { return rank(a) < rank(b); });
  } else {
    std::stable_sort(ranges.begin(), ranges.end(), [](const TableRange& a, const TableRange& b) {
      return DosWriteKey(a) < DosWriteKey(b);
    });
  }
}

Status ValidateTransition(const TableTransition& t) {
  if (t.label != LabelType::kGpt && t.label != LabelType::kDos) {
    return MakeError(fmt::format("cannot write a '{}' partition table", ToString(t.label)));
  }
  if (t.sector_size == 0) return MakeError("sector size 0");
  std::vector<const TableRange*> by_offset;
  for (const TableRange& r : t.ranges) {
    std::string name = AreaName(t.label, r);
    if (r.length_bytes == 0 || r.offset_bytes % t.sector_size != 0 ||
        r.length_bytes % t.sector_size != 0) {
      return MakeError(fmt::format("{} at byte {} ({} bytes) is not whole {}-byte sectors", name,
                                   r.offset_bytes, r.length_bytes, t.sector_size));
    }
    if (r.offset_bytes + r.length_bytes > t.disk_size_bytes) {
      return MakeError(fmt::format("{} at byte {} ends beyond the disk ({} bytes)", name,
                                   r.offset_bytes, t.disk_size_bytes));
    }
    if (r.old_bytes.size() != r.length_bytes || r.new_bytes.size() != r.length_bytes) {
      return MakeError(fmt::format("{} at byte {}: {} bytes, but {} old and {} new bytes", name,
                                   r.offset_bytes, r.length_bytes, r.old_bytes.size(),
                                   r.new_bytes.size()));
    }
    if (!r.old_index && !r.new_index) {
      return MakeError(fmt::format("{} at byte {} belongs to neither table", name, r.offset_bytes));
    }
    if (r.role != TableAreaRole::kEbr) {
      // One range per role in the new table, and one per role among what only the old table
      // uses (a translation leaves parts of old areas of another sector size behind).
      for (const TableRange& other : t.ranges) {
        if (&other != &r && other.role == r.role &&
            other.new_index.has_value() == r.new_index.has_value()) {
          return MakeError(fmt::format("two ranges are the {}", name));
        }
      }
    }
    by_offset.push_back(&r);
  }
  std::sort(by_offset.begin(), by_offset.end(), [](const TableRange* a, const TableRange* b) {
    return a->offset_bytes < b->offset_bytes;
  });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const TableRange& a = *by_offset[i - 1];
    if (a.offset_bytes + a.length_bytes > by_offset[i]->offset_bytes) {
      return MakeError(fmt::format("{} and {} overlap at byte {}", AreaName(t.label, a),
                                   AreaName(t.label, *by_offset[i]), by_offset[i]->offset_bytes));
    }
  }
  return {};
}

TableTransition Inverse(const TableTransition& transition) {
  TableTransition back = transition;
  for (TableRange& r : back.ranges) {
    std::swap(r.old_bytes, r.new_bytes);
    std::swap(r.old_index, r.new_index);
  }
  SortForWrite(&back);
  return back;
}

std::vector<TableRange> ChangedRanges(const TableTransition& transition) {
  std::vector<TableRange> changed;
  for (const TableRange& r : transition.ranges) {
    if (r.changed()) changed.push_back(r);
  }
  return changed;
}

CrashAssessment AssessCrashSafety(const TableTransition& t) {
  std::vector<TableRange> changed = ChangedRanges(t);
  if (changed.empty()) return {CrashSafety::kOldOrNew, "nothing changes"};
  if (t.label == LabelType::kGpt) {
    return {CrashSafety::kOldOrNew,
            "GPT: the backup table is written first and the primary last, so every reader "
            "finds a valid old or new table at every instant"};
  }
  std::vector<std::string> in_place;
  size_t fresh = 0;
  size_t stale = 0;
  for (const TableRange& r : changed) {
    if (!r.old_index) {
      ++fresh;
    } else if (!r.new_index) {
      ++stale;
    } else {
      in_place.push_back(AreaName(t.label, r));
    }
  }
  std::string after =
      stale == 0 ? "" : fmt::format(", then {} sector(s) only the old table used", stale);
  if (in_place.size() <= 1) {
    std::string switcher = in_place.empty() ? "none" : in_place.front();
    return {CrashSafety::kOldOrNew,
            fmt::format("DOS: {} sector(s) the old table does not use are written first, then "
                        "one sector ({}) switches from the old table to the new one{}",
                        fresh, switcher, after)};
  }
  std::string list;
  for (const std::string& name : in_place) list += (list.empty() ? "" : ", ") + name;
  return {CrashSafety::kRestoreNeeded,
          fmt::format("DOS: {} sectors of the old table are rewritten in place ({}); a crash "
                      "between them can leave a table that mixes old and new entries, which "
                      "'partalign restore' puts back from the backup",
                      in_place.size(), list)};
}

std::vector<std::string> TransitionConflicts(const TableTransition& t,
                                             const PartitionTable& old_table,
                                             const PartitionTable& new_table,
                                             const std::vector<uint32_t>& left_behind) {
  std::vector<std::string> conflicts;
  for (const TableRange& r : t.ranges) {
    if (!r.changed()) continue;
    std::string name = AreaName(t.label, r);
    for (const Partition& p : new_table.partitions) {
      if (p.kind == PartitionKind::kExtended) continue;
      if (OverlapByLength(r.offset_bytes, r.length_bytes, p.start_sector * t.sector_size,
                          p.size_sectors * t.sector_size)) {
        conflicts.push_back(fmt::format(
            "the {} (sector {}) lies inside partition {} of the new table (sectors {}-{})", name,
            r.offset_bytes / t.sector_size, p.number, p.start_sector, p.end_sector()));
      }
    }
    for (const Partition& p : old_table.partitions) {
      if (p.kind == PartitionKind::kExtended || !p.contents.MayHoldData() ||
          std::find(left_behind.begin(), left_behind.end(), p.number) != left_behind.end()) {
        continue;
      }
      if (OverlapByLength(r.offset_bytes, r.length_bytes, p.start_sector * t.sector_size,
                          p.size_sectors * t.sector_size)) {
        conflicts.push_back(fmt::format(
            "the {} (sector {}) would overwrite data of partition {} (sectors {}-{})", name,
            r.offset_bytes / t.sector_size, p.number, p.start_sector, p.end_sector()));
      }
    }
  }
  return conflicts;
}

namespace {

// The ranges a step of `chain` abandons (its new table no longer uses them) that end in a gap:
// outside the areas of `last` and every partition of `first` and `last`; those inside an area
// of `first` when `in_first` is true, the others when it is false.
std::vector<ChainRange> AbandonedGapRanges(const std::vector<const TableTransition*>& chain,
                                           const PartitionTable& first, const PartitionTable& last,
                                           bool in_first) {
  auto in_areas = [](const PartitionTable& t, uint64_t offset, uint64_t length) {
    return std::any_of(t.areas.begin(), t.areas.end(), [&](const TableArea& a) {
      return OverlapByLength(offset, length, a.offset_bytes, a.size_bytes);
    });
  };
  auto in_partition = [](const PartitionTable& t, uint64_t offset, uint64_t length) {
    return std::any_of(t.partitions.begin(), t.partitions.end(), [&](const Partition& p) {
      return p.kind != PartitionKind::kExtended &&
             OverlapByLength(offset, length, p.start_sector * t.sector_size,
                             p.size_sectors * t.sector_size);
    });
  };
  std::vector<ChainRange> out;
  for (size_t k = 0; k < chain.size(); ++k) {
    const std::vector<TableRange>& ranges = chain[k]->ranges;
    for (size_t i = 0; i < ranges.size(); ++i) {
      const TableRange& r = ranges[i];
      if (r.new_index || !r.old_index) continue;  // still used, or not a table sector before
      if (in_areas(first, r.offset_bytes, r.length_bytes) != in_first ||
          in_areas(last, r.offset_bytes, r.length_bytes) ||
          in_partition(first, r.offset_bytes, r.length_bytes) ||
          in_partition(last, r.offset_bytes, r.length_bytes)) {
        continue;
      }
      out.push_back({k, i});
    }
  }
  return out;
}

}  // namespace

std::vector<ChainRange> TransientGapRanges(const std::vector<const TableTransition*>& chain,
                                           const PartitionTable& first,
                                           const PartitionTable& last) {
  return AbandonedGapRanges(chain, first, last, /*in_first=*/false);
}

std::vector<ChainRange> AbandonedTableRanges(const std::vector<const TableTransition*>& chain,
                                             const PartitionTable& first,
                                             const PartitionTable& last) {
  return AbandonedGapRanges(chain, first, last, /*in_first=*/true);
}

nlohmann::json TransitionJson(const TableTransition& t) {
  CrashAssessment crash = AssessCrashSafety(t);
  nlohmann::json ranges = nlohmann::json::array();
  int step = 0;
  for (const TableRange& r : t.ranges) {
    bool changed = r.changed();
    ranges.push_back({
        {"step", changed ? nlohmann::json(++step) : nlohmann::json(nullptr)},
        {"area", AreaName(t.label, r)},
        {"role", ToString(r.role)},
        {"offset_bytes", r.offset_bytes},
        {"length_bytes", r.length_bytes},
        {"first_sector", r.offset_bytes / t.sector_size},
        {"sectors", r.length_bytes / t.sector_size},
        {"changed", changed},
        {"new_data_base64", changed ? nlohmann::json(Base64Encode(r.new_bytes)) : nullptr},
    });
  }
  return {
      {"label", ToString(t.label)},
      {"sector_size", t.sector_size},
      {"disk_size_bytes", t.disk_size_bytes},
      {"crash_safety", crash.safety == CrashSafety::kOldOrNew ? "old-or-new" : "restore-needed"},
      {"crash_safety_reason", crash.reason},
      {"ranges", ranges},
  };
}

}  // namespace partalign
