// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/move/journal_format.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "partalign/topology/alignment.h"

namespace partalign {
namespace {

constexpr char kStateMagic[8] = {'P', 'A', 'J', 'S', 'T', 'A', 'T', 'E'};
constexpr char kRecordMagic[8] = {'P', 'A', 'J', 'R', 'E', 'C', 'R', 'D'};
constexpr const char* kFormatName = "partalign-move-journal";
/// Header preamble: magic(8) version(4) reserved(4) json_length(8) checksum(8); JSON at 64.
constexpr size_t kHeaderChecksumAt = 24;
constexpr size_t kHeaderJsonAt = 64;
/// State block: fields up to 72 (version 1) or 80 (version 2: digests_known at 72), then the
/// checksum of the bytes before it.
constexpr size_t kStateChecksumAtV1 = 72;
constexpr size_t kStateChecksumAt = 80;
/// Record header: fields up to 64, checksum of [0, 64) at 64.
constexpr size_t kRecordChecksumAt = 64;
constexpr size_t kDigestBytes = 16;
/// The registry entries' own format version (unchanged by the journal's version 2).
constexpr uint32_t kRegistryVersion = 1;
/// Copy map: first chunk and chunk count of a run, u64 each.
constexpr size_t kCopyRunBytes = 16;
constexpr uint32_t kRecordRollbackFlag = 1;

// Explicit little-endian encoding: the journal must read the same on any host.
void Put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void Put64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t Get32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}
uint64_t Get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// `into` ^= `block`, one 4 KiB journal block, 8 bytes at a time. A byte loop here was 60% of a
// move's CPU (the journal stage's, which paced the copy pass): at -O2 GCC does not vectorize it,
// `into` and `block` may alias. XOR works byte by byte, so the words' byte order does not matter.
void XorBlockInto(uint8_t* into, const uint8_t* block) {
  for (size_t i = 0; i < kJournalBlockBytes; i += sizeof(uint64_t)) {
    uint64_t a = 0;
    uint64_t b = 0;
    std::memcpy(&a, into + i, sizeof(a));
    std::memcpy(&b, block + i, sizeof(b));
    a ^= b;
    std::memcpy(into + i, &a, sizeof(a));
  }
}

// State blocks and record headers share their frame: magic at 0, version at 8, the journal's
// uuid at `uuid_at`, and the checksum of everything before `checksum_at` stored there. A block
// that fails any of these was never written whole by this journal.
bool IsIntactBlock(std::span<const uint8_t> block, const char (&magic)[8], size_t checksum_at,
                   size_t uuid_at, const JournalUuid& uuid, const Hasher& hasher,
                   uint32_t version) {
  if (block.size() < checksum_at + 8) return false;
  if (std::memcmp(block.data(), magic, sizeof(magic)) != 0) return false;
  if (hasher.Hash64(block.first(checksum_at)) != Get64(&block[checksum_at])) return false;
  if (Get32(&block[8]) != version) return false;
  return std::memcmp(&block[uuid_at], uuid.data(), uuid.size()) == 0;
}

std::string Hex64(uint64_t value) { return fmt::format("{:016x}", value); }

Result<uint64_t> ParseHex64(const std::string& text) {
  if (text.size() != 16) return MakeError(fmt::format("'{}' is not a 64-bit hex checksum", text));
  uint64_t value = 0;
  for (char c : text) {
    int digit = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
    if (digit < 0) return MakeError(fmt::format("'{}' is not a 64-bit hex checksum", text));
    value = value << 4 | static_cast<uint64_t>(digit);
  }
  return value;
}

Result<JournalUuid> ParseUuid(const std::string& text) {
  JournalUuid uuid{};
  if (text.size() != 32) return MakeError(fmt::format("'{}' is not a journal uuid", text));
  for (size_t i = 0; i < 16; ++i) {
    Result<uint64_t> high = ParseHex64(std::string(15, '0') + text[2 * i]);
    Result<uint64_t> low = ParseHex64(std::string(15, '0') + text[2 * i + 1]);
    if (!high || !low) return MakeError(fmt::format("'{}' is not a journal uuid", text));
    uuid[i] = static_cast<uint8_t>(*high << 4 | *low);
  }
  return uuid;
}

const char* DirectionName(const MoveGeometry& move) {
  return move.dest_bytes > move.source_bytes ? "towards-end" : "towards-start";
}

nlohmann::json DeviceJson(const JournalDevice& d) {
  return {{"path", d.path},
          {"kind", d.is_block_device ? "block-device" : "image-file"},
          {"size_bytes", d.size_bytes},
          {"logical_sector_size", d.logical_sector_size},
          {"major", d.major},
          {"minor", d.minor},
          {"serial", d.serial},
          {"wwn", d.wwn},
          {"backing_file", d.backing_file},
          {"file_dev", d.file_dev},
          {"file_ino", d.file_ino}};
}

Result<JournalDevice> DeviceFromJson(const nlohmann::json& d) {
  JournalDevice device;
  device.path = d.at("path").get<std::string>();
  device.is_block_device = d.at("kind").get<std::string>() == "block-device";
  device.size_bytes = d.at("size_bytes").get<uint64_t>();
  device.logical_sector_size = d.at("logical_sector_size").get<uint64_t>();
  device.major = d.at("major").get<uint32_t>();
  device.minor = d.at("minor").get<uint32_t>();
  device.serial = d.at("serial").get<std::string>();
  device.wwn = d.at("wwn").get<std::string>();
  device.backing_file = d.at("backing_file").get<std::string>();
  device.file_dev = d.at("file_dev").get<uint64_t>();
  device.file_ino = d.at("file_ino").get<uint64_t>();
  return device;
}

nlohmann::json HeaderJson(const JournalHeader& h, const Hasher& hasher) {
  nlohmann::json table = nlohmann::json::array();
  for (const TableUpdateInfo& t : h.table) {
    nlohmann::json update = {{"offset_bytes", t.offset_bytes},
                             {"length_bytes", t.length_bytes},
                             {"old_checksum", Hex64(t.old_checksum)},
                             {"new_checksum", Hex64(t.new_checksum)}};
    if (t.in_data) update["in_data"] = true;
    if (t.restore_only) update["restore_only"] = true;
    table.push_back(std::move(update));
  }
  const JournalLayout& l = h.layout;
  return {{"format", kFormatName},
          {"version", h.version},
          {"uuid", ToHex(h.uuid)},
          {"created_by", h.created_by},
          {"hash", hasher.name()},
          {"device", DeviceJson(h.device)},
          {"move",
           {{"source_bytes", h.move.source_bytes},
            {"dest_bytes", h.move.dest_bytes},
            {"length_bytes", h.move.length_bytes},
            {"chunk_bytes", h.move.chunk_bytes},
            {"chunks_per_batch", h.move.chunks_per_batch},
            {"ring_batches", h.move.ring_batches},
            {"chunk_count", ChunkCount(h.move)},
            {"direction", DirectionName(h.move)}}},
          {"table_updates", table},
          {"layout",
           {{"header_bytes", kJournalHeaderBytes},
            {"table_data_offset", l.table_data_offset},
            {"table_data_bytes", l.table_data_bytes},
            {"digest_table_offset", l.digest_table_offset},
            {"digest_table_bytes", l.digest_table_bytes},
            {"state_offset", l.state_offset},
            {"ring_offset", l.ring_offset},
            {"slot_bytes", l.slot_bytes},
            {"slot_count", l.slot_count},
            {"file_bytes", l.file_bytes}}}};
}

// Version 2 adds the copy map and the used map's summary; version 1 headers stay byte for byte
// what version 1 wrote (tests/core/move/journal_format_test.cc keeps one).
nlohmann::json HeaderJsonOf(const JournalHeader& h, const Hasher& hasher) {
  nlohmann::json j = HeaderJson(h, hasher);
  if (h.version == kJournalVersionV1) return j;
  j["move"]["range_chunk_count"] = RangeChunkCount(h.move);
  j["move"]["copied_bytes"] = CopiedBytes(h.move);
  j["copy_map"] = {{"run_count", h.copy_run_count},
                   {"copied_chunks", h.copied_chunks},
                   {"checksum", Hex64(h.copy_map_checksum)}};
  nlohmann::json reasons = nlohmann::json::object();
  for (const auto& [name, bytes] : h.used.reasons) reasons[name] = bytes;
  j["used"] = {{"source", h.used.source},
               {"used_bytes", h.used.used_bytes},
               {"reasons_bytes", reasons},
               {"notes", h.used.notes}};
  j["layout"]["copy_map_offset"] = h.layout.copy_map_offset;
  j["layout"]["copy_map_bytes"] = h.layout.copy_map_bytes;
  if (h.version >= kJournalVersion) {
    j["layout"]["header_copy_offset"] = h.layout.header_copy_offset;
    j["layout"]["mirror_bytes"] = h.layout.mirror_bytes;
    j["layout"]["repair_bytes"] = h.layout.repair_bytes;
  }
  if (!h.step.empty()) j["step"] = h.step;
  return j;
}

// Reads the JSON back; nlohmann throws on missing keys or wrong types, which we turn into one
// error (the only place exceptions are caught, and they never leave this function).
Result<JournalHeader> HeaderFromJson(const nlohmann::json& j, const Hasher& hasher) {
  try {
    if (j.at("format").get<std::string>() != kFormatName) {
      return MakeError("the header does not describe a partalign move journal");
    }
    JournalHeader h;
    h.version = j.at("version").get<uint32_t>();
    if (!IsSupportedJournalVersion(h.version)) {
      return MakeError(
          fmt::format("journal format version {} is not supported (this partalign "
                      "reads versions {} to {})",
                      h.version, kJournalVersionV1, kJournalVersion));
    }
    if (j.at("hash").get<std::string>() != hasher.name()) {
      return MakeError(fmt::format("the journal uses hash '{}', this partalign uses '{}'",
                                   j.at("hash").get<std::string>(), hasher.name()));
    }
    Result<JournalUuid> uuid = ParseUuid(j.at("uuid").get<std::string>());
    if (!uuid) return uuid.error();
    h.uuid = *uuid;
    h.created_by = j.at("created_by").get<std::string>();
    Result<JournalDevice> device = DeviceFromJson(j.at("device"));
    if (!device) return device.error();
    h.device = std::move(*device);
    const nlohmann::json& m = j.at("move");
    h.move.source_bytes = m.at("source_bytes").get<uint64_t>();
    h.move.dest_bytes = m.at("dest_bytes").get<uint64_t>();
    h.move.length_bytes = m.at("length_bytes").get<uint64_t>();
    h.move.chunk_bytes = m.at("chunk_bytes").get<uint64_t>();
    h.move.chunks_per_batch = m.at("chunks_per_batch").get<uint32_t>();
    h.move.ring_batches = m.at("ring_batches").get<uint32_t>();
    for (const nlohmann::json& t : j.at("table_updates")) {
      TableUpdateInfo info;
      info.offset_bytes = t.at("offset_bytes").get<uint64_t>();
      info.length_bytes = t.at("length_bytes").get<uint64_t>();
      Result<uint64_t> old_sum = ParseHex64(t.at("old_checksum").get<std::string>());
      Result<uint64_t> new_sum = ParseHex64(t.at("new_checksum").get<std::string>());
      if (!old_sum) return old_sum.error();
      if (!new_sum) return new_sum.error();
      info.old_checksum = *old_sum;
      info.new_checksum = *new_sum;
      if (t.contains("in_data")) info.in_data = t.at("in_data").get<bool>();
      if (t.contains("restore_only")) info.restore_only = t.at("restore_only").get<bool>();
      h.table.push_back(info);
    }
    const nlohmann::json& l = j.at("layout");
    h.layout.table_data_offset = l.at("table_data_offset").get<uint64_t>();
    h.layout.table_data_bytes = l.at("table_data_bytes").get<uint64_t>();
    h.layout.digest_table_offset = l.at("digest_table_offset").get<uint64_t>();
    h.layout.digest_table_bytes = l.at("digest_table_bytes").get<uint64_t>();
    h.layout.state_offset = l.at("state_offset").get<uint64_t>();
    h.layout.ring_offset = l.at("ring_offset").get<uint64_t>();
    h.layout.slot_bytes = l.at("slot_bytes").get<uint64_t>();
    h.layout.slot_count = l.at("slot_count").get<uint64_t>();
    h.layout.file_bytes = l.at("file_bytes").get<uint64_t>();
    h.layout.copy_map_offset = h.layout.table_data_offset + h.layout.table_data_bytes;
    if (h.version == kJournalVersionV1) {
      h.copied_chunks = RangeChunkCount(h.move);
      return h;
    }
    h.layout.copy_map_offset = l.at("copy_map_offset").get<uint64_t>();
    h.layout.copy_map_bytes = l.at("copy_map_bytes").get<uint64_t>();
    if (h.version >= kJournalVersion) {
      h.layout.header_copy_offset = l.at("header_copy_offset").get<uint64_t>();
      h.layout.mirror_bytes = l.at("mirror_bytes").get<uint64_t>();
      h.layout.repair_bytes = l.at("repair_bytes").get<uint64_t>();
    }
    const nlohmann::json& c = j.at("copy_map");
    h.copy_run_count = c.at("run_count").get<uint64_t>();
    h.copied_chunks = c.at("copied_chunks").get<uint64_t>();
    Result<uint64_t> checksum = ParseHex64(c.at("checksum").get<std::string>());
    if (!checksum) return checksum.error();
    h.copy_map_checksum = *checksum;
    const nlohmann::json& u = j.at("used");
    h.used.source = u.at("source").get<std::string>();
    h.used.used_bytes = u.at("used_bytes").get<uint64_t>();
    for (const auto& [name, bytes] : u.at("reasons_bytes").items()) {
      h.used.reasons.emplace_back(name, bytes.get<uint64_t>());
    }
    h.used.notes = u.at("notes").get<std::vector<std::string>>();
    if (j.contains("step")) h.step = j.at("step").get<std::string>();
    return h;
  } catch (const nlohmann::json::exception& e) {
    return MakeError(fmt::format("the journal header is malformed: {}", e.what()));
  }
}

}  // namespace

