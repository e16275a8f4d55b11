// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/migrate/snapshot.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "partalign/topology/probe_report.h"
#include "partalign/util/json_reader.h"
#include "partalign/util/json_util.h"

namespace partalign {
namespace {

template <typename Enum, size_t N>
std::optional<Enum> EnumFromString(std::string_view text, const Enum (&values)[N]) {
  for (Enum v : values) {
    if (ToString(v) == text) return v;
  }
  return std::nullopt;
}

constexpr Transport kTransports[] = {Transport::kUnknown, Transport::kFile,   Transport::kLoop,
                                     Transport::kUsb,     Transport::kSata,   Transport::kScsi,
                                     Transport::kNvme,    Transport::kVirtio, Transport::kMmc};
constexpr PartitionKind kKinds[] = {PartitionKind::kPrimary, PartitionKind::kExtended,
                                    PartitionKind::kLogical};
constexpr TopologyOrigin kOrigins[] = {TopologyOrigin::kKernel, TopologyOrigin::kDefault,
                                       TopologyOrigin::kAssumed};

nlohmann::json DeviceJson(const Identity& id) {
  nlohmann::json bridge = nullptr;
  if (id.usb_bridge) {
    const UsbBridge& b = *id.usb_bridge;
    bridge = {{"vendor_id", b.vendor_id},
              {"product_id", b.product_id},
              {"manufacturer", StringOrNull(b.manufacturer)},
              {"product", StringOrNull(b.product)},
              {"driver", StringOrNull(b.driver)}};
  }
  return {{"path", id.path},
          {"kernel_name", StringOrNull(id.kernel_name)},
          {"is_block_device", id.is_block_device},
          {"transport", ToString(id.transport)},
          {"vendor", StringOrNull(id.vendor)},
          {"model", StringOrNull(id.model)},
          {"serial", StringOrNull(id.serial)},
          {"wwn", StringOrNull(id.wwn)},
          {"usb_bridge", bridge},
          {"backing_file", StringOrNull(id.backing_file)}};
}

nlohmann::json TopologyObject(const Topology& t) {
  return {{"logical_sector_size", t.logical_sector_size},
          {"physical_sector_size", t.physical_sector_size},
          {"minimum_io_size", t.minimum_io_size},
          {"optimal_io_size", t.optimal_io_size},
          {"alignment_offset", t.alignment_offset},
          {"size_bytes", t.size_bytes},
          {"source", ToString(t.origin)}};
}

nlohmann::json PartitionJson(const Partition& p, uint64_t sector_size, const ContentDigest* d) {
  const PartitionContents& c = p.contents;
  return {{"number", p.number},
          {"kind", ToString(p.kind)},
          {"start_sector", p.start_sector},
          {"size_sectors", p.size_sectors},
          {"start_bytes", p.start_sector * sector_size},
          {"size_bytes", p.size_sectors * sector_size},
          {"type", StringOrNull(p.type_code)},
          {"type_name", StringOrNull(p.type_name)},
          {"name", StringOrNull(p.name)},
          {"uuid", StringOrNull(p.uuid)},
          {"attributes", StringOrNull(p.attributes)},
          {"bootable", p.bootable},
          {"content",
           {{"fs_type", StringOrNull(c.fs_type)},
            {"fs_uuid", StringOrNull(c.fs_uuid)},
            {"fs_label", StringOrNull(c.fs_label)},
            {"fs_block_size", OptionalJson(c.fs_block_size)},
            {"has_data", c.MayHoldData()},
            {"content_proof", ToString(c.proof)},
            {"head_xxh64", d ? nlohmann::json(d->xxh64) : nlohmann::json(nullptr)},
            {"head_bytes", d ? nlohmann::json(d->length_bytes) : nlohmann::json(nullptr)}}}};
}

Status ReadDevice(const nlohmann::json& j, Identity* id) {
  FieldReader r(j, "device.");
  id->path = r.String("path");
  id->kernel_name = r.String("kernel_name", /*required=*/false);
  id->is_block_device = r.Bool("is_block_device");
  std::string transport = r.String("transport");
  id->vendor = r.String("vendor", false);
  id->model = r.String("model", false);
  id->serial = r.String("serial", false);
  id->wwn = r.String("wwn", false);
  id->backing_file = r.String("backing_file", false);
  const nlohmann::json* bridge = r.Object("usb_bridge", /*required=*/false);
  if (r.error()) return MakeError(*r.error());
  std::optional<Transport> t = EnumFromString(transport, kTransports);
  if (!t) return MakeError(fmt::format("device.transport: unknown value '{}'", transport));
  id->transport = *t;
  if (bridge && !bridge->is_null()) {
    FieldReader b(*bridge, "device.usb_bridge.");
    UsbBridge u;
    u.vendor_id = b.String("vendor_id");
    u.product_id = b.String("product_id");
    u.manufacturer = b.String("manufacturer", false);
    u.product = b.String("product", false);
    u.driver = b.String("driver", false);
    if (b.error()) return MakeError(*b.error());
    id->usb_bridge = u;
  }
  return {};
}

Status ReadTopology(const nlohmann::json& j, Topology* t) {
  FieldReader r(j, "topology.");
  t->logical_sector_size = r.Uint("logical_sector_size");
  t->physical_sector_size = r.Uint("physical_sector_size");
  t->minimum_io_size = r.Uint("minimum_io_size");
  t->optimal_io_size = r.Uint("optimal_io_size");
  t->alignment_offset = r.Uint("alignment_offset");
  t->size_bytes = r.Uint("size_bytes");
  std::string source = r.String("source");
  if (r.error()) return MakeError(*r.error());
  std::optional<TopologyOrigin> origin = EnumFromString(source, kOrigins);
  if (!origin) return MakeError(fmt::format("topology.source: unknown value '{}'", source));
  t->origin = *origin;
  if (t->logical_sector_size == 0) return MakeError("topology.logical_sector_size: is 0");
  return {};
}

Status ReadPartition(const nlohmann::json& j, const std::string& path, uint64_t sector_size,
                     Partition* p, std::optional<ContentDigest>* digest) {
  if (!j.is_object()) return MakeError(path + ": not an object");
  FieldReader r(j, path + ".");
  p->number = static_cast<uint32_t>(r.Uint("number"));
  std::string kind = r.String("kind");
  p->start_sector = r.Uint("start_sector");
  p->size_sectors = r.Uint("size_sectors");
  p->type_code = r.String("type", false);
  p->type_name = r.String("type_name", false);
  p->name = r.String("name", false);
  p->uuid = r.String("uuid", false);
  p->attributes = r.String("attributes", false);
  p->bootable = r.Bool("bootable");
  const nlohmann::json* content = r.Object("content");
  if (r.error()) return MakeError(*r.error());
  std::optional<PartitionKind> k = EnumFromString(kind, kKinds);
  if (!k) return MakeError(fmt::format("{}.kind: unknown value '{}'", path, kind));
  p->kind = *k;
  if (p->size_sectors == 0 || p->number == 0) {
    return MakeError(fmt::format("{}: partition number and size must not be 0", path));
  }
  if (p->start_sector > UINT64_MAX / sector_size ||
      p->size_sectors > UINT64_MAX / sector_size - p->start_sector) {
    return MakeError(fmt::format("{}: lies beyond 2^64 bytes", path));
  }
  FieldReader c(*content, path + ".content.");
  PartitionContents& pc = p->contents;
  pc.fs_type = c.String("fs_type", false);
  pc.fs_uuid = c.String("fs_uuid", false);
  pc.fs_label = c.String("fs_label", false);
  pc.fs_block_size = c.OptionalUint("fs_block_size");
  const bool has_data = c.Bool("has_data");
  // Snapshots before "content_proof": a signature, data, or nothing found in the first MiB.
  const std::string proof = c.String("content_proof", false);
  std::string head = c.String("head_xxh64", false);
  std::optional<uint64_t> head_bytes = c.OptionalUint("head_bytes");
  if (c.error()) return MakeError(*c.error());
  if (proof.empty()) {
    pc.proof = !pc.fs_type.empty() ? ContentProof::kSignature
               : has_data          ? ContentProof::kData
                                   : ContentProof::kUnscanned;
  } else {
    std::optional<ContentProof> parsed = ContentProofFromString(proof);
    if (!parsed) {
      return MakeError(
          fmt::format("{}.content.content_proof: unknown value '{}'", path, Printable(proof)));
    }
    pc.proof = *parsed;
    if (pc.MayHoldData() != has_data) {
      return MakeError(fmt::format("{}.content: has_data {} contradicts content_proof '{}'", path,
                                   has_data, proof));
    }
  }
  if (!head.empty()) {
    if (!head_bytes) return MakeError(path + ".content.head_bytes: missing");
    // verify reads these bytes from the disk: a snapshot records at most the first 64 KiB.
    const uint64_t most = std::min(kContentDigestBytes, p->size_sectors * sector_size);
    if (*head_bytes == 0 || *head_bytes > most) {
      return MakeError(
          fmt::format("{}.content.head_bytes: {} is not 1 to {}", path, *head_bytes, most));
    }
    *digest = ContentDigest{p->start_sector * sector_size, *head_bytes, head};
  }
  return {};
}

Status ReadTable(const nlohmann::json& j, Snapshot* s) {
  FieldReader r(j, "table.");
  PartitionTable& t = s->table;
  std::string type = r.String("type");
  t.sector_size = r.Uint("sector_size");
  s->table_written_for = r.OptionalUint("written_for_sector_size");
  s->table_written_for_reason = r.String("written_for_reason", false);
  t.disk_id = r.String("disk_id", false);
  t.disk_size_sectors = r.Uint("disk_size_sectors");
  t.first_usable_lba = r.Uint("first_usable_lba");
  t.last_usable_lba = r.Uint("last_usable_lba");
  t.fingerprint = r.String("fingerprint");
  const nlohmann::json* parts = r.Array("partitions");
  if (r.error()) return MakeError(*r.error());
  std::optional<LabelType> label = LabelTypeFromString(type);
  if (!label) return MakeError(fmt::format("table.type: unknown value '{}'", type));
  t.label = *label;
  if (t.sector_size == 0) return MakeError("table.sector_size: is 0");
  for (size_t i = 0; i < parts->size(); ++i) {
    Partition p;
    std::optional<ContentDigest> digest;
    if (Status st = ReadPartition((*parts)[i], fmt::format("table.partitions[{}]", i),
                                  t.sector_size, &p, &digest);
        !st) {
      return st;
    }
    // verify finds a partition by its number: two of one number would be compared crosswise.
    for (size_t k = 0; k < t.partitions.size(); ++k) {
      if (t.partitions[k].number == p.number) {
        return MakeError(
            fmt::format("table.partitions[{}].number: {} is partitions[{}]'s too", i, p.number, k));
      }
    }
    t.partitions.push_back(std::move(p));
    if (digest) s->digests.push_back(std::move(*digest));
  }
  return {};
}

Status ReadAudit(const nlohmann::json& doc, Snapshot* s) {
  FieldReader root(doc, "");
  s->audit_note = root.String("audit_note", false);
  const nlohmann::json* audit = root.Object("audit", /*required=*/false);
  if (root.error()) return MakeError(*root.error());
  if (!audit || audit->is_null()) return {};
  FieldReader r(*audit, "audit.");
  const nlohmann::json* parts = r.Array("partitions");
  if (r.error()) return MakeError(*r.error());
  for (size_t i = 0; i < parts->size(); ++i) {
    const std::string path = fmt::format("audit.partitions[{}]", i);
    if (!(*parts)[i].is_object()) return MakeError(path + ": not an object");
    FieldReader p((*parts)[i], path + ".");
    SnapshotVerdicts v;
    v.number = static_cast<uint32_t>(p.Uint("number"));
    v.aligned = p.Bool("aligned");
    const nlohmann::json* checks = p.Object("checks");
    if (p.error()) return MakeError(*p.error());
    for (const auto& [key, value] : checks->items()) {
      if (!value.is_null() && !value.is_boolean()) {
        return MakeError(fmt::format("{}.checks.{}: not true, false or null", path, key));
      }
      v.checks.push_back(
          {key, value.is_null() ? std::nullopt : std::optional<bool>(value.get<bool>())});
    }
    s->verdicts.push_back(std::move(v));
  }
  return {};
}

Status ReadPredictions(const nlohmann::json& doc, Snapshot* s) {
  FieldReader root(doc, "");
  const nlohmann::json* list = root.Array("predictions");
  if (root.error()) return MakeError(*root.error());
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string path = fmt::format("predictions[{}]", i);
    if (!(*list)[i].is_object()) return MakeError(path + ": not an object");
    FieldReader r((*list)[i], path + ".");
    SnapshotPrediction p;
    p.tool = r.String("tool");
    p.version = r.String("version", false);
    std::optional<uint64_t> grain = r.OptionalUint("grain_sectors");
    std::optional<uint64_t> offset = r.OptionalUint("offset_sectors");
    p.first_start_gpt = r.OptionalUint("first_start_gpt");
    p.first_start_dos = r.OptionalUint("first_start_dos");
    p.error = r.String("error", false);
    const nlohmann::json& warns = (*list)[i].contains("warns_at_1mib") ? (*list)[i]["warns_at_1mib"]
                                                                       : nlohmann::json(nullptr);
    if (r.error()) return MakeError(*r.error());
    if (!warns.is_null() && !warns.is_boolean()) {
      return MakeError(path + ".warns_at_1mib: not true, false or null");
    }
    if (warns.is_boolean()) p.warns_at_1mib = warns.get<bool>();
    if (grain) p.grain_sectors = static_cast<int64_t>(*grain);
    if (offset) p.offset_sectors = static_cast<int64_t>(*offset);
    s->predictions.push_back(std::move(p));
  }
  return {};
}

// Keeps letters, digits, '.', '_' and '-' of `text`; anything else becomes '_'.
std::string FileNamePart(std::string_view text) {
  std::string out;
  for (char c : text) {
    const bool keep =
        std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    out += keep ? c : '_';
  }
  while (!out.empty() && (out.front() == '.' || out.front() == '_')) out.erase(out.begin());
  return out;
}

}  // namespace

