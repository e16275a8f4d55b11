// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/interactive/planner_model.h"

#include <algorithm>

#include <fmt/format.h>

#include "partalign/layout/layout_spec.h"
#include "partalign/layout/planner.h"
#include "partalign/layout/way_through.h"
#include "partalign/util/sfdisk_size.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// The UEFI minimum GPT: protective MBR, header, 128 entries of 128 bytes; the backup header and
// entries at the end.
constexpr uint64_t kPlannerGptEntryArrayBytes = 128 * 128;
constexpr uint64_t kGptPartitions = 128;
constexpr uint64_t kPlannerDosPrimaries = 4;
constexpr uint64_t kPlannerDosMaxSectors = 0x100000000ull;  // 32-bit sector numbers
constexpr uint64_t kPlannerPercent = 100;

bool IsContainer(const PlannedPartition& p) { return p.kind == PartitionKind::kExtended; }
bool IsLogical(const PlannedPartition& p) { return p.kind == PartitionKind::kLogical; }

void SortByStart(std::vector<PlannedPartition>* parts) {
  std::stable_sort(parts->begin(), parts->end(),
                   [](const PlannedPartition& a, const PlannedPartition& b) {
                     if (a.start_bytes != b.start_bytes) return a.start_bytes < b.start_bytes;
                     return IsContainer(a) && !IsContainer(b);  // the extended before its first
                   });
}

}  // namespace

Result<std::optional<uint64_t>> ParsePromptSize(std::string_view text, uint64_t whole,
                                                uint64_t sector_size) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  if (text.empty()) return std::optional<uint64_t>();
  if (text.back() == '%') {
    Result<uint64_t> p = ParseUint(text.substr(0, text.size() - 1));
    if (!p || *p == 0 || *p > kPlannerPercent) {
      return MakeError(fmt::format("'{}' is not a percentage from 1% to 100%", text));
    }
    return std::optional<uint64_t>(whole / kPlannerPercent * *p +
                                   whole % kPlannerPercent * *p / kPlannerPercent);
  }
  Result<SfdiskSize> size = ParseSfdiskSize(text);
  if (!size) return size.error();
  if (size->value == 0) return MakeError("a size of 0");
  std::optional<uint64_t> bytes = size->Bytes(sector_size);
  if (!bytes) return MakeError(fmt::format("'{}': {} is too large", text, size->Text()));
  return std::optional<uint64_t>(*bytes);
}

Result<PlannerModel> PlannerModel::Make(PlannerDisk disk, LabelType label_when_empty,
                                        const std::vector<uint32_t>& discard) {
  const Topology& t = disk.device.topology;
  PlannerLayout layout;
  const PartitionTable& table = disk.table;
  if (!table.partitions.empty()) {
    if (table.label != LabelType::kGpt && table.label != LabelType::kDos) {
      return MakeError(fmt::format("the planner edits GPT and DOS tables; '{}' has {}",
                                   disk.device.identity.path, ToString(table.label)));
    }
    if (table.sector_size != t.logical_sector_size) {
      return MakeError(
          fmt::format("the table was read with {}-byte sectors but the disk has {}-byte sectors",
                      table.sector_size, t.logical_sector_size));
    }
    layout.label = table.label;
    for (const Partition& p : table.partitions) {
      layout.partitions.push_back({p.number, p.number, p.kind, p.start_sector * table.sector_size,
                                   p.size_sectors * table.sector_size, p.type_code, p.name,
                                   p.attributes, p.bootable});
    }
    SortByStart(&layout.partitions);
  } else {
    layout.label = table.label == LabelType::kGpt || table.label == LabelType::kDos
                       ? table.label
                       : label_when_empty;
  }
  Alignment a = RecommendAlignment(t).alignment;
  if (a.grain_bytes % t.logical_sector_size != 0) {
    return MakeError("the alignment is not a whole number of sectors");
  }
  if (Status s = CheckDiscard(disk.table, discard); !s) return s.error();
  layout.discarded = discard;
  std::sort(layout.discarded.begin(), layout.discarded.end());
  layout.discarded.erase(std::unique(layout.discarded.begin(), layout.discarded.end()),
                         layout.discarded.end());
  PlannerModel model(std::move(disk), std::move(layout), a);
  model.Replan();
  return model;
}