std::string ToHex(const JournalUuid& uuid) {
  std::string text;
  for (uint8_t byte : uuid) text += fmt::format("{:02x}", byte);
  return text;
}

std::optional<std::string> DeviceMismatch(const JournalDevice& recorded,
                                          const JournalDevice& actual) {
  if (recorded.is_block_device != actual.is_block_device) {
    return fmt::format("the journal was written for {} '{}', not {} '{}'",
                       recorded.is_block_device ? "block device" : "image file", recorded.path,
                       actual.is_block_device ? "a block device" : "an image file", actual.path);
  }
  if (recorded.size_bytes != actual.size_bytes) {
    return fmt::format("'{}' has {} bytes, the journal's device had {}", actual.path,
                       actual.size_bytes, recorded.size_bytes);
  }
  if (recorded.logical_sector_size != actual.logical_sector_size) {
    return fmt::format("'{}' has {}-byte sectors, the journal's device had {}-byte sectors",
                       actual.path, actual.logical_sector_size, recorded.logical_sector_size);
  }
  if (!recorded.serial.empty() && recorded.serial != actual.serial) {
    return fmt::format("'{}' has serial '{}', the journal's device had '{}'", actual.path,
                       actual.serial, recorded.serial);
  }
  if (!recorded.wwn.empty() && recorded.wwn != actual.wwn) {
    return fmt::format("'{}' has WWN '{}', the journal's device had '{}'", actual.path, actual.wwn,
                       recorded.wwn);
  }
  const bool by_file = !recorded.is_block_device || !recorded.backing_file.empty();
  if (by_file) {
    if (recorded.file_dev != actual.file_dev || recorded.file_ino != actual.file_ino) {
      return fmt::format("'{}' is not backed by the file the journal recorded ('{}')", actual.path,
                         recorded.is_block_device ? recorded.backing_file : recorded.path);
    }
    return std::nullopt;
  }
  if (recorded.serial.empty() && recorded.wwn.empty() && recorded.path != actual.path) {
    return fmt::format(
        "the journal was written for '{}' and that disk has no serial number to recognise it by "
        "under another name ('{}')",
        recorded.path, actual.path);
  }
  return std::nullopt;
}

