#include "partalign/table/table_backup.h"

#include <fmt/format.h>

#include "partalign/table/plan_check.h"
#include "partalign/util/base64.h"
#include "partalign/util/json_reader.h"
#include "partalign/util/json_util.h"

namespace partalign {
namespace {

nlohmann::json IndexJson(const std::optional<uint32_t>& index) {
  return index ? nlohmann::json(*index) : nlohmann::json(nullptr);
}

std::optional<uint32_t> ReadIndex(FieldReader& r, const char* key) {
  std::optional<uint64_t> v = r.OptionalUint(key);
  if (!v) return std::nullopt;
  return static_cast<uint32_t>(*v);
}

Status ReadDevice(const nlohmann::json& j, BackupDevice* d) {
  FieldReader r(j, "device.");
  d->disk.path = r.String("path");
  d->disk.size_bytes = r.Uint("size_bytes");
  d->disk.logical_sector_size = r.Uint("logical_sector_size");
  d->disk.serial = r.String("serial", /*required=*/false);
  d->disk.wwn = r.String("wwn", /*required=*/false);
  d->is_block_device = r.Bool("is_block_device");
  d->major = static_cast<uint32_t>(r.Uint("major"));
  d->minor = static_cast<uint32_t>(r.Uint("minor"));
  d->kernel_name = r.String("kernel_name", /*required=*/false);
  d->backing_file = r.String("backing_file", /*required=*/false);
  if (r.error()) return MakeError(*r.error());
  if (d->disk.logical_sector_size == 0) return MakeError("device.logical_sector_size: is 0");
  return {};
}

Result<BackupRange> ReadRange(const nlohmann::json& j, const std::string& path) {
  if (!j.is_object()) return MakeError(path + ": not an object");
  FieldReader r(j, path + ".");
  BackupRange range;
  std::string role = r.String("role");
  range.offset_bytes = r.Uint("offset_bytes");
  range.length_bytes = r.Uint("length_bytes");
  range.old_index = ReadIndex(r, "old_index");
  range.new_index = ReadIndex(r, "new_index");
  range.xxh64 = r.String("xxh64");
  range.applied_xxh64 = r.String("applied_xxh64", /*required=*/false);
  std::string data = r.String("data_base64");
  if (r.error()) return MakeError(*r.error());
  std::optional<TableAreaRole> parsed_role = TableAreaRoleFromString(role);
  if (!parsed_role) return MakeError(fmt::format("{}.role: unknown value '{}'", path, role));
  range.role = *parsed_role;
  std::optional<std::vector<uint8_t>> bytes = Base64Decode(data);
  if (!bytes) return MakeError(path + ".data_base64: not valid base64 (truncated or corrupt?)");
  if (bytes->size() != range.length_bytes) {
    return MakeError(fmt::format("{}.data_base64: {} bytes, length_bytes says {}", path,
                                 bytes->size(), range.length_bytes));
  }
  range.bytes = std::move(*bytes);
  return range;
}

}  // namespace

std::vector<BackupRange> BackupRangesOf(const TableTransition& transition) {
  std::vector<BackupRange> out;
  for (const TableRange& r : transition.ranges) {
    BackupRange b;
    b.role = r.role;
    b.offset_bytes = r.offset_bytes;
    b.length_bytes = r.length_bytes;
    b.old_index = r.old_index;
    b.new_index = r.new_index;
    b.bytes = r.old_bytes;
    out.push_back(std::move(b));
  }
  return out;
}

nlohmann::json BackupToJson(const TableBackup& b) {
  nlohmann::json ranges = nlohmann::json::array();
  for (const BackupRange& r : b.ranges) {
    TableRange named{r.role, r.offset_bytes, r.length_bytes, r.old_index, r.new_index, {}, {}};
    ranges.push_back({
        {"area", AreaName(b.label, named)},
        {"role", ToString(r.role)},
        {"offset_bytes", r.offset_bytes},
        {"length_bytes", r.length_bytes},
        {"old_index", IndexJson(r.old_index)},
        {"new_index", IndexJson(r.new_index)},
        {"xxh64", r.xxh64},
        {"applied_xxh64", StringOrNull(r.applied_xxh64)},
        {"data_base64", Base64Encode(r.bytes)},
    });
  }
  const BackupDevice& d = b.device;
  nlohmann::json out = {
      {"format", kBackupFormat},
      {"format_version", kBackupFormatVersion},
      {"partalign_version", b.partalign_version},
      {"created", b.created},
      {"command", b.command},
      {"device",
       {{"path", d.disk.path},
        {"size_bytes", d.disk.size_bytes},
        {"logical_sector_size", d.disk.logical_sector_size},
        {"serial", StringOrNull(d.disk.serial)},
        {"wwn", StringOrNull(d.disk.wwn)},
        {"is_block_device", d.is_block_device},
        {"major", d.major},
        {"minor", d.minor},
        {"kernel_name", StringOrNull(d.kernel_name)},
        {"backing_file", StringOrNull(d.backing_file)}}},
      {"label", ToString(b.label)},
      {"sector_size", b.sector_size},
      {"table_fingerprint", b.table_fingerprint},
      {"applied_table_fingerprint", StringOrNull(b.applied_table_fingerprint)},
      {"sfdisk_dump", b.sfdisk_dump},
      {"ranges", ranges},
  };
  if (!b.moves.empty()) {
    nlohmann::json moves = nlohmann::json::array();
    for (const BackupMove& m : b.moves) {
      moves.push_back({{"partition", m.partition},
                       {"source_bytes", m.source_bytes},
                       {"dest_bytes", m.dest_bytes},
                       {"length_bytes", m.length_bytes},
                       {"journal", m.journal}});
    }
    out["moves"] = std::move(moves);
  }
  return out;
}

Result<TableBackup> BackupFromJson(std::string_view text) {
  Result<nlohmann::json> document = ParseFormatDocument(text, kBackupFormat, kBackupFormatVersion);
  if (!document) return document.error();
  const nlohmann::json& doc = *document;
  FieldReader root(doc, "");
  TableBackup b;
  b.partalign_version = root.String("partalign_version");
  b.created = root.String("created");
  b.command = root.String("command");
  const nlohmann::json* device = root.Object("device");
  std::string label = root.String("label");
  b.sector_size = root.Uint("sector_size");
  b.table_fingerprint = root.String("table_fingerprint");
  b.applied_table_fingerprint = root.String("applied_table_fingerprint", /*required=*/false);
  b.sfdisk_dump = root.String("sfdisk_dump");
  const nlohmann::json* ranges = root.Array("ranges");
  if (root.error()) return MakeError(*root.error());
  if (Status s = ReadDevice(*device, &b.device); !s) return s.error();
  std::optional<LabelType> parsed_label = LabelTypeFromString(label);
  if (!parsed_label || (*parsed_label != LabelType::kGpt && *parsed_label != LabelType::kDos)) {
    return MakeError(fmt::format("label: '{}' is not gpt or dos", label));
  }
  b.label = *parsed_label;
  if (b.sector_size != b.device.disk.logical_sector_size) {
    return MakeError("sector_size and device.logical_sector_size differ");
  }
  if (ranges->empty()) return MakeError("ranges: empty");
  for (size_t i = 0; i < ranges->size(); ++i) {
    Result<BackupRange> range = ReadRange((*ranges)[i], fmt::format("ranges[{}]", i));
    if (!range) return range.error();
    b.ranges.push_back(std::move(*range));
  }
  if (auto moves = doc.find("moves"); moves != doc.end()) {
    if (!moves->is_array()) return MakeError("moves: not an array");
    for (size_t i = 0; i < moves->size(); ++i) {
      const nlohmann::json& j = (*moves)[i];
      const std::string where = fmt::format("moves[{}]", i);
      if (!j.is_object()) return MakeError(where + ": not an object");
      FieldReader r(j, where + ".");
      BackupMove m;
      m.partition = static_cast<uint32_t>(r.Uint("partition"));
      m.source_bytes = r.Uint("source_bytes");
      m.dest_bytes = r.Uint("dest_bytes");
      m.length_bytes = r.Uint("length_bytes");
      m.journal = r.String("journal");
      if (r.error()) return MakeError(*r.error());
      b.moves.push_back(std::move(m));
    }
  }
  return b;
}

std::vector<std::string> BackupDeviceMismatches(const BackupDevice& saved,
                                                const BackupDevice& now) {
  std::vector<std::string> out = IdentityMismatches(saved.disk, now.disk, "backup");
  if (!saved.backing_file.empty() && !now.backing_file.empty() &&
      saved.backing_file != now.backing_file) {
    out.push_back(fmt::format("loop backing file: backup '{}', disk '{}'", saved.backing_file,
                              now.backing_file));
  }
  return out;
}

Result<TableTransition> RestoreTransition(const TableBackup& backup,
                                          const std::vector<std::vector<uint8_t>>& current) {
  if (current.size() != backup.ranges.size()) {
    return MakeError(
        fmt::format("{} ranges read, the backup has {}", current.size(), backup.ranges.size()));
  }
  TableTransition t;
  t.label = backup.label;
  t.sector_size = backup.sector_size;
  t.disk_size_bytes = backup.device.disk.size_bytes;
  for (size_t i = 0; i < backup.ranges.size(); ++i) {
    const BackupRange& r = backup.ranges[i];
    // Backwards: what the apply wrote is the "old" table of the restore.
    t.ranges.push_back(
        {r.role, r.offset_bytes, r.length_bytes, r.new_index, r.old_index, current[i], r.bytes});
  }
  SortForWrite(&t);
  if (Status s = ValidateTransition(t); !s) {
    return MakeError(fmt::format("the backup cannot be written back: {}", s.error().message));
  }
  return t;
}

std::string BackupFileName(std::string_view device_name, std::string_view timestamp,
                           std::string_view fingerprint) {
  std::string fp(fingerprint);
  for (char& c : fp) {
    if (c == ':') c = '-';
  }
  std::string name(device_name);
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  return fmt::format("{}-{}-{}{}", name, timestamp, fp, kBackupSuffix);
}

}  // namespace partalign