void PlannerModel::set_layout(PlannerLayout layout) {
  const bool replan = layout.discarded != layout_.discarded || layout.shrinks != layout_.shrinks;
  layout_ = std::move(layout);
  if (replan) Replan();
}

PlanOptions PlannerModel::Options() const {
  PlanOptions o;
  o.discard = layout_.discarded;
  o.in_use = disk_.in_use;
  o.shrinks = layout_.shrinks;
  return o;
}

void PlannerModel::Replan() {
  // What `partalign plan` does with this disk: the partitions were proven at load as plan
  // proves them, so that the same ones count as empty (docs/audit-plan.md).
  if (editing_existing()) plan_actions_ = PlanPartitions(disk_.table, alignment_, Options());
}

bool PlannerModel::AllEmpty() const {
  return std::none_of(disk_.table.partitions.begin(), disk_.table.partitions.end(),
                      [](const Partition& p) {
                        return p.kind != PartitionKind::kExtended && p.contents.MayHoldData();
                      });
}

std::vector<std::string> PlannerModel::WayThroughLines() const {
  if (!plan_actions_) return {};
  WayContext context;
  context.make_room_key = "M";
  return WayText(
      FindWaysThrough(disk_.table, alignment_, Options(), *plan_actions_, disk_.shrink_offers),
      context);
}

Result<PlannerModel::RoomOffer> PlannerModel::OfferRoom() const {
  if (!editing_existing()) return MakeError("M makes room on the disk's table; this disk has none");
  if (!plan_actions_) {
    return MakeError(fmt::format("partalign plan has no plan for this table: {}",
                                 plan_actions_.error().message));
  }
  if (!layout_.shrinks.empty()) {
    std::vector<std::string> made;
    for (const PlannedShrink& s : layout_.shrinks) {
      const Partition* p = disk_.table.Find(s.partition);
      made.push_back(fmt::format(
          "partition {} shrinks by {} first ({})", s.partition,
          FormatSize(p == nullptr ? 0 : (p->size_sectors - s.size_sectors) * sector_size()),
          ToString(s.tool)));
    }
    return MakeError(fmt::format("room is made already: {}; u undoes it", fmt::join(made, ", ")));
  }
  if (std::none_of(plan_actions_->begin(), plan_actions_->end(),
                   [](const PlanAction& a) { return a.kind == ActionKind::kImpossible; })) {
    return MakeError("nothing to make room for: A aligns every partition as it is");
  }
  if (!disk_.shrink_offers_error.empty()) {
    return MakeError("cannot make room: how small each partition's contents can be made: " +
                     disk_.shrink_offers_error);
  }
  // plan --make-room's search (TakeRoom): every shrink it needs, each on the plan with the
  // ones before it.
  const RoomTaken taken =
      TakeRoom(disk_.table, alignment_, Options(), *plan_actions_, disk_.shrink_offers);
  std::vector<std::string> lines = MakeRoomLines(taken, disk_.shrink_offers);
  if (taken.shrinks.empty()) {
    std::string text;
    for (const std::string& l : lines) text += (text.empty() ? "" : "; ") + l;
    return MakeError(text);
  }
  std::vector<ShrinkTool> said;
  for (const WayThrough& way : taken.shrinks) {
    const ShrinkTool tool = way.tool.value_or(ShrinkTool::kMkswap);
    if (std::find(said.begin(), said.end(), tool) != said.end()) continue;
    said.push_back(tool);
    lines.push_back(ShrinkHowText(tool, way.contents));
  }
  return RoomOffer{ShrinksOf(taken, disk_.table), std::move(lines)};
}

Status PlannerModel::MakeRoom(const RoomOffer& offer) {
  PlannerLayout before = layout_;
  layout_.shrinks = offer.shrinks;
  Replan();
  if (Status s = AlignAll(); !s) {
    layout_ = std::move(before);
    Replan();
    return s;
  }
  return {};
}

uint64_t PlannerModel::usable_start_bytes() const {
  const uint64_t ss = sector_size();
  if (layout_.label == LabelType::kDos) return ss;  // after the MBR
  const PartitionTable& t = disk_.table;
  if (editing_existing() && t.label == LabelType::kGpt && t.first_usable_lba != 0) {
    return t.first_usable_lba * ss;
  }
  return (2 + (kPlannerGptEntryArrayBytes + ss - 1) / ss) * ss;
}