JournalLayout ComputeJournalLayout(const MoveGeometry& move, std::span<const TableUpdateInfo> table,
                                   uint32_t version) {
  JournalLayout layout;
  const bool redundant = version >= kJournalVersion;
  if (redundant) layout.header_copy_offset = kJournalHeaderBytes;
  layout.table_data_offset = (redundant ? 2 : 1) * kJournalHeaderBytes;
  for (const TableUpdateInfo& t : table) {
    layout.table_data_bytes += 2 * AlignUp(t.length_bytes, kJournalBlockBytes);
  }
  layout.copy_map_offset = layout.table_data_offset + layout.table_data_bytes;
  layout.copy_map_bytes = AlignUp(move.copy.runs().size() * kCopyRunBytes, kJournalBlockBytes);
  layout.digest_table_offset = layout.copy_map_offset + layout.copy_map_bytes;
  layout.digest_table_bytes = AlignUp(ChunkCount(move) * kDigestBytes, kJournalBlockBytes);
  layout.state_offset = layout.digest_table_offset + layout.digest_table_bytes;
  layout.ring_offset = layout.state_offset + 2 * kJournalBlockBytes;
  if (redundant) {
    // The mirror: the same regions again, right after the first ones.
    layout.mirror_bytes = layout.ring_offset - layout.table_data_offset;
    layout.ring_offset += layout.mirror_bytes;
    const uint64_t blocks = AlignUp(move.chunk_bytes, kJournalBlockBytes) / kJournalBlockBytes;
    layout.repair_bytes = 2 * kJournalBlockBytes + AlignUp(blocks * 8, kJournalBlockBytes);
  }
  layout.slot_bytes = kJournalBlockBytes + move.chunk_bytes + layout.repair_bytes;
  const uint64_t batches = (ChunkCount(move) + move.chunks_per_batch - 1) / move.chunks_per_batch;
  layout.slot_count = std::min<uint64_t>(move.ring_batches, batches) * move.chunks_per_batch;
  layout.file_bytes = layout.ring_offset + layout.slot_count * layout.slot_bytes;
  return layout;
}