const ContentDigest* Snapshot::DigestAt(uint64_t offset_bytes) const {
  for (const ContentDigest& d : digests) {
    if (d.offset_bytes == offset_bytes) return &d;
  }
  return nullptr;
}

nlohmann::json SnapshotToJson(const Snapshot& s) {
  nlohmann::json partitions = nlohmann::json::array();
  for (const Partition& p : s.table.partitions) {
    partitions.push_back(
        PartitionJson(p, s.table.sector_size, s.DigestAt(p.start_sector * s.table.sector_size)));
  }
  nlohmann::json audit = nullptr;
  if (!s.verdicts.empty()) {
    nlohmann::json list = nlohmann::json::array();
    for (const SnapshotVerdicts& v : s.verdicts) {
      nlohmann::json checks = nlohmann::json::object();
      for (const SnapshotCheck& c : v.checks) checks[c.key] = OptionalJson(c.ok);
      list.push_back({{"number", v.number}, {"aligned", v.aligned}, {"checks", checks}});
    }
    audit = {{"sector_size", s.topology.logical_sector_size}, {"partitions", list}};
  }
  nlohmann::json predictions = nlohmann::json::array();
  for (const SnapshotPrediction& p : s.predictions) {
    predictions.push_back({{"tool", p.tool},
                           {"version", StringOrNull(p.version)},
                           {"grain_sectors", OptionalJson(p.grain_sectors)},
                           {"offset_sectors", OptionalJson(p.offset_sectors)},
                           {"first_start_gpt", OptionalJson(p.first_start_gpt)},
                           {"first_start_dos", OptionalJson(p.first_start_dos)},
                           {"warns_at_1mib", OptionalJson(p.warns_at_1mib)},
                           {"error", StringOrNull(p.error)}});
  }
  const PartitionTable& t = s.table;
  return {{"format", kSnapshotFormat},
          {"format_version", kSnapshotFormatVersion},
          {"schema_version", kJsonSchemaVersion},
          {"partalign_version", s.partalign_version},
          {"created", s.created},
          {"device", DeviceJson(s.identity)},
          {"topology", TopologyObject(s.topology)},
          {"table",
           {{"type", ToString(t.label)},
            {"sector_size", t.sector_size},
            {"written_for_sector_size", OptionalJson(s.table_written_for)},
            {"written_for_reason", StringOrNull(s.table_written_for_reason)},
            {"disk_id", StringOrNull(t.disk_id)},
            {"disk_size_sectors", t.disk_size_sectors},
            {"first_usable_lba", t.first_usable_lba},
            {"last_usable_lba", t.last_usable_lba},
            {"fingerprint", t.fingerprint},
            {"partitions", partitions}}},
          {"audit", audit},
          {"audit_note", StringOrNull(s.audit_note)},
          {"predictions", predictions}};
}