uint64_t PlannerModel::usable_end_bytes() const {
  const uint64_t ss = sector_size();
  const uint64_t sectors = disk_bytes() / ss;
  const PartitionTable& t = disk_.table;
  if (editing_existing() && t.label == layout_.label && t.last_usable_lba != 0) {
    return (t.last_usable_lba + 1) * ss;
  }
  if (layout_.label == LabelType::kGpt) {
    const uint64_t entries = (kPlannerGptEntryArrayBytes + ss - 1) / ss;
    return sectors > 2 * (2 + entries) ? (sectors - 1 - entries) * ss : 0;
  }
  return std::min(sectors, kPlannerDosMaxSectors) * ss;
}

std::vector<PlannerRow> PlannerModel::Rows() const {
  std::vector<PlannerRow> rows;
  const Alignment& a = alignment_;
  auto add_free = [&](uint64_t from, uint64_t to, bool inside) {
    if (to <= from) return;
    uint64_t start = a.Up(from);
    uint64_t end = to >= a.offset_bytes ? a.Down(to) : 0;
    if (end > start && end - start >= a.grain_bytes) rows.push_back({true, 0, start, end, inside});
  };
  uint64_t cursor = usable_start_bytes();
  const uint64_t end = usable_end_bytes();
  const PlannedPartition* ext = nullptr;
  uint64_t ext_cursor = 0;
  for (size_t i = 0; i < layout_.partitions.size(); ++i) {
    const PlannedPartition& p = layout_.partitions[i];
    if (IsLogical(p)) {
      if (ext != nullptr) add_free(ext_cursor + sector_size(), p.start_bytes, true);
      rows.push_back({false, i, p.start_bytes, p.end_bytes(), true});
      ext_cursor = std::max(ext_cursor, p.end_bytes());
      continue;
    }
    if (ext != nullptr) {
      add_free(ext_cursor + sector_size(), ext->end_bytes(), true);
      ext = nullptr;
    }
    add_free(cursor, p.start_bytes, false);
    rows.push_back({false, i, p.start_bytes, p.end_bytes(), false});
    cursor = std::max(cursor, p.end_bytes());
    if (IsContainer(p)) {
      ext = &p;
      ext_cursor = p.start_bytes;
    }
  }
  if (ext != nullptr) add_free(ext_cursor + sector_size(), ext->end_bytes(), true);
  add_free(cursor, end, false);
  return rows;
}

uint32_t PlannerModel::FreeNumber(PartitionKind kind) const {
  uint32_t first = 1,
           last = layout_.label == LabelType::kGpt ? kGptPartitions : kPlannerDosPrimaries;
  if (kind == PartitionKind::kLogical) {
    first = kPlannerDosPrimaries + 1;
    last = UINT32_MAX;
  }
  for (uint32_t n = first; n <= last; ++n) {
    if (std::none_of(layout_.partitions.begin(), layout_.partitions.end(),
                     [&](const PlannedPartition& p) { return p.number == n; })) {
      return n;
    }
  }
  return 0;
}

Result<uint64_t> PlannerModel::SnapSize(std::string_view text, uint64_t current, uint64_t start,
                                        uint64_t limit, uint64_t at_least) const {
  const Alignment& a = alignment_;
  Result<std::optional<uint64_t>> typed =
      ParsePromptSize(text, limit > start ? limit - start : 0, sector_size());
  if (!typed) return typed.error();
  // Enter keeps the size, or what fits of it.
  const uint64_t wanted = typed->value_or(std::min(current, limit > start ? limit - start : 0));
  if (wanted > limit - start) {
    return MakeError(fmt::format("{} does not fit: {} free from here", FormatSize(wanted),
                                 FormatSize(limit - start)));
  }
  // The end on a boundary: up, so that the size is at least what was asked, or down when that
  // does not fit.
  uint64_t end = a.Up(start + wanted);
  if (end > limit) end = a.Down(start + wanted);
  if (end <= start) {
    return MakeError(fmt::format("{} is less than a grain of {}", FormatSize(wanted),
                                 FormatSize(a.grain_bytes)));
  }
  if (end - start < at_least) {
    // Keeping the data wins over an aligned end.
    if (start + at_least <= limit && wanted >= at_least) return wanted;
    return MakeError(fmt::format("it holds {} of data; a size of {} would cut it",
                                 FormatSize(at_least), FormatSize(end - start)));
  }
  return end - start;
}