uint64_t TableDataOffset(const JournalLayout& layout, std::span<const TableUpdateInfo> table,
                         size_t index, bool new_bytes) {
  uint64_t offset = layout.table_data_offset;
  for (size_t i = 0; i < index; ++i)
    offset += 2 * AlignUp(table[i].length_bytes, kJournalBlockBytes);
  if (new_bytes) offset += AlignUp(table[index].length_bytes, kJournalBlockBytes);
  return offset;
}

uint64_t SlotOffset(const JournalLayout& layout, const MoveGeometry& move, uint64_t index) {
  const uint64_t regions = layout.slot_count / move.chunks_per_batch;
  const uint64_t region = BatchOf(index, move.chunks_per_batch) % regions;
  const uint64_t slot = region * move.chunks_per_batch + index % move.chunks_per_batch;
  return layout.ring_offset + slot * layout.slot_bytes;
}

Result<std::vector<uint8_t>> EncodeJournalHeader(const JournalHeader& header,
                                                 const Hasher& hasher) {
  const std::string json = HeaderJsonOf(header, hasher).dump(1);
  if (kHeaderJsonAt + json.size() > kJournalHeaderBytes) {
    return MakeError(fmt::format("the journal header needs {} bytes, more than the {} reserved",
                                 kHeaderJsonAt + json.size(), kJournalHeaderBytes));
  }
  std::vector<uint8_t> bytes(kJournalHeaderBytes, 0);
  std::memcpy(bytes.data(), kJournalMagic.data(), kJournalMagic.size());
  Put32(&bytes[8], header.version);
  Put64(&bytes[16], json.size());
  std::memcpy(&bytes[kHeaderJsonAt], json.data(), json.size());
  std::vector<uint8_t> covered(bytes.begin(), bytes.begin() + kHeaderChecksumAt);
  covered.insert(covered.end(), json.begin(), json.end());
  Put64(&bytes[kHeaderChecksumAt], hasher.Hash64(covered));
  return bytes;
}

