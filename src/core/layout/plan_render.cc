// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/layout/plan_render.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "partalign/layout/planner.h"
#include "partalign/table/apply_command.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// The overview is this many characters wide, whatever the disk size.
constexpr uint64_t kOverviewCells = 64;
// Detail views draw each grain as this many characters.
constexpr uint64_t kCellsPerGrain = 16;
// A detail view spans at most this many grains; starts further apart get views of their own.
constexpr uint64_t kMaxDetailGrains = 4;
// sfdisk's default GPT entry array: 128 entries; table-length is written only otherwise.
constexpr uint64_t kGptEntrySize = 128;
constexpr uint64_t kDefaultGptEntries = 128;

enum class Prefer { kFirstStart, kLastStart };

// The symbol for the byte range [from, to): a partition starting inside it (the first one in
// the overview, so that every partition at least a cell long shows; the last one in detail
// views, so that a start just before a boundary shows), else a partition covering it, else '-'
// inside an extended partition, else '.'.
char CellSymbol(const std::vector<MapExtent>& extents, uint64_t ss, uint64_t from, uint64_t to,
                Prefer prefer) {
  const MapExtent* starting = nullptr;
  const MapExtent* covering = nullptr;
  bool in_container = false;
  for (const MapExtent& e : extents) {
    const uint64_t s = e.start * ss;
    const uint64_t end = (e.end + 1) * ss;
    if (end <= from || s >= to) continue;
    if (e.container) {
      in_container = true;
      continue;
    }
    if (s >= from && (!starting || (prefer == Prefer::kLastStart ? s > starting->start * ss
                                                                 : s < starting->start * ss))) {
      starting = &e;
    }
    if (!covering) covering = &e;
  }
  if (starting) return PartitionSymbol(starting->number);
  if (covering) return PartitionSymbol(covering->number);
  return in_container ? '-' : '.';
}

std::string Signed(uint64_t from, uint64_t to) {
  if (to == from) return "0";
  return to > from ? fmt::format("+{}", to - from) : fmt::format("-{}", from - to);
}