Status PlannerModel::Add(const PlannerRow& row, std::string_view size_text,
                         std::string_view type_text) {
  if (!row.free) return MakeError("select free space to make a partition in");
  if (row.inside_extended) {
    return MakeError(kInsideExtendedText);
  }
  if (layout_.label == LabelType::kDos) {
    size_t primaries = std::count_if(layout_.partitions.begin(), layout_.partitions.end(),
                                     [](const PlannedPartition& p) { return !IsLogical(p); });
    if (primaries >= kPlannerDosPrimaries)
      return MakeError("a DOS table holds 4 primary partitions");
  }
  Result<uint64_t> size =
      SnapSize(size_text, row.end_bytes - row.start_bytes, row.start_bytes, row.end_bytes, 0);
  if (!size) return size.error();
  Result<std::string> type =
      ResolvePartitionType(layout_.label, type_text.empty() ? "L" : type_text);
  if (!type) return type.error();
  PlannedPartition p;
  p.number = FreeNumber(PartitionKind::kPrimary);
  if (p.number == 0) return MakeError("the table has no free partition number");
  p.start_bytes = row.start_bytes;
  p.size_bytes = *size;
  p.type = *type;
  layout_.partitions.push_back(p);
  SortByStart(&layout_.partitions);
  if (!editing_existing()) {
    uint32_t n = 1;
    for (PlannedPartition& q : layout_.partitions) q.number = n++;
  }
  return {};
}

Status PlannerModel::Delete(const PlannerRow& row) {
  if (row.free) return MakeError("select a partition to delete");
  const PlannedPartition& p = layout_.partitions.at(row.index);
  if (p.existing && editing_existing() && !AllEmpty()) {
    // Deleting it would make the layout a fresh table, which would orphan the partitions that
    // hold data: its contents are given up instead, as plan --discard gives them up.
    if (IsContainer(p)) {
      return MakeError(
          "the extended partition holds the logical partitions: d on a logical partition gives "
          "up its contents");
    }
    if (std::find(layout_.discarded.begin(), layout_.discarded.end(), *p.existing) !=
        layout_.discarded.end()) {
      return MakeError(
          fmt::format("partition {}'s contents are given up already (u undoes it)", p.number));
    }
    layout_.discarded.push_back(*p.existing);
    std::sort(layout_.discarded.begin(), layout_.discarded.end());
    Replan();
    return {};
  }
  if (IsContainer(p) && std::any_of(layout_.partitions.begin(), layout_.partitions.end(),
                                    [](const PlannedPartition& q) { return IsLogical(q); })) {
    return MakeError("delete the logical partitions inside the extended one first");
  }
  layout_.partitions.erase(layout_.partitions.begin() + static_cast<ptrdiff_t>(row.index));
  if (!editing_existing()) {
    uint32_t n = 1;
    for (PlannedPartition& q : layout_.partitions) q.number = n++;
  }
  return {};
}

std::pair<uint64_t, uint64_t> PlannerModel::Room(size_t index) const {
  const PlannedPartition& p = layout_.partitions.at(index);
  uint64_t lo = usable_start_bytes(), hi = usable_end_bytes();
  if (IsLogical(p)) {
    // Inside the extended partition, one grain before each logical partition for its EBR
    // (libfdisk keeps its first LBA there, partalign's planner a grain).
    for (const PlannedPartition& e : layout_.partitions) {
      if (IsContainer(e)) {
        lo = e.start_bytes + sector_size();
        hi = e.end_bytes();
      }
    }
  }
  for (size_t i = 0; i < layout_.partitions.size(); ++i) {
    const PlannedPartition& q = layout_.partitions[i];
    if (i == index || IsLogical(q) != IsLogical(p)) continue;
    if (q.end_bytes() <= p.start_bytes)
      lo = std::max(lo, q.end_bytes() + (IsLogical(p) ? sector_size() : 0));
    if (q.start_bytes >= p.end_bytes())
      hi = std::min(hi, q.start_bytes - (IsLogical(q) ? sector_size() : 0));
  }
  return {lo, hi};
}