Result<JournalHeader> DecodeJournalHeader(std::span<const uint8_t> bytes, const Hasher& hasher) {
  if (bytes.size() < kHeaderJsonAt) {
    return MakeError(fmt::format("the journal is truncated ({} bytes)", bytes.size()));
  }
  if (std::memcmp(bytes.data(), kJournalMagic.data(), kJournalMagic.size()) != 0) {
    return MakeError("not a partalign move journal (bad magic)");
  }
  const uint32_t version = Get32(&bytes[8]);
  if (!IsSupportedJournalVersion(version)) {
    return MakeError(fmt::format(
        "journal format version {} is not supported (this partalign reads versions {} to {})",
        version, kJournalVersionV1, kJournalVersion));
  }
  const uint64_t json_length = Get64(&bytes[16]);
  if (json_length > kJournalHeaderBytes - kHeaderJsonAt ||
      kHeaderJsonAt + json_length > bytes.size()) {
    return MakeError("the journal header is truncated");
  }
  const auto json_begin = bytes.begin() + kHeaderJsonAt;
  std::vector<uint8_t> covered(bytes.begin(), bytes.begin() + kHeaderChecksumAt);
  covered.insert(covered.end(), json_begin, json_begin + static_cast<ptrdiff_t>(json_length));
  if (hasher.Hash64(covered) != Get64(&bytes[kHeaderChecksumAt])) {
    return MakeError("the journal header is corrupt (checksum mismatch)");
  }
  nlohmann::json j =
      nlohmann::json::parse(json_begin, json_begin + static_cast<ptrdiff_t>(json_length), nullptr,
                            /*allow_exceptions=*/false);
  if (j.is_discarded()) return MakeError("the journal header is not valid JSON");
  Result<JournalHeader> header = HeaderFromJson(j, hasher);
  if (!header) return header;
  if (header->version != version) {
    return MakeError("the journal header is inconsistent (two different versions)");
  }
  const MoveGeometry& move = header->move;
  if (Status valid = ValidateMove(move, header->device.size_bytes,
                                  std::max<uint64_t>(header->device.logical_sector_size, 1));
      !valid) {
    return MakeError("the journal describes an impossible move: " + valid.error().message);
  }
  // The layout is checked once the copy map is known (AttachCopyMap); its region first.
  const JournalLayout& l = header->layout;
  if (header->copied_chunks > RangeChunkCount(move) ||
      header->copy_run_count > RangeChunkCount(move) ||
      l.copy_map_offset != l.table_data_offset + l.table_data_bytes ||
      l.copy_map_bytes != AlignUp(header->copy_run_count * kCopyRunBytes, kJournalBlockBytes)) {
    return MakeError("the journal layout does not match its move (corrupt header)");
  }
  return header;
}

UsedSummary SummarizeUsedMap(const UsedMap& map) {
  UsedSummary summary;
  summary.source = map.source;
  summary.used_bytes = map.used_bytes();
  const std::array<uint64_t, kUsedReasonCount> bytes = map.BytesByReason();
  for (size_t i = 0; i < kUsedReasonCount; ++i) {
    if (bytes[i] != 0) summary.reasons.emplace_back(ToString(static_cast<UsedReason>(i)), bytes[i]);
  }
  for (const std::string& note : map.notes()) {
    if (summary.notes.size() == kMaxUsedNotes) break;
    summary.notes.push_back(note.substr(0, kMaxUsedNoteBytes));
  }
  if (summary.source.size() > kMaxUsedNoteBytes) summary.source.resize(kMaxUsedNoteBytes);
  return summary;
}

void CompleteJournalHeader(JournalHeader& header, const Hasher& hasher) {
  const std::vector<uint8_t> runs = EncodeCopyMap(header.move.copy);
  header.copy_run_count = header.move.copy.runs().size();
  // No runs (every chunk is copied, and version 1): nothing to check, checksum 0.
  header.copy_map_checksum = header.copy_run_count == 0
                                 ? 0
                                 : hasher.Hash64(std::span<const uint8_t>(
                                       runs.data(), header.copy_run_count * kCopyRunBytes));
  header.copied_chunks = ChunkCount(header.move);
  header.layout = ComputeJournalLayout(header.move, header.table, header.version);
}

std::vector<uint8_t> EncodeCopyMap(const CopySet& copy) {
  std::vector<uint8_t> bytes(AlignUp(copy.runs().size() * kCopyRunBytes, kJournalBlockBytes), 0);
  for (size_t i = 0; i < copy.runs().size(); ++i) {
    Put64(&bytes[i * kCopyRunBytes], copy.runs()[i].first_chunk);
    Put64(&bytes[i * kCopyRunBytes + 8], copy.runs()[i].chunk_count);
  }
  return bytes;
}

