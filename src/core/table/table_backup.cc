// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/table/table_backup.h"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

#include "partalign/table/plan_check.h"
#include "partalign/util/base64.h"
#include "partalign/util/checked_math.h"
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
  if (!parsed_role)
    return MakeError(fmt::format("{}.role: unknown value '{}'", path, Printable(role)));
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

Status ReadTableRole(FieldReader& r, std::string* table) {
  *table = r.String("table");
  if (r.error()) return MakeError(*r.error());
  if (*table != "saved" && *table != "applied") {
    return MakeError(
        fmt::format("{}table: '{}' is not saved or applied", r.path(), Printable(*table)));
  }
  return {};
}

Status ReadIdentity(const nlohmann::json& j, uint64_t disk_size_bytes, BackupIdentity* id) {
  FieldReader root(j, "identity.");
  const nlohmann::json* tables = root.Array("tables");
  const nlohmann::json* partitions = root.Array("partitions");
  if (root.error()) return MakeError(*root.error());
  for (size_t i = 0; i < tables->size(); ++i) {
    const nlohmann::json& e = (*tables)[i];
    const std::string where = fmt::format("identity.tables[{}]", i);
    if (!e.is_object()) return MakeError(where + ": not an object");
    FieldReader r(e, where + ".");
    BackupTableIdentity t;
    if (Status s = ReadTableRole(r, &t.table); !s) return s;
    std::string label = r.String("label");
    t.disk_id = r.String("disk_id", /*required=*/false);
    const nlohmann::json* guids = r.Array("partition_guids");
    if (r.error()) return MakeError(*r.error());
    std::optional<LabelType> parsed = LabelTypeFromString(label);
    if (!parsed || (*parsed != LabelType::kGpt && *parsed != LabelType::kDos)) {
      return MakeError(fmt::format("{}.label: '{}' is not gpt or dos", where, Printable(label)));
    }
    t.label = *parsed;
    for (size_t k = 0; k < guids->size(); ++k) {
      if (!(*guids)[k].is_string()) {
        return MakeError(fmt::format("{}.partition_guids[{}]: not a string", where, k));
      }
      t.partition_guids.push_back((*guids)[k].get<std::string>());
    }
    id->tables.push_back(std::move(t));
  }
  for (size_t i = 0; i < partitions->size(); ++i) {
    const nlohmann::json& e = (*partitions)[i];
    const std::string where = fmt::format("identity.partitions[{}]", i);
    if (!e.is_object()) return MakeError(where + ": not an object");
    FieldReader r(e, where + ".");
    BackupPartition p;
    if (Status s = ReadTableRole(r, &p.table); !s) return s;
    p.number = static_cast<uint32_t>(r.Uint("number"));
    p.offset_bytes = r.Uint("offset_bytes");
    p.length_bytes = r.Uint("length_bytes");
    p.fs_type = r.String("type", /*required=*/false);
    p.fs_uuid = r.String("uuid", /*required=*/false);
    p.fs_label = r.String("label", /*required=*/false);
    p.head_bytes = r.Uint("head_bytes");
    p.head_xxh64 = r.String("head_xxh64", /*required=*/false);
    if (r.error()) return MakeError(*r.error());
    std::optional<uint64_t> end = CheckedAdd(p.offset_bytes, p.length_bytes);
    if (p.length_bytes == 0 || !end || *end > disk_size_bytes) {
      return MakeError(where + ": not a range inside the disk");
    }
    if (p.head_bytes > p.length_bytes || p.head_bytes > kPartitionHeadBytes) {
      return MakeError(fmt::format("{}.head_bytes: {} is more than the partition's first {}", where,
                                   p.head_bytes, std::min(p.length_bytes, kPartitionHeadBytes)));
    }
    id->partitions.push_back(std::move(p));
  }
  return {};
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
  nlohmann::json context = nlohmann::json::array();
  for (const BackupContext& c : b.context) {
    context.push_back(
        {{"offset_bytes", c.offset_bytes}, {"length_bytes", c.length_bytes}, {"xxh64", c.xxh64}});
  }
  out["context"] = std::move(context);
  nlohmann::json tables = nlohmann::json::array();
  for (const BackupTableIdentity& t : b.identity.tables) {
    tables.push_back({{"table", t.table},
                      {"label", ToString(t.label)},
                      {"disk_id", StringOrNull(t.disk_id)},
                      {"partition_guids", t.partition_guids}});
  }
  nlohmann::json partitions = nlohmann::json::array();
  for (const BackupPartition& p : b.identity.partitions) {
    partitions.push_back({{"table", p.table},
                          {"number", p.number},
                          {"offset_bytes", p.offset_bytes},
                          {"length_bytes", p.length_bytes},
                          {"type", StringOrNull(p.fs_type)},
                          {"uuid", StringOrNull(p.fs_uuid)},
                          {"label", StringOrNull(p.fs_label)},
                          {"head_bytes", p.head_bytes},
                          {"head_xxh64", StringOrNull(p.head_xxh64)}});
  }
  out["identity"] = {{"tables", std::move(tables)}, {"partitions", std::move(partitions)}};
  if (b.table_sector_size) out["table_sector_size"] = *b.table_sector_size;
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

namespace {

Result<TableBackup> ReadBackupDocument(std::string_view text) {
  // Version 1 files (no "context") stay readable: parse with the version the file says when
  // it is one this partalign reads, so that any other gets ParseFormatDocument's message.
  int version = kBackupFormatVersion;
  nlohmann::json peek = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (peek.is_object() && peek.contains("format_version") &&
      peek["format_version"].is_number_unsigned() &&
      peek["format_version"].get<uint64_t>() >= kOldestBackupFormatVersion &&
      peek["format_version"].get<uint64_t>() <= kBackupFormatVersion) {
    version = static_cast<int>(peek["format_version"].get<uint64_t>());
  }
  Result<nlohmann::json> document = ParseFormatDocument(text, kBackupFormat, version);
  if (!document) return document.error();
  const nlohmann::json& doc = *document;
  FieldReader root(doc, "");
  TableBackup b;
  b.format_version = version;
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
  b.table_sector_size = root.OptionalUint("table_sector_size");
  if (root.error()) return MakeError(*root.error());
  if (Status s = ReadDevice(*device, &b.device); !s) return s.error();
  if (b.table_sector_size && (*b.table_sector_size < 512 || *b.table_sector_size > 65536 ||
                              (*b.table_sector_size & (*b.table_sector_size - 1)) != 0)) {
    return MakeError(
        fmt::format("table_sector_size: {} is not a sector size", *b.table_sector_size));
  }
  std::optional<LabelType> parsed_label = LabelTypeFromString(label);
  // "none": the disk had no table before a fresh one was written (apply of a fresh layout).
  if (!parsed_label || (*parsed_label != LabelType::kGpt && *parsed_label != LabelType::kDos &&
                        *parsed_label != LabelType::kNone)) {
    return MakeError(fmt::format("label: '{}' is not gpt, dos or none", Printable(label)));
  }
  b.label = *parsed_label;
  if (b.sector_size != b.device.disk.logical_sector_size) {
    return MakeError("sector_size and device.logical_sector_size differ");
  }
  if (ranges->empty()) return MakeError("ranges: empty");
  for (size_t i = 0; i < ranges->size(); ++i) {
    Result<BackupRange> range = ReadRange((*ranges)[i], fmt::format("ranges[{}]", i));
    if (!range) return range.error();
    std::optional<uint64_t> end = CheckedAdd(range->offset_bytes, range->length_bytes);
    if (range->length_bytes == 0 || !end || *end > b.device.disk.size_bytes ||
        range->offset_bytes % b.sector_size != 0 || range->length_bytes % b.sector_size != 0) {
      return MakeError(
          fmt::format("ranges[{}]: {} bytes at byte {} are not whole sectors inside "
                      "the disk ({} bytes)",
                      i, range->length_bytes, range->offset_bytes, b.device.disk.size_bytes));
    }
    b.ranges.push_back(std::move(*range));
  }
  if (version >= 2) {
    const nlohmann::json* context = root.Array("context");
    if (root.error()) return MakeError(*root.error());
    for (size_t i = 0; i < context->size(); ++i) {
      const nlohmann::json& j = (*context)[i];
      const std::string where = fmt::format("context[{}]", i);
      if (!j.is_object()) return MakeError(where + ": not an object");
      FieldReader r(j, where + ".");
      BackupContext c;
      c.offset_bytes = r.Uint("offset_bytes");
      c.length_bytes = r.Uint("length_bytes");
      c.xxh64 = r.String("xxh64");
      if (r.error()) return MakeError(*r.error());
      if (c.length_bytes == 0 || !CheckedAdd(c.offset_bytes, c.length_bytes) ||
          c.offset_bytes + c.length_bytes > b.device.disk.size_bytes) {
        return MakeError(where + ": not a range inside the disk");
      }
      b.context.push_back(std::move(c));
    }
  }
  if (version >= 3) {
    const nlohmann::json* identity = root.Object("identity");
    if (root.error()) return MakeError(*root.error());
    if (Status s = ReadIdentity(*identity, b.device.disk.size_bytes, &b.identity); !s) {
      return s.error();
    }
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

}  // namespace

Result<TableBackup> BackupFromJson(std::string_view text) {
  Result<TableBackup> backup = ReadBackupDocument(text);
  if (!backup) return MakeError(OneLine(backup.error().message));
  return backup;
}

std::vector<std::string> BackupDeviceMismatches(const BackupDevice& saved,
                                                const BackupDevice& now) {
  std::vector<std::string> out = IdentityMismatches(saved.disk, now.disk, "backup");
  if (!saved.backing_file.empty() && !now.backing_file.empty() &&
      saved.backing_file != now.backing_file) {
    out.push_back(fmt::format("loop backing file: backup '{}', disk '{}'",
                              Printable(saved.backing_file, 256),
                              Printable(now.backing_file, 256)));
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
  if (t.label == LabelType::kNone) {
    // The disk had no table: the ranges are the areas of the fresh table apply wrote, erased
    // in that table's write order.
    const bool gpt =
        std::any_of(backup.ranges.begin(), backup.ranges.end(),
                    [](const BackupRange& r) { return r.role != TableAreaRole::kMbr; });
    t.label = gpt ? LabelType::kGpt : LabelType::kDos;
  }
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

std::vector<ByteExtent> PartitionExtents(const PartitionTable& table) {
  std::vector<ByteExtent> out;
  for (const Partition& p : table.partitions) {
    if (p.kind == PartitionKind::kExtended) continue;
    std::optional<uint64_t> offset = LbaToBytes(p.start_sector, table.sector_size);
    std::optional<uint64_t> length = LbaToBytes(p.size_sectors, table.sector_size);
    if (offset && length) out.push_back({*offset, *length});
  }
  return out;
}

std::vector<BackupContext> ContextPlaces(const std::vector<BackupRange>& ranges,
                                         uint64_t sector_size, uint64_t disk_size_bytes,
                                         const std::vector<ByteExtent>& keep_out) {
  // Everything a window may not cover: the ranges and the partitions.
  std::vector<ByteExtent> taken = keep_out;
  for (const BackupRange& r : ranges) taken.push_back({r.offset_bytes, r.length_bytes});
  auto end_of = [](const ByteExtent& e) { return e.offset_bytes + e.length_bytes; };
  auto inside = [&](uint64_t offset) {
    return std::any_of(taken.begin(), taken.end(), [&](const ByteExtent& e) {
      return offset >= e.offset_bytes && offset < end_of(e);
    });
  };
  std::set<std::pair<uint64_t, uint64_t>> places;
  for (const BackupRange& r : ranges) {
    // After the range: up to kContextWindowBytes, to the next range, partition or the end.
    const uint64_t after = r.offset_bytes + r.length_bytes;
    if (after < disk_size_bytes && !inside(after)) {
      uint64_t limit = std::min(disk_size_bytes, after + kContextWindowBytes);
      for (const ByteExtent& e : taken) {
        if (e.offset_bytes >= after) limit = std::min(limit, e.offset_bytes);
      }
      limit = limit / sector_size * sector_size;
      if (limit > after) places.insert({after, limit - after});
    }
    // Before it, the same way down to the previous one or the start of the disk.
    if (r.offset_bytes > 0 && !inside(r.offset_bytes - 1)) {
      uint64_t floor =
          r.offset_bytes > kContextWindowBytes ? r.offset_bytes - kContextWindowBytes : 0;
      for (const ByteExtent& e : taken) {
        if (end_of(e) <= r.offset_bytes) floor = std::max(floor, end_of(e));
      }
      floor = (floor + sector_size - 1) / sector_size * sector_size;
      if (floor < r.offset_bytes) places.insert({floor, r.offset_bytes - floor});
    }
  }
  std::vector<BackupContext> out;
  for (const auto& [offset, length] : places) out.push_back({offset, length, ""});
  return out;
}

std::vector<std::string> BackupRangeProblems(const TableBackup& backup, const PartitionTable& saved,
                                             const std::vector<std::string>& current_xxh64) {
  std::vector<std::string> out;
  const uint64_t ss = backup.sector_size;
  // A translate backup's ranges are the union of the table's areas at two sector sizes, cut
  // where the old and the new areas begin and end: they match no single area, so each must
  // lie clear of every partition of the saved table (whose bytes are the filesystems').
  const bool translated = backup.saved_table_sector_size() != ss;
  const std::vector<ByteExtent> partitions = PartitionExtents(saved);
  for (size_t i = 0; i < backup.ranges.size(); ++i) {
    const BackupRange& r = backup.ranges[i];
    const bool table_area =
        translated ? std::none_of(partitions.begin(), partitions.end(),
                                  [&](const ByteExtent& e) {
                                    return r.offset_bytes < e.offset_bytes + e.length_bytes &&
                                           e.offset_bytes < r.offset_bytes + r.length_bytes;
                                  })
                   : std::any_of(saved.areas.begin(), saved.areas.end(), [&](const TableArea& a) {
                       const uint64_t begin = a.offset_bytes / ss * ss;
                       const uint64_t end = (a.offset_bytes + a.size_bytes + ss - 1) / ss * ss;
                       return r.offset_bytes == begin && r.length_bytes == end - begin;
                     });
    if (table_area) continue;
    const std::string& now = i < current_xxh64.size() ? current_xxh64[i] : std::string();
    if (now == r.xxh64 || (!r.applied_xxh64.empty() && now == r.applied_xxh64)) continue;
    out.push_back(fmt::format(
        "ranges[{}] ({} bytes at byte {}) is not part of the table the backup holds, and the disk "
        "holds neither its saved bytes there nor what the {} wrote",
        i, r.length_bytes, r.offset_bytes, backup.command));
  }
  return out;
}

BackupTableIdentity TableIdentityOf(const PartitionTable& table, std::string_view role) {
  BackupTableIdentity id;
  id.table = role;
  id.label = table.label;
  id.disk_id = table.disk_id;
  if (table.label == LabelType::kGpt) {
    for (const Partition& p : table.partitions) id.partition_guids.push_back(p.uuid);
  }
  return id;
}

std::vector<std::string> TableIdentityMismatches(const PartitionTable& saved,
                                                 const TableScan& now) {
  return TableIdentityMismatches(TableIdentityOf(saved, "saved"), now);
}

std::vector<std::string> TableIdentityMismatches(const BackupTableIdentity& saved,
                                                 const TableScan& now) {
  std::vector<std::string> out;
  if (now.disk_id.empty()) return out;
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  if (now.label != saved.label) {
    out.push_back(fmt::format("the disk holds a {} table, the backup a {} table",
                              ToString(now.label), ToString(saved.label)));
    return out;
  }
  if (lower(now.disk_id) != lower(saved.disk_id)) {
    out.push_back(fmt::format("{}: backup {}, disk {}",
                              saved.label == LabelType::kGpt ? "disk GUID" : "disk identifier",
                              saved.disk_id, now.disk_id));
  }
  if (saved.label == LabelType::kGpt) {
    std::set<std::string> known;
    for (const std::string& guid : saved.partition_guids) known.insert(lower(guid));
    for (const ScannedPartition& p : now.partitions) {
      if (!known.count(lower(p.uuid))) {
        out.push_back(
            fmt::format("partition {} GUID {}: not in the backup's table", p.number, p.uuid));
      }
    }
  }
  return out;
}

std::vector<BackupPartition> BackupPartitionPlaces(const PartitionTable* saved,
                                                   const PartitionTable* applied) {
  std::vector<BackupPartition> out;
  for (const PartitionTable* t : {saved, applied}) {
    if (!t) continue;
    for (const Partition& p : t->partitions) {
      if (p.kind == PartitionKind::kExtended) continue;
      std::optional<uint64_t> offset = LbaToBytes(p.start_sector, t->sector_size);
      std::optional<uint64_t> length = LbaToBytes(p.size_sectors, t->sector_size);
      if (!offset || !length || *length == 0) continue;
      const bool known = std::any_of(out.begin(), out.end(), [&](const BackupPartition& b) {
        return b.offset_bytes == *offset && b.length_bytes == *length;
      });
      if (known) continue;
      BackupPartition b;
      b.table = t == saved ? "saved" : "applied";
      b.number = p.number;
      b.offset_bytes = *offset;
      b.length_bytes = *length;
      b.head_bytes = std::min(*length, kPartitionHeadBytes);
      out.push_back(std::move(b));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const BackupPartition& a, const BackupPartition& b) {
    return a.offset_bytes < b.offset_bytes;
  });
  return out;
}

namespace {

std::string Signature(const std::string& type, const std::string& uuid) {
  if (type.empty()) return "no signature";
  return uuid.empty() ? type : fmt::format("{} UUID {}", type, uuid);
}

}  // namespace

ContentEvidence CompareContents(const std::vector<BackupPartition>& recorded,
                                const std::vector<PartitionSeen>& now) {
  ContentEvidence e;
  for (size_t i = 0; i < recorded.size() && i < now.size(); ++i) {
    const BackupPartition& r = recorded[i];
    const PartitionSeen& n = now[i];
    const std::string place = fmt::format(
        "partition {} ({}) at byte {}", r.number,
        r.table == "saved" ? "of the saved table" : "of the written table", r.offset_bytes);
    const bool same_signature = n.fs_type == r.fs_type && n.fs_uuid == r.fs_uuid;
    const bool same_uuid = same_signature && !r.fs_type.empty() && !r.fs_uuid.empty();
    const bool same_head = !r.head_xxh64.empty() && n.head_xxh64 == r.head_xxh64;
    if (!n.fs_type.empty() && !same_signature) {
      e.other.push_back(fmt::format("{}: the backup saw {} there, the disk holds {}", place,
                                    Signature(r.fs_type, r.fs_uuid),
                                    Signature(n.fs_type, n.fs_uuid)));
    } else if (same_uuid || same_head) {
      e.same.push_back(fmt::format("{}: {}", place,
                                   same_uuid
                                       ? Signature(r.fs_type, r.fs_uuid)
                                       : fmt::format("the same first {} bytes", r.head_bytes)));
    }
  }
  return e;
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

std::optional<std::vector<uint8_t>> BytesBeforeOwnTables(const std::vector<TableBackup>& backups,
                                                         uint64_t offset_bytes,
                                                         uint64_t length_bytes,
                                                         const std::string& now_xxh64) {
  std::string want = now_xxh64;
  std::set<std::string> seen;
  while (!want.empty() && seen.insert(want).second) {
    const BackupRange* found = nullptr;
    for (const TableBackup& b : backups) {
      for (const BackupRange& r : b.ranges) {
        if (r.offset_bytes == offset_bytes && r.length_bytes == length_bytes && r.new_index &&
            r.applied_xxh64 == want && r.xxh64 != want) {
          found = &r;
          break;
        }
      }
      if (found) break;
    }
    if (!found) return std::nullopt;
    if (!found->old_index) return found->bytes;
    want = found->xxh64;
  }
  return std::nullopt;
}

}  // namespace partalign