std::string SfdiskQuoted(const std::string& text) {
  // libfdisk's fputs_quoted(): '"', '\', '`', '$' and anything unprintable as \xNN; the script
  // reader unhexmangles them back.
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\' || c == '`' || c == '$' || c < 0x20 || c >= 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string DosTypeForSfdisk(const std::string& code) {
  Result<uint64_t> value = ParseUint(code);
  return value ? fmt::format("{:x}", *value) : code;
}

std::string KindText(const Plan& plan) { return plan.layout ? "fresh layout" : "plan"; }

}  // namespace

std::string MapBoundaryLabel(uint64_t bytes) {
  if (bytes % kMiB == 0) return fmt::format("{} MiB", bytes / kMiB);
  return FormatSize(bytes);
}

char PartitionSymbol(uint32_t number) {
  if (number >= 1 && number <= 9) return static_cast<char>('0' + number);
  if (number >= 10 && number < 36) return static_cast<char>('a' + (number - 10));
  if (number >= 36 && number < 62) return static_cast<char>('A' + (number - 36));
  return '#';
}

MapViews MapExtents(const Plan& plan, const PartitionTable& table) {
  MapViews v;
  std::map<uint32_t, const PlanAction*> by_number;
  for (const PlanAction& a : plan.actions) by_number[a.partition] = &a;
  for (const Partition& p : table.partitions) {
    MapExtent e{p.number, p.start_sector, p.end_sector(), p.kind == PartitionKind::kExtended};
    v.before.push_back(e);
    if (auto it = by_number.find(p.number); it != by_number.end()) {
      e.start = it->second->new_start_sector;
      e.end = it->second->new_end_sector;
    }
    if (!plan.layout) v.after.push_back(e);
  }
  if (plan.layout) {
    for (const LayoutPartition& p : plan.layout->partitions) {
      v.after.push_back({p.partition, p.start_sector, p.end_sector, false});
    }
  }
  return v;
}

std::vector<MapWindow> DetailWindows(const Plan& plan, const PartitionTable& table) {
  const uint64_t ss = plan.disk.logical_sector_size;
  const uint64_t disk_bytes = plan.disk.size_bytes;
  const Alignment& a = plan.alignment;
  if (disk_bytes == 0 || ss == 0 || a.grain_bytes == 0) return {};
  std::vector<MapWindow> windows;
  auto add_window = [&](uint64_t from_byte, uint64_t to_byte, std::string why) {
    uint64_t from = a.Down(from_byte);
    if (from > from_byte) from = 0;  // before the offset: start at the disk's start
    if (from == from_byte && from >= a.grain_bytes) from -= a.grain_bytes;
    uint64_t to = a.Up(to_byte + 1) + a.grain_bytes;
    to = std::min(to, std::max(AlignUp(disk_bytes, a.grain_bytes), from + a.grain_bytes));
    windows.push_back({from, to, {std::move(why)}});
  };
  for (const PlanAction& x : plan.actions) {
    const bool moved = x.new_start_sector != x.old_start_sector;
    if (!moved && x.kind != ActionKind::kImpossible) continue;
    const Partition* p = table.Find(x.partition);
    if (p && p->kind == PartitionKind::kExtended) continue;
    std::string why = moved ? fmt::format("partition {}: start {} -> {}", x.partition,
                                          x.old_start_sector, x.new_start_sector)
                            : fmt::format("partition {}: start {} stays (impossible)", x.partition,
                                          x.old_start_sector);
    const uint64_t lo = std::min(x.old_start_sector, x.new_start_sector) * ss;
    const uint64_t hi = std::max(x.old_start_sector, x.new_start_sector) * ss;
    if (hi - lo <= (kMaxDetailGrains - 2) * a.grain_bytes) {
      add_window(lo, hi, why);
    } else {
      add_window(x.old_start_sector * ss, x.old_start_sector * ss, why + " (old start)");
      add_window(x.new_start_sector * ss, x.new_start_sector * ss, why + " (new start)");
    }
  }
  if (plan.layout && !plan.layout->partitions.empty()) {
    const LayoutPartition& first = plan.layout->partitions.front();
    add_window(first.start_sector * ss, first.start_sector * ss,
               fmt::format("partition 1 starts at {}", first.start_sector));
  }
  std::sort(windows.begin(), windows.end(),
            [](const MapWindow& x, const MapWindow& y) { return x.from < y.from; });
  std::vector<MapWindow> merged;
  for (MapWindow& w : windows) {
    if (!merged.empty() && w.from <= merged.back().to &&
        std::max(w.to, merged.back().to) - merged.back().from <= kMaxDetailGrains * a.grain_bytes) {
      merged.back().to = std::max(merged.back().to, w.to);
      merged.back().why.insert(merged.back().why.end(), w.why.begin(), w.why.end());
    } else {
      merged.push_back(std::move(w));
    }
  }
  return merged;
}

std::vector<std::string> PlanColumns() {
  return {"NR", "KIND", "OLD-START", "OLD-END", "NEW-START", "NEW-END", "SHIFT", "SIZE", "MOVE"};
}

std::vector<std::vector<std::string>> PlanRows(const Plan& plan) {
  std::vector<std::vector<std::string>> rows;
  const uint64_t ss = plan.disk.logical_sector_size;
  for (const PlanAction& a : plan.actions) {
    rows.push_back({std::to_string(a.partition), std::string(ToString(a.kind)),
                    std::to_string(a.old_start_sector), std::to_string(a.old_end_sector),
                    std::to_string(a.new_start_sector), std::to_string(a.new_end_sector),
                    Signed(a.old_start_sector, a.new_start_sector),
                    FormatSize((a.new_end_sector - a.new_start_sector + 1) * ss),
                    a.bytes_to_move ? FormatSize(a.bytes_to_move) : ""});
  }
  if (plan.layout) {
    for (const LayoutPartition& p : plan.layout->partitions) {
      rows.push_back({std::to_string(p.partition), "create", "", "", std::to_string(p.start_sector),
                      std::to_string(p.end_sector), "",
                      FormatSize((p.end_sector - p.start_sector + 1) * ss), ""});
    }
  }
  return rows;
}

std::string PlanHeadline(const Plan& plan) {
  const Topology& t = plan.topology;
  std::string topology =
      fmt::format("logical/physical sector {}/{}, minimum/optimal I/O {}/{}", t.logical_sector_size,
                  t.physical_sector_size, t.minimum_io_size, t.optimal_io_size);
  if (t.alignment_offset != 0) topology += fmt::format(", alignment offset {}", t.alignment_offset);
  if (t.origin == TopologyOrigin::kAssumed) topology += " (assumed)";
  std::string table = plan.layout ? fmt::format("new {} table (now: {})",
                                                ToString(plan.layout->label), ToString(plan.label))
                                  : fmt::format("{} table", ToString(plan.label));
  return fmt::format("{} for '{}': {}, {}; {}; alignment {} (offset {} bytes)", KindText(plan),
                     plan.disk.path, table, FormatSize(plan.disk.size_bytes), topology,
                     FormatSize(plan.alignment.grain_bytes), plan.alignment.offset_bytes);
}

std::vector<std::string> DiskMap(const Plan& plan, const PartitionTable& table,
                                 size_t max_details) {
  const uint64_t ss = plan.disk.logical_sector_size;
  const uint64_t disk_bytes = plan.disk.size_bytes;
  const Alignment& a = plan.alignment;
  MapViews v = MapExtents(plan, table);
  std::vector<std::string> lines;
  if (disk_bytes == 0 || ss == 0 || a.grain_bytes == 0) return lines;

  // The whole disk, scaled.
  const uint64_t cell = std::max<uint64_t>((disk_bytes + kOverviewCells - 1) / kOverviewCells, 1);
  const bool containers =
      std::any_of(v.before.begin(), v.before.end(), [](const MapExtent& e) { return e.container; });
  lines.push_back(fmt::format(
      "whole disk, 1 character = {}; digits and letters are partition numbers, '.' is free "
      "space{}",
      FormatSize(cell), containers ? ", '-' the extended partition around its logical ones" : ""));
  for (const auto& [label, extents] :
       {std::pair{"before", &v.before}, std::pair{"after", &v.after}}) {
    std::string row;
    for (uint64_t from = 0; from < disk_bytes; from += cell) {
      row += CellSymbol(*extents, ss, from, std::min(from + cell, disk_bytes), Prefer::kFirstStart);
    }
    lines.push_back(fmt::format("  {:<7}|{}|", label, row));
  }

  // Detail views around the starts that change or cannot be aligned.
  const std::vector<MapWindow> merged = DetailWindows(plan, table);
  if (merged.empty()) return lines;
  lines.push_back(
      fmt::format("starts in detail, 1 character = {}, '|' = a {} boundary{}",
                  FormatSize(a.grain_bytes / kCellsPerGrain), FormatSize(a.grain_bytes),
                  a.offset_bytes ? fmt::format(" (offset {} bytes)", a.offset_bytes) : ""));
  for (size_t w = 0; w < merged.size() && w < max_details; ++w) {
    const MapWindow& win = merged[w];
    lines.push_back(fmt::format("  {}", fmt::join(win.why, "; ")));
    // The ruler: each boundary's offset, written from its '|'.
    std::string ruler(9, ' ');
    std::string rows[2];
    const uint64_t grains = (win.to - win.from + a.grain_bytes - 1) / a.grain_bytes;
    for (uint64_t g = 0; g < grains; ++g) {
      const uint64_t base = win.from + g * a.grain_bytes;
      std::string label = MapBoundaryLabel(base);
      if (ruler.size() < 9 + g * (kCellsPerGrain + 1))
        ruler.resize(9 + g * (kCellsPerGrain + 1), ' ');
      if (ruler.size() == 9 + g * (kCellsPerGrain + 1)) ruler += label;
      for (int r = 0; r < 2; ++r) {
        const std::vector<MapExtent>& extents = r == 0 ? v.before : v.after;
        rows[r] += '|';
        for (uint64_t c = 0; c < kCellsPerGrain; ++c) {
          const uint64_t from = base + a.grain_bytes * c / kCellsPerGrain;
          const uint64_t to = base + a.grain_bytes * (c + 1) / kCellsPerGrain;
          rows[r] += from >= disk_bytes ? ' '
                                        : CellSymbol(extents, ss, from, std::min(to, disk_bytes),
                                                     Prefer::kLastStart);
        }
      }
    }
    lines.push_back(ruler);
    lines.push_back(fmt::format("  {:<7}{}|", "before", rows[0]));
    lines.push_back(fmt::format("  {:<7}{}|", "after", rows[1]));
  }
  if (merged.size() > max_details) {
    lines.push_back(
        fmt::format("  ... and {} more (see the table above)", merged.size() - max_details));
  }
  return lines;
}

std::string RenderPlanMarkdown(const Plan& plan, const PartitionTable& table,
                               const PlanFileAdvice& advice) {
  std::string out = fmt::format("# Alignment {} for `{}`\n\n", KindText(plan), plan.disk.path);
  out += PlanHeadline(plan) + ".\n\n";
  if (!plan.layout) out += "**" + PlanSummary(plan) + "**\n\n";
  out +=
      "| partition | kind | old start | old end | new start | new end | bytes to move | reason |\n";
  out += "|---:|---|---:|---:|---:|---:|---:|---|\n";
  for (const PlanAction& a : plan.actions) {
    std::string reason = a.reason;
    std::replace(reason.begin(), reason.end(), '|', '/');
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", a.partition, ToString(a.kind),
                       a.old_start_sector, a.old_end_sector, a.new_start_sector, a.new_end_sector,
                       a.bytes_to_move, reason);
  }
  if (plan.layout) {
    for (const LayoutPartition& p : plan.layout->partitions) {
      out += fmt::format("| {} | create | | | {} | {} | 0 | type {}{} |\n", p.partition,
                         p.start_sector, p.end_sector, p.type,
                         p.name.empty() ? "" : fmt::format(", name \"{}\"", p.name));
    }
  }
  out += "\n## Disk map\n\n```text\n";
  for (const std::string& line : DiskMap(plan, table)) out += line + "\n";
  out += "```\n";
  bool moves = std::any_of(plan.actions.begin(), plan.actions.end(),
                           [](const PlanAction& a) { return a.kind == ActionKind::kMoveData; });
  out += "\n## Applying it\n\n";
  out += fmt::format(
      "Nothing has been written. {}, then apply it with `{}`: it checks that "
      "the disk and its table are still the ones planned for, backs up the table",
      advice.command.empty() ? advice.how : fmt::format("Save the plan with `{}`", advice.command),
      ApplyCommand(advice.file, plan, {"", advice.assume, advice.sector_size}));
  out += moves ? ", moves the data of the `move-data` partitions (journaled), then writes the "
                 "new table.\n"
               : ", then writes the new table.\n";
  return out;
}