Status AttachCopyMap(JournalHeader& header, std::span<const uint8_t> region, const Hasher& hasher) {
  const uint64_t count = header.copy_run_count;
  if (region.size() < count * kCopyRunBytes) {
    return MakeError(fmt::format("the journal's copy map is truncated ({} of {} bytes)",
                                 region.size(), count * kCopyRunBytes));
  }
  if (count > 0 && hasher.Hash64(region.first(count * kCopyRunBytes)) != header.copy_map_checksum) {
    return MakeError("the journal's copy map is corrupt (checksum mismatch)");
  }
  if (count == 0) {
    header.move.copy = CopySet();
  } else {
    std::vector<ChunkRun> runs(count);
    for (uint64_t i = 0; i < count; ++i) {
      runs[i] = {Get64(&region[i * kCopyRunBytes]), Get64(&region[i * kCopyRunBytes + 8])};
    }
    Result<CopySet> copy = CopySet::FromRuns(std::move(runs), RangeChunkCount(header.move));
    if (!copy) return MakeError("the journal's copy map is invalid: " + copy.error().message);
    if (copy->runs().size() != count) {
      return MakeError("the journal's copy map is invalid: its runs are not merged");
    }
    header.move.copy = std::move(*copy);
  }
  if (ChunkCount(header.move) != header.copied_chunks) {
    return MakeError(fmt::format("the journal's copy map has {} chunks, its header says {}",
                                 ChunkCount(header.move), header.copied_chunks));
  }
  if (ComputeJournalLayout(header.move, header.table, header.version) != header.layout) {
    return MakeError("the journal layout does not match its move (corrupt header)");
  }
  return {};
}

const char* ToString(JournalPhase phase) {
  switch (phase) {
    case JournalPhase::kMoving:
      return "moving";
    case JournalPhase::kDataMoved:
      return "data-moved";
    case JournalPhase::kTableWriting:
      return "table-writing";
    case JournalPhase::kDone:
      return "done";
    case JournalPhase::kRollbackTable:
      return "rollback-table";
    case JournalPhase::kRollingBack:
      return "rolling-back";
    case JournalPhase::kRolledBack:
      return "rolled-back";
  }
  return "unknown";
}

std::vector<uint8_t> EncodeStateBlock(const JournalState& state, const JournalUuid& uuid,
                                      const Hasher& hasher, uint32_t version) {
  std::vector<uint8_t> block(kJournalBlockBytes, 0);
  std::memcpy(block.data(), kStateMagic, sizeof(kStateMagic));
  Put32(&block[8], version);
  Put32(&block[12], static_cast<uint32_t>(state.phase));
  Put64(&block[16], state.sequence);
  std::memcpy(&block[24], uuid.data(), uuid.size());
  Put64(&block[40], state.forward_done);
  Put64(&block[48], state.rollback_split);
  Put64(&block[56], state.rollback_done);
  Put64(&block[64], state.digest_table_checksum);
  const size_t checksum_at = version == kJournalVersionV1 ? kStateChecksumAtV1 : kStateChecksumAt;
  if (version != kJournalVersionV1) Put64(&block[72], state.digests_known);
  Put64(&block[checksum_at], hasher.Hash64(std::span<const uint8_t>(block.data(), checksum_at)));
  return block;
}

std::optional<JournalState> DecodeStateBlock(std::span<const uint8_t> block,
                                             const JournalUuid& uuid, const Hasher& hasher,
                                             uint32_t version) {
  const size_t checksum_at = version == kJournalVersionV1 ? kStateChecksumAtV1 : kStateChecksumAt;
  if (!IsIntactBlock(block, kStateMagic, checksum_at, 24, uuid, hasher, version)) {
    return std::nullopt;
  }
  const uint32_t phase = Get32(&block[12]);
  if (phase < static_cast<uint32_t>(JournalPhase::kMoving) ||
      phase > static_cast<uint32_t>(JournalPhase::kRolledBack)) {
    return std::nullopt;
  }
  JournalState state;
  state.phase = static_cast<JournalPhase>(phase);
  state.sequence = Get64(&block[16]);
  if (state.sequence == 0) return std::nullopt;
  state.forward_done = Get64(&block[40]);
  state.rollback_split = Get64(&block[48]);
  state.rollback_done = Get64(&block[56]);
  state.digest_table_checksum = Get64(&block[64]);
  if (version != kJournalVersionV1) state.digests_known = Get64(&block[72]);
  return state;
}

std::optional<JournalState> LatestState(std::span<const uint8_t> block_a,
                                        std::span<const uint8_t> block_b, const JournalUuid& uuid,
                                        const Hasher& hasher, uint32_t version) {
  std::optional<JournalState> a = DecodeStateBlock(block_a, uuid, hasher, version);
  std::optional<JournalState> b = DecodeStateBlock(block_b, uuid, hasher, version);
  // A block found at the wrong place was not written by this format: ignore it.
  if (a && StateBlockOffset(a->sequence) != 0) a.reset();
  if (b && StateBlockOffset(b->sequence) != kJournalBlockBytes) b.reset();
  if (a && b) return a->sequence > b->sequence ? a : b;
  return a ? a : b;
}

void EncodeRecordHeader(const RecordHeader& record, const JournalUuid& uuid, const Hasher& hasher,
                        std::span<uint8_t> block, uint32_t version) {
  std::fill(block.begin(), block.begin() + kJournalBlockBytes, 0);
  std::memcpy(block.data(), kRecordMagic, sizeof(kRecordMagic));
  Put32(&block[8], version);
  Put32(&block[12], record.rollback ? kRecordRollbackFlag : 0);
  std::memcpy(&block[16], uuid.data(), uuid.size());
  Put64(&block[32], record.chunk);
  Put64(&block[40], record.length_bytes);
  Put64(&block[48], record.digest.low);
  Put64(&block[56], record.digest.high);
  Put64(&block[kRecordChecksumAt], hasher.Hash64(block.first(kRecordChecksumAt)));
}

