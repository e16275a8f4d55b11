#include "partalign/plan.h"

#include <array>

#include <fmt/format.h>

#include "partalign/json_util.h"
#include "partalign/version.h"

namespace partalign {
namespace {

constexpr std::array<std::pair<ActionKind, std::string_view>, 4> kKindNames{{
    {ActionKind::kNone, "none"},
    {ActionKind::kTableOnly, "table-only"},
    {ActionKind::kMoveData, "move-data"},
    {ActionKind::kImpossible, "impossible"},
}};

// Reads typed fields of one JSON object, remembering the first error with its key path.
class FieldReader {
 public:
  FieldReader(const nlohmann::json& object, std::string path)
      : object_(object), path_(std::move(path)) {}

  uint64_t Uint(const char* key) {
    const nlohmann::json* v = Get(key);
    if (!v) return 0;
    if (!v->is_number_unsigned() && !(v->is_number_integer() && v->get<int64_t>() >= 0)) {
      Fail(key, "not a non-negative integer");
      return 0;
    }
    return v->get<uint64_t>();
  }
  std::string String(const char* key, bool required = true) {
    const nlohmann::json* v = required ? Get(key) : Find(key);
    if (!v || v->is_null()) return {};
    if (!v->is_string()) {
      Fail(key, "not a string");
      return {};
    }
    return v->get<std::string>();
  }
  const nlohmann::json* Object(const char* key) {
    const nlohmann::json* v = Get(key);
    if (v && !v->is_object()) {
      Fail(key, "not an object");
      return nullptr;
    }
    return v;
  }
  const nlohmann::json* Array(const char* key) {
    const nlohmann::json* v = Get(key);
    if (v && !v->is_array()) {
      Fail(key, "not an array");
      return nullptr;
    }
    return v;
  }
  void Fail(const std::string& key, const std::string& what) {
    if (!error_) error_ = fmt::format("{}{}: {}", path_, key, what);
  }
  const std::optional<std::string>& error() const { return error_; }
  const std::string& path() const { return path_; }

 private:
  const nlohmann::json* Find(const char* key) const {
    auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }
  const nlohmann::json* Get(const char* key) {
    const nlohmann::json* v = Find(key);
    if (!v) Fail(key, "missing");
    return v;
  }

  const nlohmann::json& object_;
  std::string path_;
  std::optional<std::string> error_;
};

std::optional<LabelType> LabelFromString(std::string_view text) {
  for (LabelType l : {LabelType::kNone, LabelType::kDos, LabelType::kGpt, LabelType::kOther}) {
    if (ToString(l) == text) return l;
  }
  return std::nullopt;
}

}  // namespace

std::string_view ToString(ActionKind kind) {
  for (const auto& [k, name] : kKindNames) {
    if (k == kind) return name;
  }
  return "none";
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
    actions.push_back({{"partition", a.partition},
                       {"old_start_sector", a.old_start_sector},
                       {"old_end_sector", a.old_end_sector},
                       {"new_start_sector", a.new_start_sector},
                       {"new_end_sector", a.new_end_sector},
                       {"kind", ToString(a.kind)},
                       {"bytes_to_move", a.bytes_to_move},
                       {"reason", a.reason}});
  }
  const Topology& t = plan.topology;
  return {
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
}

Result<Plan> PlanFromJson(std::string_view text) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return MakeError("not valid JSON (truncated or corrupt?)");
  if (!doc.is_object()) return MakeError("not a JSON object");
  FieldReader root(doc, "");
  std::string format = root.String("format");
  if (root.error()) return MakeError(*root.error());
  if (format != kPlanFormat) {
    return MakeError(fmt::format("format is '{}', not '{}'", format, kPlanFormat));
  }
  uint64_t version = root.Uint("format_version");
  if (root.error()) return MakeError(*root.error());
  if (version != static_cast<uint64_t>(kPlanFormatVersion)) {
    return MakeError(fmt::format("format_version {} is not supported (this partalign reads {})",
                                 version, kPlanFormatVersion));
  }

  Plan plan;
  if (const nlohmann::json* disk = root.Object("disk")) {
    FieldReader r(*disk, "disk.");
    plan.disk.path = r.String("path");
    plan.disk.size_bytes = r.Uint("size_bytes");
    plan.disk.logical_sector_size = r.Uint("logical_sector_size");
    plan.disk.serial = r.String("serial", /*required=*/false);
    plan.disk.wwn = r.String("wwn", /*required=*/false);
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
      return MakeError(fmt::format("topology.source: unknown value '{}'", source));
    }
    if (t.logical_sector_size == 0) return MakeError("topology.logical_sector_size: is 0");
  }
  std::string label = root.String("label");
  plan.table_fingerprint = root.String("table_fingerprint");
  plan.alignment.grain_bytes = root.Uint("grain_bytes");
  plan.alignment.offset_bytes = root.Uint("offset_bytes");
  const nlohmann::json* actions = root.Array("actions");
  if (root.error()) return MakeError(*root.error());
  std::optional<LabelType> label_type = LabelFromString(label);
  if (!label_type) return MakeError(fmt::format("label: unknown value '{}'", label));
  plan.label = *label_type;
  if (plan.alignment.grain_bytes == 0) return MakeError("grain_bytes: is 0");
  if (plan.disk.logical_sector_size != plan.topology.logical_sector_size) {
    return MakeError("disk.logical_sector_size and topology.logical_sector_size differ");
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
    if (r.error()) return MakeError(*r.error());
    std::optional<ActionKind> k = ActionKindFromString(kind);
    if (!k) return MakeError(fmt::format("{}kind: unknown value '{}'", path, kind));
    a.kind = *k;
    if (a.partition == 0) return MakeError(path + "partition: is 0");
    if (a.old_end_sector < a.old_start_sector || a.new_end_sector < a.new_start_sector) {
      return MakeError(path + "new_end_sector/old_end_sector: end before start");
    }
    uint64_t sectors = plan.disk.size_bytes / plan.disk.logical_sector_size;
    if (a.old_end_sector >= sectors || a.new_end_sector >= sectors) {
      return MakeError(fmt::format("{}: beyond the end of the disk ({} sectors)",
                                   path.substr(0, path.size() - 1), sectors));
    }
    plan.actions.push_back(std::move(a));
  }
  return plan;
}

}  // namespace partalign
