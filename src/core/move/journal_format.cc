#include "partalign/move/journal_format.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "partalign/topology/alignment.h"

namespace partalign {
namespace {

constexpr char kHeaderMagic[8] = {'P', 'A', 'J', 'O', 'U', 'R', 'N', 'L'};
constexpr char kStateMagic[8] = {'P', 'A', 'J', 'S', 'T', 'A', 'T', 'E'};
constexpr char kRecordMagic[8] = {'P', 'A', 'J', 'R', 'E', 'C', 'R', 'D'};
constexpr const char* kFormatName = "partalign-move-journal";
/// Header preamble: magic(8) version(4) reserved(4) json_length(8) checksum(8); JSON at 64.
constexpr size_t kHeaderChecksumAt = 24;
constexpr size_t kHeaderJsonAt = 64;
/// State block: fields up to 72, checksum of [0, 72) at 72.
constexpr size_t kStateChecksumAt = 72;
/// Record header: fields up to 64, checksum of [0, 64) at 64.
constexpr size_t kRecordChecksumAt = 64;
constexpr size_t kDigestBytes = 16;
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

// State blocks and record headers share their frame: magic at 0, version at 8, the journal's
// uuid at `uuid_at`, and the checksum of everything before `checksum_at` stored there. A block
// that fails any of these was never written whole by this journal.
bool IsIntactBlock(std::span<const uint8_t> block, const char (&magic)[8], size_t checksum_at,
                   size_t uuid_at, const JournalUuid& uuid, const Hasher& hasher) {
  if (block.size() < checksum_at + 8) return false;
  if (std::memcmp(block.data(), magic, sizeof(magic)) != 0) return false;
  if (hasher.Hash64(block.first(checksum_at)) != Get64(&block[checksum_at])) return false;
  if (Get32(&block[8]) != kJournalVersion) return false;
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
    table.push_back({{"offset_bytes", t.offset_bytes},
                     {"length_bytes", t.length_bytes},
                     {"old_checksum", Hex64(t.old_checksum)},
                     {"new_checksum", Hex64(t.new_checksum)}});
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

// Reads the JSON back; nlohmann throws on missing keys or wrong types, which we turn into one
// error (the only place exceptions are caught, and they never leave this function).
Result<JournalHeader> HeaderFromJson(const nlohmann::json& j, const Hasher& hasher) {
  try {
    if (j.at("format").get<std::string>() != kFormatName) {
      return MakeError("the header does not describe a partalign move journal");
    }
    JournalHeader h;
    h.version = j.at("version").get<uint32_t>();
    if (h.version != kJournalVersion) {
      return MakeError(
          fmt::format("journal format version {} is not supported (this partalign "
                      "reads version {})",
                      h.version, kJournalVersion));
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

JournalLayout ComputeJournalLayout(const MoveGeometry& move,
                                   std::span<const TableUpdateInfo> table) {
  JournalLayout layout;
  layout.table_data_offset = kJournalHeaderBytes;
  for (const TableUpdateInfo& t : table) {
    layout.table_data_bytes += 2 * AlignUp(t.length_bytes, kJournalBlockBytes);
  }
  layout.digest_table_offset = layout.table_data_offset + layout.table_data_bytes;
  layout.digest_table_bytes = AlignUp(ChunkCount(move) * kDigestBytes, kJournalBlockBytes);
  layout.state_offset = layout.digest_table_offset + layout.digest_table_bytes;
  layout.ring_offset = layout.state_offset + 2 * kJournalBlockBytes;
  layout.slot_bytes = kJournalBlockBytes + move.chunk_bytes;
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
  const std::string json = HeaderJson(header, hasher).dump(1);
  if (kHeaderJsonAt + json.size() > kJournalHeaderBytes) {
    return MakeError(fmt::format("the journal header needs {} bytes, more than the {} reserved",
                                 kHeaderJsonAt + json.size(), kJournalHeaderBytes));
  }
  std::vector<uint8_t> bytes(kJournalHeaderBytes, 0);
  std::memcpy(bytes.data(), kHeaderMagic, sizeof(kHeaderMagic));
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
  if (std::memcmp(bytes.data(), kHeaderMagic, sizeof(kHeaderMagic)) != 0) {
    return MakeError("not a partalign move journal (bad magic)");
  }
  const uint32_t version = Get32(&bytes[8]);
  if (version != kJournalVersion) {
    return MakeError(
        fmt::format("journal format version {} is not supported (this partalign reads version {})",
                    version, kJournalVersion));
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
  const MoveGeometry& move = header->move;
  if (Status valid = ValidateMove(move, header->device.size_bytes,
                                  std::max<uint64_t>(header->device.logical_sector_size, 1));
      !valid) {
    return MakeError("the journal describes an impossible move: " + valid.error().message);
  }
  if (ComputeJournalLayout(move, header->table) != header->layout) {
    return MakeError("the journal layout does not match its move (corrupt header)");
  }
  return header;
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
                                      const Hasher& hasher) {
  std::vector<uint8_t> block(kJournalBlockBytes, 0);
  std::memcpy(block.data(), kStateMagic, sizeof(kStateMagic));
  Put32(&block[8], kJournalVersion);
  Put32(&block[12], static_cast<uint32_t>(state.phase));
  Put64(&block[16], state.sequence);
  std::memcpy(&block[24], uuid.data(), uuid.size());
  Put64(&block[40], state.forward_done);
  Put64(&block[48], state.rollback_split);
  Put64(&block[56], state.rollback_done);
  Put64(&block[64], state.digest_table_checksum);
  Put64(&block[kStateChecksumAt],
        hasher.Hash64(std::span<const uint8_t>(block.data(), kStateChecksumAt)));
  return block;
}

std::optional<JournalState> DecodeStateBlock(std::span<const uint8_t> block,
                                             const JournalUuid& uuid, const Hasher& hasher) {
  if (!IsIntactBlock(block, kStateMagic, kStateChecksumAt, 24, uuid, hasher)) return std::nullopt;
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
  return state;
}

std::optional<JournalState> LatestState(std::span<const uint8_t> block_a,
                                        std::span<const uint8_t> block_b, const JournalUuid& uuid,
                                        const Hasher& hasher) {
  std::optional<JournalState> a = DecodeStateBlock(block_a, uuid, hasher);
  std::optional<JournalState> b = DecodeStateBlock(block_b, uuid, hasher);
  // A block found at the wrong place was not written by this format: ignore it.
  if (a && StateBlockOffset(a->sequence) != 0) a.reset();
  if (b && StateBlockOffset(b->sequence) != kJournalBlockBytes) b.reset();
  if (a && b) return a->sequence > b->sequence ? a : b;
  return a ? a : b;
}

void EncodeRecordHeader(const RecordHeader& record, const JournalUuid& uuid, const Hasher& hasher,
                        std::span<uint8_t> block) {
  std::fill(block.begin(), block.begin() + kJournalBlockBytes, 0);
  std::memcpy(block.data(), kRecordMagic, sizeof(kRecordMagic));
  Put32(&block[8], kJournalVersion);
  Put32(&block[12], record.rollback ? kRecordRollbackFlag : 0);
  std::memcpy(&block[16], uuid.data(), uuid.size());
  Put64(&block[32], record.chunk);
  Put64(&block[40], record.length_bytes);
  Put64(&block[48], record.digest.low);
  Put64(&block[56], record.digest.high);
  Put64(&block[kRecordChecksumAt], hasher.Hash64(block.first(kRecordChecksumAt)));
}

std::optional<RecordHeader> DecodeRecordHeader(std::span<const uint8_t> block,
                                               const JournalUuid& uuid, const Hasher& hasher) {
  if (!IsIntactBlock(block, kRecordMagic, kRecordChecksumAt, 16, uuid, hasher)) {
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

bool IsValidRecord(std::span<const uint8_t> header_block, std::span<const uint8_t> data,
                   uint64_t chunk, const Digest128& expected, const JournalUuid& uuid,
                   const Hasher& hasher) {
  std::optional<RecordHeader> record = DecodeRecordHeader(header_block, uuid, hasher);
  if (!record || record->chunk != chunk || record->digest != expected) return false;
  if (record->length_bytes != data.size()) return false;
  // The header can be intact while the data behind it is torn: check the data itself.
  return hasher.Hash128(data) == expected;
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

std::string EncodeRegistryEntry(const RegistryEntry& entry) {
  return nlohmann::json{{"format", "partalign-journal-registration"},
                        {"version", kJournalVersion},
                        {"journal", entry.journal_path},
                        {"uuid", ToHex(entry.uuid)},
                        {"device", DeviceJson(entry.device)}}
             .dump(1) +
         "\n";
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