std::optional<RecordHeader> DecodeRecordHeader(std::span<const uint8_t> block,
                                               const JournalUuid& uuid, const Hasher& hasher,
                                               uint32_t version) {
  if (!IsIntactBlock(block, kRecordMagic, kRecordChecksumAt, 16, uuid, hasher, version)) {
    return std::nullopt;
  }
  RecordHeader record;
  record.rollback = (Get32(&block[12]) & kRecordRollbackFlag) != 0;
  record.chunk = Get64(&block[32]);
  record.length_bytes = Get64(&block[40]);
  record.digest.low = Get64(&block[48]);
  record.digest.high = Get64(&block[56]);
  return record;
}

std::optional<Digest128> ValidRecordDigest(std::span<const uint8_t> header_block,
                                           std::span<const uint8_t> data, uint64_t chunk,
                                           const std::optional<Digest128>& expected,
                                           const JournalUuid& uuid, const Hasher& hasher,
                                           uint32_t version) {
  std::optional<RecordHeader> record = DecodeRecordHeader(header_block, uuid, hasher, version);
  if (!record || record->chunk != chunk || record->length_bytes != data.size()) {
    return std::nullopt;
  }
  if (expected && record->digest != *expected) return std::nullopt;
  // The header can be intact while the data behind it is torn: check the data itself.
  if (hasher.Hash128(data) != record->digest) return std::nullopt;
  return record->digest;
}

void EncodeRecordRepair(std::span<const uint8_t> header_block, std::span<const uint8_t> blocks,
                        std::span<uint8_t> trailer, const Hasher& hasher) {
  std::fill(trailer.begin(), trailer.end(), 0);
  std::memcpy(trailer.data(), header_block.data(), kJournalBlockBytes);
  uint8_t* parity = trailer.data() + kJournalBlockBytes;
  uint8_t* sums = trailer.data() + 2 * kJournalBlockBytes;
  for (size_t b = 0; b * kJournalBlockBytes < blocks.size(); ++b) {
    std::span<const uint8_t> block = blocks.subspan(b * kJournalBlockBytes, kJournalBlockBytes);
    XorBlockInto(parity, block.data());
    Put64(sums + 8 * b, hasher.Hash64(block));
  }
}

std::optional<Digest128> RepairedRecordDigest(std::span<uint8_t> header_block,
                                              std::span<uint8_t> blocks, uint64_t length,
                                              std::span<const uint8_t> trailer, uint64_t chunk,
                                              const std::optional<Digest128>& expected,
                                              const JournalUuid& uuid, const Hasher& hasher,
                                              uint32_t version) {
  if (AlignUp(length, kJournalBlockBytes) > blocks.size()) return std::nullopt;
  std::span<const uint8_t> data = blocks.first(length);
  std::optional<Digest128> digest =
      ValidRecordDigest(header_block, data, chunk, expected, uuid, hasher, version);
  const size_t count = AlignUp(length, kJournalBlockBytes) / kJournalBlockBytes;
  if (digest || trailer.size() < 2 * kJournalBlockBytes + count * 8) return digest;
  // One damaged block of the header: its copy is in the trailer.
  std::span<const uint8_t> header_copy = trailer.first(kJournalBlockBytes);
  digest = ValidRecordDigest(header_copy, data, chunk, expected, uuid, hasher, version);
  if (digest) {
    std::memcpy(header_block.data(), header_copy.data(), kJournalBlockBytes);
    return digest;
  }
  // One damaged block of the data: the one whose checksum differs, rebuilt from the parity and
  // the other blocks, and accepted only when the whole chunk then has the header's digest.
  std::span<const uint8_t> header = header_block;
  std::optional<RecordHeader> record = DecodeRecordHeader(header, uuid, hasher, version);
  if (!record) {
    header = header_copy;
    record = DecodeRecordHeader(header, uuid, hasher, version);
  }
  if (!record || record->chunk != chunk || record->length_bytes != length ||
      (expected && record->digest != *expected)) {
    return std::nullopt;
  }
  const uint8_t* sums = trailer.data() + 2 * kJournalBlockBytes;
  size_t damaged = count;
  for (size_t b = 0; b < count; ++b) {
    if (hasher.Hash64(blocks.subspan(b * kJournalBlockBytes, kJournalBlockBytes)) !=
        Get64(sums + 8 * b)) {
      if (damaged != count) return std::nullopt;  // two blocks: beyond the parity
      damaged = b;
    }
  }
  if (damaged == count) return std::nullopt;
  std::vector<uint8_t> rebuilt(trailer.begin() + kJournalBlockBytes,
                               trailer.begin() + 2 * kJournalBlockBytes);
  for (size_t b = 0; b < count; ++b) {
    if (b == damaged) continue;
    XorBlockInto(rebuilt.data(), blocks.data() + b * kJournalBlockBytes);
  }
  std::vector<uint8_t> original(blocks.begin() + damaged * kJournalBlockBytes,
                                blocks.begin() + (damaged + 1) * kJournalBlockBytes);
  std::memcpy(blocks.data() + damaged * kJournalBlockBytes, rebuilt.data(), kJournalBlockBytes);
  if (hasher.Hash128(data) != record->digest) {
    std::memcpy(blocks.data() + damaged * kJournalBlockBytes, original.data(), kJournalBlockBytes);
    return std::nullopt;
  }
  if (header.data() != header_block.data()) {
    std::memcpy(header_block.data(), header.data(), kJournalBlockBytes);
  }
  return record->digest;
}