Status PlannerModel::Resize(const PlannerRow& row, std::string_view size_text) {
  if (row.free) return MakeError("select a partition to resize");
  PlannedPartition& p = layout_.partitions.at(row.index);
  if (IsContainer(p)) return MakeError("the extended partition follows its logical partitions");
  const Alignment& a = alignment_;
  auto [lo, hi] = Room(row.index);
  uint64_t start = p.start_bytes;
  if (!a.IsAligned(start)) {
    // The nearest aligned start the free space allows: down when it stays clear of the
    // partition before, else up.
    uint64_t down = start >= a.offset_bytes ? a.Down(start) : 0;
    uint64_t up = a.Up(start);
    if (start >= a.offset_bytes && down >= lo) {
      start = down;
    } else if (up < hi) {
      start = up;
    } else {
      return MakeError("no aligned start in the free space around it");
    }
  }
  const Partition* e = Existing(p);
  uint64_t keep = 0;
  const bool discarded =
      e != nullptr && std::find(layout_.discarded.begin(), layout_.discarded.end(), e->number) !=
                          layout_.discarded.end();
  if (e != nullptr && e->contents.MayHoldData() && !discarded) {
    keep = ProtectedSectors(*e, sector_size(), a.grain_bytes / sector_size()) * sector_size();
  }
  Result<uint64_t> size = SnapSize(size_text, p.size_bytes, start, hi, keep);
  if (!size) {
    if (start != p.start_bytes && keep > 0) {
      return MakeError(fmt::format(
          "{} (at the aligned start {} the free space ends at {}): m moves it elsewhere, A "
          "aligns everything as plan does",
          size.error().message, FormatSize(start), FormatSize(hi)));
    }
    return size.error();
  }
  p.start_bytes = start;
  p.size_bytes = *size;
  return {};
}

Status PlannerModel::Move(const PlannerRow& row, std::string_view start_text) {
  if (row.free) return MakeError("select a partition to move");
  PlannedPartition& p = layout_.partitions.at(row.index);
  if (IsContainer(p)) return MakeError("the extended partition follows its logical partitions");
  const Alignment& a = alignment_;
  // Plain variables, not a structured binding: lambdas capture them (Clang 14 refuses to
  // capture a binding).
  const auto room = Room(row.index);
  const uint64_t lo = room.first;
  const uint64_t hi = room.second;
  const uint64_t size = p.size_bytes;
  auto room_text = [&] {
    return fmt::format("the free space around it is {}-{} ({}), it needs {}", FormatSize(lo),
                       FormatSize(hi), FormatSize(hi > lo ? hi - lo : 0), FormatSize(size));
  };
  uint64_t start = 0;
  if (start_text.empty() || start_text.find_first_not_of(' ') == std::string_view::npos) {
    // The aligned start nearest to where it is, below or above, with room for all of it.
    std::optional<uint64_t> best;
    auto consider = [&](uint64_t s) {
      if (!a.IsAligned(s) || s < lo || s > hi || hi - s < size) return;
      const uint64_t d = s > p.start_bytes ? s - p.start_bytes : p.start_bytes - s;
      const uint64_t bd =
          best ? (*best > p.start_bytes ? *best - p.start_bytes : p.start_bytes - *best)
               : UINT64_MAX;
      if (d < bd) best = s;
    };
    if (hi >= size && hi - size >= a.offset_bytes) {
      consider(a.Down(std::min(p.start_bytes, hi - size)));
    }
    consider(a.Up(std::max(p.start_bytes, lo)));
    if (!best) {
      return MakeError(fmt::format(
          "no aligned start leaves room for partition {}: {}; move its neighbour first (m on "
          "it, with a start), or A aligns everything as plan does",
          p.number, room_text()));
    }
    start = *best;
  } else {
    Result<SfdiskSize> typed = ParseSfdiskSize(start_text);
    if (!typed) return typed.error();
    std::optional<uint64_t> at = typed->Bytes(sector_size());
    if (!at) return MakeError(fmt::format("a start of {} is beyond any disk", typed->Text()));
    start = a.Up(*at);
    if (start < lo || start > hi || hi - start < size) {
      return MakeError(fmt::format("partition {} does not fit at {}{}: {}", p.number,
                                   FormatSize(start), start != *at ? " (on the grain)" : "",
                                   room_text()));
    }
  }
  const Partition* e = Existing(p);
  uint64_t new_size = size;
  // The end on the next boundary when the space allows (plan grows an end so that the next
  // aligned start follows), unless the contents keep metadata at the partition's end.
  const uint64_t grown = a.Up(start + size) - start;
  if (hi - start >= grown && (e == nullptr || !IsEndAnchored(e->contents))) new_size = grown;
  p.start_bytes = start;
  p.size_bytes = new_size;
  return {};
}

