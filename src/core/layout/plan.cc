// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/layout/plan.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "partalign/util/json_reader.h"
#include "partalign/util/json_util.h"
#include "partalign/util/version.h"

namespace partalign {
namespace {

constexpr std::array<std::pair<ActionKind, std::string_view>, 4> kKindNames{{
    {ActionKind::kNone, "none"},
    {ActionKind::kTableOnly, "table-only"},
    {ActionKind::kMoveData, "move-data"},
    {ActionKind::kImpossible, "impossible"},
}};

constexpr std::array<std::pair<Emptiness, std::string_view>, 4> kEmptinessNames{{
    {Emptiness::kNotClaimed, ""},
    {Emptiness::kZeros, "zeros"},
    {Emptiness::kHoles, "holes"},
    {Emptiness::kDiscarded, "discarded"},
}};

Result<PlanLayout> LayoutFromJson(const nlohmann::json& object, const DiskIdentity& disk) {
  FieldReader r(object, "layout.");
  PlanLayout layout;
  std::string label = r.String("label");
  layout.first_usable_lba = r.Uint("first_usable_lba");
  layout.last_usable_lba = r.Uint("last_usable_lba");
  const nlohmann::json* parts = r.Array("partitions");
  if (r.error()) return MakeError(*r.error());
  if (label == "gpt") {
    layout.label = LabelType::kGpt;
  } else if (label == "dos") {
    layout.label = LabelType::kDos;
  } else {
    return MakeError(fmt::format("layout.label: '{}' is not gpt or dos", Printable(label)));
  }
  const uint64_t sectors = disk.size_bytes / disk.logical_sector_size;
  if (layout.first_usable_lba > layout.last_usable_lba || layout.last_usable_lba >= sectors) {
    return MakeError("layout.first_usable_lba/last_usable_lba: not a range inside the disk");
  }
  for (size_t i = 0; i < parts->size(); ++i) {
    const nlohmann::json& item = (*parts)[i];
    std::string path = fmt::format("layout.partitions[{}].", i);
    if (!item.is_object()) return MakeError(path.substr(0, path.size() - 1) + ": not an object");
    FieldReader pr(item, path);
    LayoutPartition p;
    p.partition = static_cast<uint32_t>(pr.Uint("partition"));
    p.start_sector = pr.Uint("start_sector");
    p.end_sector = pr.Uint("end_sector");
    p.type = pr.String("type");
    p.name = pr.String("name", /*required=*/false);
    p.attributes = pr.String("attributes", /*required=*/false);
    p.bootable = pr.Bool("bootable");
    if (pr.error()) return MakeError(*pr.error());
    if (p.partition == 0) return MakeError(path + "partition: is 0");
    if (p.type.empty()) return MakeError(path + "type: is empty");
    if (p.end_sector < p.start_sector) return MakeError(path + "end_sector: before start_sector");
    if (p.start_sector < layout.first_usable_lba || p.end_sector > layout.last_usable_lba) {
      return MakeError(path.substr(0, path.size() - 1) + ": outside the usable area");
    }
    if (!layout.partitions.empty() && p.start_sector <= layout.partitions.back().end_sector) {
      return MakeError(path.substr(0, path.size() - 1) +
                       ": overlaps or precedes the partition before it");
    }
    layout.partitions.push_back(std::move(p));
  }
  return layout;
}

Result<BackupGptRelocation> RelocationFromJson(const nlohmann::json& object, const Plan& plan) {
  FieldReader r(object, "relocate_backup_gpt.");
  BackupGptRelocation move;
  move.from_lba = r.Uint("from_lba");
  move.to_lba = r.Uint("to_lba");
  move.old_last_usable_lba = r.Uint("old_last_usable_lba");
  move.new_last_usable_lba = r.Uint("new_last_usable_lba");
  if (r.error()) return MakeError(*r.error());
  if (plan.label != LabelType::kGpt || plan.layout) {
    return MakeError("relocate_backup_gpt: only for a plan on an existing GPT");
  }
  const uint64_t sectors = plan.disk.size_bytes / plan.disk.logical_sector_size;
  if (sectors == 0 || move.to_lba != sectors - 1) {
    return MakeError(fmt::format("relocate_backup_gpt.to_lba: not the last sector of the disk ({})",
                                 sectors == 0 ? 0 : sectors - 1));
  }
  if (move.from_lba >= move.to_lba || move.old_last_usable_lba >= move.from_lba ||
      move.new_last_usable_lba < move.old_last_usable_lba ||
      move.new_last_usable_lba >= move.to_lba) {
    return MakeError(
        "relocate_backup_gpt: the sectors are not in the order old usable end, "
        "backup now, new usable end, last sector");
  }
  return move;
}

// What each kind allows (include/partalign/layout/plan.h): `none` and `impossible` change
// nothing, `move-data` moves the start and copies at most the larger of the old and new extent,
// the others copy nothing. Sectors are inside the disk (checked before), so the byte counts
// cannot wrap.
Status CheckActionKind(const PlanAction& a, uint64_t sector_size, const std::string& path) {
  const bool moves = a.new_start_sector != a.old_start_sector;
  const bool changes = moves || a.new_end_sector != a.old_end_sector;
  switch (a.kind) {
    case ActionKind::kNone:
    case ActionKind::kImpossible:
      if (changes) {
        return MakeError(fmt::format("{}kind: '{}' but the new sectors differ from the old ones",
                                     path, ToString(a.kind)));
      }
      break;
    case ActionKind::kTableOnly:
      if (!changes) return MakeError(path + "kind: 'table-only' but nothing changes");
      break;
    case ActionKind::kMoveData: {
      if (!moves) return MakeError(path + "kind: 'move-data' but the start does not move");
      const uint64_t largest =
          std::max(a.old_end_sector - a.old_start_sector, a.new_end_sector - a.new_start_sector) +
          1;
      if (a.bytes_to_move == 0 || a.bytes_to_move > largest * sector_size) {
        return MakeError(
            fmt::format("{}bytes_to_move: {} is not between 1 and the partition's {} "
                        "bytes",
                        path, a.bytes_to_move, largest * sector_size));
      }
      return {};
    }
  }
  if (a.empty != Emptiness::kNotClaimed && a.kind != ActionKind::kTableOnly) {
    return MakeError(fmt::format("{}empty: '{}' for a '{}' action, which leaves no bytes behind",
                                 path, ToString(a.empty), ToString(a.kind)));
  }
  if (a.bytes_to_move != 0) {
    return MakeError(fmt::format("{}bytes_to_move: {} for a '{}' action, which moves no data", path,
                                 a.bytes_to_move, ToString(a.kind)));
  }
  return {};
}

}  // namespace

std::string_view ToString(ActionKind kind) {
  for (const auto& [k, name] : kKindNames) {
    if (k == kind) return name;
  }
  return "none";
}

std::string_view ToString(Emptiness emptiness) {
  for (const auto& [e, name] : kEmptinessNames) {
    if (e == emptiness) return name;
  }
  return "";
}

std::optional<ActionKind> ActionKindFromString(std::string_view text) {
  for (const auto& [k, name] : kKindNames) {
    if (name == text) return k;
  }
  return std::nullopt;
}

nlohmann::json PlanToJson(const Plan& plan) {
  nlohmann::json actions = nlohmann::json::array();
  for (const PlanAction& a : plan.actions) {
    nlohmann::json action = {
        {"partition", a.partition},           {"old_start_sector", a.old_start_sector},
        {"old_end_sector", a.old_end_sector}, {"new_start_sector", a.new_start_sector},
        {"new_end_sector", a.new_end_sector}, {"kind", ToString(a.kind)},
        {"bytes_to_move", a.bytes_to_move},   {"reason", a.reason}};
    if (a.empty != Emptiness::kNotClaimed) action["empty"] = ToString(a.empty);
    if (a.shrink) {
      action["shrink"] = {{"tool", ToString(a.shrink->tool)},
                          {"size_sectors", a.shrink->size_sectors}};
    }
    actions.push_back(std::move(action));
  }
  const Topology& t = plan.topology;
  nlohmann::json doc = {
      {"format", kPlanFormat},
      {"format_version", kPlanFormatVersion},
      {"partalign_version", kVersion},
      {"disk",
       {{"path", plan.disk.path},
        {"size_bytes", plan.disk.size_bytes},
        {"logical_sector_size", plan.disk.logical_sector_size},
        {"serial", StringOrNull(plan.disk.serial)},
        {"wwn", StringOrNull(plan.disk.wwn)}}},
      {"topology",
       {{"logical_sector_size", t.logical_sector_size},
        {"physical_sector_size", t.physical_sector_size},
        {"minimum_io_size", t.minimum_io_size},
        {"optimal_io_size", t.optimal_io_size},
        {"alignment_offset", t.alignment_offset},
        {"size_bytes", t.size_bytes},
        {"source", ToString(t.origin)}}},
      {"label", ToString(plan.label)},
      {"table_fingerprint", plan.table_fingerprint},
      {"grain_bytes", plan.alignment.grain_bytes},
      {"offset_bytes", plan.alignment.offset_bytes},
      {"actions", actions},
  };
  if (!plan.disk.table_id.empty()) doc["disk"]["table_id"] = plan.disk.table_id;
  if (plan.layout) {
    const PlanLayout& l = *plan.layout;
    nlohmann::json parts = nlohmann::json::array();
    for (const LayoutPartition& p : l.partitions) {
      parts.push_back({{"partition", p.partition},
                       {"start_sector", p.start_sector},
                       {"end_sector", p.end_sector},
                       {"type", p.type},
                       {"name", StringOrNull(p.name)},
                       {"attributes", StringOrNull(p.attributes)},
                       {"bootable", p.bootable}});
    }
    doc["layout"] = {{"label", ToString(l.label)},
                     {"first_usable_lba", l.first_usable_lba},
                     {"last_usable_lba", l.last_usable_lba},
                     {"partitions", parts}};
  }
  if (const auto& r = plan.relocate_backup_gpt) {
    doc["relocate_backup_gpt"] = {{"from_lba", r->from_lba},
                                  {"to_lba", r->to_lba},
                                  {"old_last_usable_lba", r->old_last_usable_lba},
                                  {"new_last_usable_lba", r->new_last_usable_lba}};
  }
  if (plan.at_next_boot) doc["at_next_boot"] = true;
  return doc;
}

namespace {

Result<Plan> ReadPlanDocument(std::string_view text) {
  Result<nlohmann::json> document = ParseFormatDocument(text, kPlanFormat, kPlanFormatVersion);
  if (!document) return document.error();
  const nlohmann::json& doc = *document;
  FieldReader root(doc, "");

  Plan plan;
  if (const nlohmann::json* disk = root.Object("disk")) {
    FieldReader r(*disk, "disk.");
    plan.disk.path = r.String("path");
    plan.disk.size_bytes = r.Uint("size_bytes");
    plan.disk.logical_sector_size = r.Uint("logical_sector_size");
    plan.disk.serial = r.String("serial", /*required=*/false);
    plan.disk.wwn = r.String("wwn", /*required=*/false);
    plan.disk.table_id = r.String("table_id", /*required=*/false);
    if (r.error()) return MakeError(*r.error());
  }
  if (const nlohmann::json* topology = root.Object("topology")) {
    FieldReader r(*topology, "topology.");
    Topology& t = plan.topology;
    t.logical_sector_size = r.Uint("logical_sector_size");
    t.physical_sector_size = r.Uint("physical_sector_size");
    t.minimum_io_size = r.Uint("minimum_io_size");
    t.optimal_io_size = r.Uint("optimal_io_size");
    t.alignment_offset = r.Uint("alignment_offset");
    t.size_bytes = r.Uint("size_bytes");
    std::string source = r.String("source");
    if (r.error()) return MakeError(*r.error());
    if (source == "kernel") {
      t.origin = TopologyOrigin::kKernel;
    } else if (source == "assumed") {
      t.origin = TopologyOrigin::kAssumed;
    } else if (source == "default") {
      t.origin = TopologyOrigin::kDefault;
    } else {
      return MakeError(fmt::format("topology.source: unknown value '{}'", Printable(source)));
    }
    if (t.logical_sector_size == 0) return MakeError("topology.logical_sector_size: is 0");
  }
  std::string label = root.String("label");
  plan.table_fingerprint = root.String("table_fingerprint");
  plan.alignment.grain_bytes = root.Uint("grain_bytes");
  plan.alignment.offset_bytes = root.Uint("offset_bytes");
  const nlohmann::json* actions = root.Array("actions");
  if (root.error()) return MakeError(*root.error());
  std::optional<LabelType> label_type = LabelTypeFromString(label);
  if (!label_type) return MakeError(fmt::format("label: unknown value '{}'", Printable(label)));
  plan.label = *label_type;
  if (plan.alignment.grain_bytes == 0) return MakeError("grain_bytes: is 0");
  if (plan.disk.logical_sector_size != plan.topology.logical_sector_size) {
    return MakeError("disk.logical_sector_size and topology.logical_sector_size differ");
  }
  const uint64_t ss = plan.disk.logical_sector_size;
  if (plan.alignment.grain_bytes % ss != 0) {
    return MakeError(fmt::format("grain_bytes: {} is not a multiple of the logical sector size {}",
                                 plan.alignment.grain_bytes, ss));
  }
  if (plan.alignment.offset_bytes >= plan.alignment.grain_bytes ||
      plan.alignment.offset_bytes % ss != 0) {
    return MakeError(fmt::format(
        "offset_bytes: {} is not a multiple of the logical sector size {} below grain_bytes {}",
        plan.alignment.offset_bytes, ss, plan.alignment.grain_bytes));
  }

  for (size_t i = 0; i < actions->size(); ++i) {
    const nlohmann::json& item = (*actions)[i];
    std::string path = fmt::format("actions[{}].", i);
    if (!item.is_object()) return MakeError(path.substr(0, path.size() - 1) + ": not an object");
    FieldReader r(item, path);
    PlanAction a;
    a.partition = static_cast<uint32_t>(r.Uint("partition"));
    a.old_start_sector = r.Uint("old_start_sector");
    a.old_end_sector = r.Uint("old_end_sector");
    a.new_start_sector = r.Uint("new_start_sector");
    a.new_end_sector = r.Uint("new_end_sector");
    std::string kind = r.String("kind");
    a.bytes_to_move = r.Uint("bytes_to_move");
    a.reason = r.String("reason");
    std::string empty = r.String("empty", /*required=*/false);
    const nlohmann::json* shrink = r.Object("shrink", /*required=*/false);
    if (r.error()) return MakeError(*r.error());
    if (shrink) {
      FieldReader sr(*shrink, path + "shrink.");
      std::string tool = sr.String("tool");
      const uint64_t size = sr.Uint("size_sectors");
      if (sr.error()) return MakeError(*sr.error());
      std::optional<ShrinkTool> t = ShrinkToolFromString(tool);
      if (!t) {
        return MakeError(fmt::format("{}shrink.tool: unknown value '{}'", path, Printable(tool)));
      }
      a.shrink = PlannedShrink{a.partition, *t, size};
    }
    std::optional<ActionKind> k = ActionKindFromString(kind);
    if (!k) return MakeError(fmt::format("{}kind: unknown value '{}'", path, Printable(kind)));
    a.kind = *k;
    if (!empty.empty()) {
      auto e = std::find_if(kEmptinessNames.begin() + 1, kEmptinessNames.end(),
                            [&](const auto& entry) { return entry.second == empty; });
      if (e == kEmptinessNames.end()) {
        return MakeError(fmt::format("{}empty: unknown value '{}'", path, Printable(empty)));
      }
      a.empty = e->first;
    }
    if (a.partition == 0) return MakeError(path + "partition: is 0");
    if (a.shrink) {
      a.shrink->partition = a.partition;
      if (a.shrink->size_sectors == 0 || a.old_end_sector < a.old_start_sector ||
          a.shrink->size_sectors > a.old_end_sector - a.old_start_sector) {
        return MakeError(path + "shrink.size_sectors: not between 1 and the partition's size");
      }
      if (a.kind != ActionKind::kTableOnly && a.kind != ActionKind::kMoveData) {
        return MakeError(fmt::format("{}shrink: for a '{}' action, which changes nothing", path,
                                     ToString(a.kind)));
      }
    }
    if (a.old_end_sector < a.old_start_sector || a.new_end_sector < a.new_start_sector) {
      return MakeError(path + "new_end_sector/old_end_sector: end before start");
    }
    uint64_t sectors = plan.disk.size_bytes / plan.disk.logical_sector_size;
    if (a.old_end_sector >= sectors || a.new_end_sector >= sectors) {
      return MakeError(fmt::format("{}: beyond the end of the disk ({} sectors)",
                                   path.substr(0, path.size() - 1), sectors));
    }
    if (Status s = CheckActionKind(a, ss, path); !s) return s.error();
    for (const PlanAction& before : plan.actions) {
      if (before.partition == a.partition) {
        return MakeError(
            fmt::format("{}partition: {} appears twice in the actions", path, a.partition));
      }
    }
    plan.actions.push_back(std::move(a));
  }
  // "layout" is optional: only plans made with --layout have it.
  if (const nlohmann::json* layout = root.Object("layout", /*required=*/false)) {
    Result<PlanLayout> parsed = LayoutFromJson(*layout, plan.disk);
    if (!parsed) return parsed.error();
    if (!plan.actions.empty()) return MakeError("layout: a plan has a layout or actions, not both");
    plan.layout = std::move(*parsed);
  }
  // "relocate_backup_gpt" is optional: only plans for a GPT whose backup is not at the end.
  if (const nlohmann::json* move = root.Object("relocate_backup_gpt", /*required=*/false)) {
    Result<BackupGptRelocation> parsed = RelocationFromJson(*move, plan);
    if (!parsed) return parsed.error();
    plan.relocate_backup_gpt = *parsed;
  }
  // "at_next_boot" is optional: only plans made with --at-next-boot have it (true).
  if (doc.contains("at_next_boot")) {
    plan.at_next_boot = root.Bool("at_next_boot");
    if (!root.error() && !plan.at_next_boot) root.Fail("at_next_boot", "false: omit the key");
    if (!root.error() && plan.layout) root.Fail("at_next_boot", "not for a plan with a layout");
  }
  if (root.error()) return MakeError(*root.error());
  return plan;
}

}  // namespace

Result<Plan> PlanFromJson(std::string_view text) {
  Result<Plan> plan = ReadPlanDocument(text);
  if (!plan) return MakeError(OneLine(plan.error().message));
  return plan;
}

}  // namespace partalign