bool IsValidRecord(std::span<const uint8_t> header_block, std::span<const uint8_t> data,
                   uint64_t chunk, const Digest128& expected, const JournalUuid& uuid,
                   const Hasher& hasher, uint32_t version) {
  return ValidRecordDigest(header_block, data, chunk, expected, uuid, hasher, version).has_value();
}

std::vector<uint8_t> EncodeDigestTable(std::span<const Digest128> digests) {
  std::vector<uint8_t> bytes(AlignUp(digests.size() * kDigestBytes, kJournalBlockBytes), 0);
  for (size_t i = 0; i < digests.size(); ++i) {
    Put64(&bytes[i * kDigestBytes], digests[i].low);
    Put64(&bytes[i * kDigestBytes + 8], digests[i].high);
  }
  return bytes;
}

uint64_t DigestTableChecksum(std::span<const Digest128> digests, const Hasher& hasher) {
  std::vector<uint8_t> bytes = EncodeDigestTable(digests);
  return hasher.Hash64(std::span<const uint8_t>(bytes.data(), digests.size() * kDigestBytes));
}

Result<std::vector<Digest128>> DecodeDigestTable(std::span<const uint8_t> bytes, uint64_t count,
                                                 uint64_t checksum, const Hasher& hasher) {
  if (bytes.size() < count * kDigestBytes) {
    return MakeError(fmt::format("the journal's digest table is truncated ({} of {} bytes)",
                                 bytes.size(), count * kDigestBytes));
  }
  if (hasher.Hash64(bytes.first(count * kDigestBytes)) != checksum) {
    return MakeError("the journal's digest table is corrupt (checksum mismatch)");
  }
  std::vector<Digest128> digests(count);
  for (uint64_t i = 0; i < count; ++i) {
    digests[i].low = Get64(&bytes[i * kDigestBytes]);
    digests[i].high = Get64(&bytes[i * kDigestBytes + 8]);
  }
  return digests;
}

Result<std::vector<Digest128>> ReadDigestEntries(std::span<const uint8_t> bytes, uint64_t count) {
  if (bytes.size() / kDigestBytes < count) {
    return MakeError(fmt::format("the journal's digest table is truncated ({} of {} bytes)",
                                 bytes.size(), count * kDigestBytes));
  }
  std::vector<Digest128> digests(count);
  for (uint64_t i = 0; i < count; ++i) {
    digests[i].low = Get64(&bytes[i * kDigestBytes]);
    digests[i].high = Get64(&bytes[i * kDigestBytes + 8]);
  }
  return digests;
}

uint64_t ChainDigest(uint64_t chain, const Digest128& digest, const Hasher& hasher) {
  uint8_t bytes[24];
  Put64(&bytes[0], chain);
  Put64(&bytes[8], digest.low);
  Put64(&bytes[16], digest.high);
  return hasher.Hash64(bytes);
}

std::string EncodeRegistryEntry(const RegistryEntry& entry) {
  nlohmann::json j{{"format", "partalign-journal-registration"},
                   {"version", kRegistryVersion},
                   {"journal", entry.journal_path},
                   {"uuid", ToHex(entry.uuid)},
                   {"device", DeviceJson(entry.device)}};
  if (entry.starting) j["state"] = "starting";
  return j.dump(1) + "\n";
}

Result<RegistryEntry> DecodeRegistryEntry(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return MakeError("the journal registration is not valid JSON");
  try {
    if (j.at("format").get<std::string>() != "partalign-journal-registration") {
      return MakeError("not a partalign journal registration");
    }
    RegistryEntry entry;
    entry.journal_path = j.at("journal").get<std::string>();
    Result<JournalUuid> uuid = ParseUuid(j.at("uuid").get<std::string>());
    if (!uuid) return uuid.error();
    entry.uuid = *uuid;
    Result<JournalDevice> device = DeviceFromJson(j.at("device"));
    if (!device) return device.error();
    entry.device = std::move(*device);
    if (j.contains("state")) {
      const std::string state = j.at("state").get<std::string>();
      if (state != "starting") {
        return MakeError(fmt::format("the journal registration has an unknown state '{}'", state));
      }
      entry.starting = true;
    }
    return entry;
  } catch (const nlohmann::json::exception& e) {
    return MakeError(fmt::format("the journal registration is malformed: {}", e.what()));
  }
}

Digest128 RangeDigest(std::span<const Digest128> digests, const Hasher& hasher) {
  std::vector<uint8_t> bytes = EncodeDigestTable(digests);
  return hasher.Hash128(std::span<const uint8_t>(bytes.data(), digests.size() * kDigestBytes));
}

}  // namespace partalign