Status PlannerModel::AlignAll() {
  if (!editing_existing()) {
    return MakeError("A realigns the partitions of the disk's table; this disk has none");
  }
  if (!plan_actions_) {
    return MakeError(fmt::format("partalign plan has no plan for this table: {}",
                                 plan_actions_.error().message));
  }
  const uint64_t ss = sector_size();
  PlannerLayout aligned;
  aligned.label = disk_.table.label;
  aligned.discarded = layout_.discarded;
  aligned.shrinks = layout_.shrinks;
  for (const Partition& e : disk_.table.partitions) {
    PlannedPartition p{
        e.number,    e.number, e.kind,       e.start_sector * ss, e.size_sectors * ss,
        e.type_code, e.name,   e.attributes, e.bootable};
    for (const PlanAction& act : *plan_actions_) {
      if (act.partition != e.number) continue;
      p.start_bytes = act.new_start_sector * ss;
      p.size_bytes = (act.new_end_sector - act.new_start_sector + 1) * ss;
    }
    aligned.partitions.push_back(p);
  }
  SortByStart(&aligned.partitions);
  layout_ = std::move(aligned);
  return {};
}

Status PlannerModel::CanSetType(const PlannerRow& row) const {
  if (row.free) return MakeError("select a partition to set its type");
  const PlannedPartition& p = layout_.partitions.at(row.index);
  if (IsContainer(p)) return MakeError("the extended partition keeps its type");
  const Partition* e = Existing(p);
  if (e != nullptr && e->contents.MayHoldData()) {
    return MakeError(fmt::format(
        "partition {} {}: apply moves partitions but does not change their type, so t keeps "
        "it ({}); sfdisk --part-type changes it",
        p.number,
        e->contents.fs_type.empty() ? MayHoldDataText(e->contents) : "holds " + e->contents.fs_type,
        PartitionTypeName(layout_.label, p.type)));
  }
  return {};
}

Status PlannerModel::SetType(const PlannerRow& row, std::string_view type_text) {
  if (Status can = CanSetType(row); !can) return can;
  PlannedPartition& p = layout_.partitions.at(row.index);
  Result<std::string> type =
      ResolvePartitionType(layout_.label, type_text.empty() ? "L" : type_text);
  if (!type) return type.error();
  p.type = *type;
  return {};
}

const Partition* PlannerModel::Existing(const PlannedPartition& p) const {
  return p.existing ? disk_.table.Find(*p.existing) : nullptr;
}

bool PlannerModel::Reshaped() const {
  if (!Deleted().empty()) return true;
  return std::any_of(layout_.partitions.begin(), layout_.partitions.end(),
                     [&](const PlannedPartition& p) {
                       const Partition* e = Existing(p);
                       return e == nullptr || p.type != e->type_code;
                     });
}

std::vector<std::pair<uint64_t, uint64_t>> PlannerModel::Extents() const {
  const uint64_t ss = sector_size();
  std::vector<std::pair<uint64_t, uint64_t>> extents;
  for (const Partition& e : disk_.table.partitions) {
    for (const PlannedPartition& p : layout_.partitions) {
      if (p.existing == e.number) extents.emplace_back(p.start_bytes / ss, p.end_bytes() / ss - 1);
    }
  }
  return extents;
}

Result<std::vector<PlanAction>> PlannerModel::Actions() const {
  if (!editing_existing() || Reshaped()) {
    return MakeError("the layout adds, deletes or retypes partitions");
  }
  Result<std::vector<PlanAction>> actions =
      DescribeExtents(disk_.table, alignment_, Options(), Extents());
  if (!actions) return actions.error();
  // Where the layout is plan's, plan's own words, also for a partition it cannot align.
  if (plan_actions_) AdoptPlansReasons(*plan_actions_, &*actions);
  return actions;
}