Result<Snapshot> SnapshotFromJson(std::string_view text) {
  Result<nlohmann::json> doc = ParseFormatDocument(text, kSnapshotFormat, kSnapshotFormatVersion);
  if (!doc) return doc.error();
  Snapshot s;
  FieldReader root(*doc, "");
  s.partalign_version = root.String("partalign_version");
  s.created = root.String("created");
  const nlohmann::json* device = root.Object("device");
  const nlohmann::json* topology = root.Object("topology");
  const nlohmann::json* table = root.Object("table");
  if (root.error()) return MakeError(*root.error());
  if (Status st = ReadDevice(*device, &s.identity); !st) return st.error();
  if (Status st = ReadTopology(*topology, &s.topology); !st) return st.error();
  if (Status st = ReadTable(*table, &s); !st) return st.error();
  if (Status st = ReadAudit(*doc, &s); !st) return st.error();
  if (Status st = ReadPredictions(*doc, &s); !st) return st.error();
  return s;
}

std::string SnapshotFileName(const Identity& identity, std::string_view timestamp) {
  std::string name = identity.kernel_name;
  if (name.empty()) name = identity.path.substr(identity.path.rfind('/') + 1);
  if (!identity.backing_file.empty()) {
    name += "-" + identity.backing_file.substr(identity.backing_file.rfind('/') + 1);
  }
  if (!identity.model.empty()) name += "-" + identity.model;
  if (!identity.serial.empty()) name += "-" + identity.serial;
  std::string clean = FileNamePart(name);
  if (clean.empty()) clean = "disk";
  return fmt::format("{}-{}{}", clean, timestamp, kSnapshotSuffix);
}

}  // namespace partalign