Result<std::string> RenderSfdiskScript(const Plan& plan, const PartitionTable& table) {
  const uint64_t ss = plan.disk.logical_sector_size;
  std::string out =
      fmt::format("# partalign {} for '{}': the new partition table as an sfdisk script.\n",
                  KindText(plan), plan.disk.path);
  std::vector<std::string> moved, impossible;
  for (const PlanAction& a : plan.actions) {
    if (!table.Find(a.partition)) {
      return MakeError(
          fmt::format("the plan has an action for partition {}, which the table "
                      "does not have",
                      a.partition));
    }
    if (a.kind == ActionKind::kMoveData) moved.push_back(std::to_string(a.partition));
    if (a.kind == ActionKind::kImpossible) impossible.push_back(std::to_string(a.partition));
  }
  if (!plan.layout) out += "# " + PlanSummary(plan) + "\n";
  if (!moved.empty()) {
    out += fmt::format(
        "# WARNING: partition{} {} start{} elsewhere in this table, but the data has not been\n"
        "# moved. 'partalign apply' on this plan's file (partalign plan -o) moves it first\n"
        "# (journaled), then writes this table.\n"
        "# Writing this script with sfdisk alone points those partitions at sectors that do\n"
        "# not hold their data.\n",
        moved.size() == 1 ? "" : "s", fmt::join(moved, ", "), moved.size() == 1 ? "s" : "");
  }
  if (!impossible.empty()) {
    out += fmt::format("# Partition{} {} cannot be aligned and stay{} where {}.\n",
                       impossible.size() == 1 ? "" : "s", fmt::join(impossible, ", "),
                       impossible.size() == 1 ? "s" : "",
                       impossible.size() == 1 ? "it is" : "they are");
  }
  const LabelType label = plan.layout ? plan.layout->label : table.label;
  if (label != LabelType::kGpt && label != LabelType::kDos) {
    return MakeError(fmt::format("no sfdisk script for a '{}' table", ToString(label)));
  }
  out += fmt::format("label: {}\n", label == LabelType::kGpt ? "gpt" : "dos");
  if (!plan.layout && !table.disk_id.empty()) out += fmt::format("label-id: {}\n", table.disk_id);
  out += "unit: sectors\n";
  if (label == LabelType::kGpt) {
    const uint64_t first = plan.layout ? plan.layout->first_usable_lba : table.first_usable_lba;
    const uint64_t last = plan.layout ? plan.layout->last_usable_lba : table.last_usable_lba;
    out += fmt::format("first-lba: {}\nlast-lba: {}\n", first, last);
    for (const TableArea& area : table.areas) {
      if (plan.layout || area.name != "GPT Entries") continue;
      const uint64_t entries = area.size_bytes / kGptEntrySize;
      if (entries != kDefaultGptEntries) out += fmt::format("table-length: {}\n", entries);
    }
  }
  out += fmt::format("sector-size: {}\n\n", ss);

  if (plan.layout) {
    for (const LayoutPartition& p : plan.layout->partitions) {
      std::string line = fmt::format("{} : start={}, size={}, type={}", p.partition, p.start_sector,
                                     p.end_sector - p.start_sector + 1,
                                     label == LabelType::kGpt ? p.type : DosTypeForSfdisk(p.type));
      if (!p.name.empty()) line += ", name=" + SfdiskQuoted(p.name);
      if (!p.attributes.empty()) line += fmt::format(", attrs=\"{}\"", p.attributes);
      if (p.bootable) line += ", bootable";
      out += line + "\n";
    }
    return out;
  }
  std::map<uint32_t, const PlanAction*> by_number;
  for (const PlanAction& a : plan.actions) by_number[a.partition] = &a;
  // In number order: libfdisk adds them in script order, and a DOS logical partition needs its
  // extended partition first.
  std::vector<const Partition*> partitions;
  for (const Partition& p : table.partitions) partitions.push_back(&p);
  std::sort(partitions.begin(), partitions.end(),
            [](const Partition* a, const Partition* b) { return a->number < b->number; });
  for (const Partition* pp : partitions) {
    const Partition& p = *pp;
    uint64_t start = p.start_sector;
    uint64_t end = p.end_sector();
    if (auto it = by_number.find(p.number); it != by_number.end()) {
      start = it->second->new_start_sector;
      end = it->second->new_end_sector;
    }
    std::string line = fmt::format("{} : start={}, size={}", p.number, start, end - start + 1);
    if (!p.type_code.empty()) {
      line += ", type=" + (label == LabelType::kGpt ? p.type_code : DosTypeForSfdisk(p.type_code));
    }
    if (label == LabelType::kGpt) {
      if (!p.uuid.empty()) line += ", uuid=" + p.uuid;
      if (!p.name.empty()) line += ", name=" + SfdiskQuoted(p.name);
      if (!p.attributes.empty()) line += fmt::format(", attrs=\"{}\"", p.attributes);
    } else if (p.bootable) {
      line += ", bootable";
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace partalign