PartitionChange PlannerModel::ChangeOf(const PlannedPartition& p) const {
  const Partition* e = Existing(p);
  if (e == nullptr) return {PartitionChange::Kind::kNew, 0, "new", ""};
  Result<std::vector<PlanAction>> actions = Actions();
  if (actions) {
    for (const PlanAction& a : *actions) {
      if (a.partition != p.number) continue;
      const bool discarded = std::find(layout_.discarded.begin(), layout_.discarded.end(),
                                       p.number) != layout_.discarded.end();
      if (discarded && a.kind == ActionKind::kNone) {
        return {PartitionChange::Kind::kUnchanged, 0, "discarded",
                fmt::format("its contents are given up (as 'plan --discard {}'): A may use its "
                            "space; it stays in the table, empty",
                            p.number)};
      }
      if (discarded && a.kind == ActionKind::kTableOnly) {
        return {PartitionChange::Kind::kTableOnly, 0, "discarded", a.reason};
      }
      if (a.shrink) {
        // M: the contents shrink first (as plan --make-room), then the partition moves.
        const bool moves = a.kind == ActionKind::kMoveData;
        return {moves ? PartitionChange::Kind::kMoveData : PartitionChange::Kind::kTableOnly,
                moves ? a.bytes_to_move : 0,
                moves ? "shrink, move " + FormatSize(a.bytes_to_move) : std::string("shrink"),
                a.reason};
      }
      switch (a.kind) {
        case ActionKind::kNone:
          return {PartitionChange::Kind::kUnchanged, 0, "unchanged", a.reason};
        case ActionKind::kTableOnly:
          return {PartitionChange::Kind::kTableOnly, 0,
                  a.new_start_sector != a.old_start_sector ? "table only" : "resize", a.reason};
        case ActionKind::kMoveData:
          return {PartitionChange::Kind::kMoveData, a.bytes_to_move,
                  "move " + FormatSize(a.bytes_to_move), a.reason};
        case ActionKind::kImpossible:
          return {PartitionChange::Kind::kImpossible, 0, "impossible", a.reason};
      }
    }
  }
  // A reshaped layout (a fresh table, or not applicable): what happens to the bytes.
  const uint64_t ss = sector_size();
  const bool moved = p.start_bytes != e->start_sector * ss;
  const bool resized = p.size_bytes != e->size_sectors * ss;
  if (!moved && !resized) return {PartitionChange::Kind::kUnchanged, 0, "unchanged", ""};
  if (moved && e->contents.MayHoldData()) {
    uint64_t bytes = std::min(p.size_bytes, e->size_sectors * ss);
    return {PartitionChange::Kind::kMoveData, bytes, "move " + FormatSize(bytes), ""};
  }
  return {PartitionChange::Kind::kTableOnly, 0, moved ? "table only" : "resize", ""};
}

std::vector<const Partition*> PlannerModel::Deleted() const {
  std::vector<const Partition*> out;
  for (const Partition& e : disk_.table.partitions) {
    if (std::none_of(layout_.partitions.begin(), layout_.partitions.end(),
                     [&](const PlannedPartition& p) { return p.existing == e.number; })) {
      out.push_back(&e);
    }
  }
  return out;
}

std::string PlannerModel::ChangeSummary() const {
  size_t added = 0, moved = 0, table_only = 0, impossible = 0;
  uint64_t bytes = 0;
  for (const PlannedPartition& p : layout_.partitions) {
    PartitionChange c = ChangeOf(p);
    added += c.kind == PartitionChange::Kind::kNew;
    table_only += c.kind == PartitionChange::Kind::kTableOnly;
    impossible += c.kind == PartitionChange::Kind::kImpossible;
    if (c.kind == PartitionChange::Kind::kMoveData) {
      ++moved;
      bytes += c.bytes_to_move;
    }
  }
  std::vector<std::string> parts;
  if (added) parts.push_back(fmt::format("{} new", added));
  if (size_t d = Deleted().size()) parts.push_back(fmt::format("{} deleted", d));
  if (table_only) parts.push_back(fmt::format("{} table-only", table_only));
  if (moved) parts.push_back(fmt::format("{} moving {} of data", moved, FormatSize(bytes)));
  if (impossible) parts.push_back(fmt::format("{} cannot be aligned", impossible));
  for (const PlannedShrink& s : layout_.shrinks) {
    const Partition* p = disk_.table.Find(s.partition);
    if (p == nullptr) continue;
    parts.insert(parts.begin(),
                 fmt::format("partition {} shrunk by {} first ({})", s.partition,
                             FormatSize((p->size_sectors - s.size_sectors) * sector_size()),
                             ToString(s.tool)));
  }
  if (parts.empty()) return "no changes";
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
  return s;
}

Result<Plan> PlannerModel::MakePlan() const {
  Plan plan = EmptyPlan(disk_.table, disk_.device, alignment_);
  if (editing_existing() && !Reshaped()) {
    if (Result<std::vector<PlanAction>> shown = Actions(); !shown) return shown.error();
    // The plan file in plan's words (a start left misaligned is impossible), as apply
    // recomputes it.
    Result<std::vector<PlanAction>> actions =
        PlanFileActions(disk_.table, alignment_, Options(), Extents());
    if (!actions) return actions.error();
    if (plan_actions_) AdoptPlansReasons(*plan_actions_, &*actions);
    plan.actions = std::move(*actions);
    plan.relocate_backup_gpt = BackupRelocationFor(disk_.table);  // as plan makes it
    return plan;
  }
  return FreshPlan(/*check_data=*/true);
}

Result<Plan> PlannerModel::ReviewPlan() const {
  Result<Plan> plan = MakePlan();
  if (plan || (editing_existing() && !Reshaped())) return plan;
  return FreshPlan(/*check_data=*/false);
}

Result<Plan> PlannerModel::FreshPlan(bool check_data) const {
  const uint64_t ss = sector_size();
  Plan plan = EmptyPlan(disk_.table, disk_.device, alignment_);
  for (const Partition& e : disk_.table.partitions) {
    if (check_data && e.contents.MayHoldData()) {
      return MakeError(fmt::format(
          "this layout adds, deletes or retypes partitions, but partition {} {}: apply only "
          "moves and resizes partitions that may hold data (undo those edits, or export .sfdisk "
          "to review)",
          e.number,
          e.contents.fs_type.empty() ? MayHoldDataText(e.contents)
                                     : "holds " + e.contents.fs_type));
    }
  }
  if (std::any_of(layout_.partitions.begin(), layout_.partitions.end(),
                  [](const PlannedPartition& p) { return p.kind != PartitionKind::kPrimary; })) {
    return MakeError("a fresh layout holds primary partitions only");
  }
  PlanLayout l;
  l.label = layout_.label;
  const uint64_t lo = usable_start_bytes() / ss;
  l.first_usable_lba = alignment_.Up(lo * ss) / ss;
  l.last_usable_lba = usable_end_bytes() / ss - 1;
  uint32_t number = 1;
  for (const PlannedPartition& p : layout_.partitions) {
    l.first_usable_lba = std::min(l.first_usable_lba, p.start_bytes / ss);
    l.partitions.push_back({number++, p.start_bytes / ss, p.end_bytes() / ss - 1, p.type, p.name,
                            p.attributes, p.bootable});
  }
  if (l.partitions.empty()) return MakeError("the layout has no partitions");
  plan.layout = std::move(l);
  return plan;
}

LayoutRequest PlannerModel::Request() const {
  LayoutRequest r;
  r.label = layout_.label;
  const uint64_t last_boundary = alignment_.Down(usable_end_bytes());
  for (size_t i = 0; i < layout_.partitions.size(); ++i) {
    const PlannedPartition& p = layout_.partitions[i];
    if (IsContainer(p)) continue;
    bool last = i + 1 == layout_.partitions.size();
    if (last && p.end_bytes() >= last_boundary) {
      r.sizes_bytes.push_back(std::nullopt);
    } else {
      r.sizes_bytes.push_back(p.size_bytes);
    }
  }
  return r;
}

std::vector<ToolVerdict> PlannerModel::Verdicts(size_t index, const Topology& t) const {
  const PlannedPartition& p = layout_.partitions.at(index);
  const uint64_t lbs = t.logical_sector_size;
  VerdictInput in;
  in.topology = t;
  in.disk_sectors = t.size_bytes / lbs;
  in.number = p.number;
  in.start_sector = p.start_bytes / lbs;
  in.end_sector = p.end_bytes() / lbs - 1;
  for (const PlannedPartition& q : layout_.partitions) {
    if (!IsContainer(q)) in.all_starts.push_back(q.start_bytes / lbs);
  }
  std::vector<ToolVerdict> out;
  for (const ToolView& v : ToolViews()) {
    if (!v.verdict) continue;
    if (p.start_bytes % lbs != 0) {
      out.push_back({false, fmt::format("not on a whole {}-byte sector", lbs)});
    } else {
      out.push_back(v.verdict(in));
    }
  }
  return out;
}

}  // namespace partalign
