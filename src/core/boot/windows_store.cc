// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/boot/windows_store.h"

#include <algorithm>
#include <charconv>
#include <map>

#include <fmt/format.h>

#include "partalign/util/byte_order.h"
#include "partalign/util/checked_math.h"

namespace partalign {
namespace {

// The partition device block inside BCD device data, relative to its device-type field
// (at 0x10 in a top-level element).
constexpr uint32_t kBcdDevicePartition = 6;
constexpr uint32_t kBcdDeviceBlockBytes = 0x48;
constexpr uint64_t kBcdBlockLength = 0x08;
constexpr uint64_t kBcdBlockOffset = 0x10;
constexpr uint64_t kBcdBlockStyle = 0x24;
constexpr uint64_t kBcdBlockSignature = 0x28;
constexpr uint32_t kBcdStyleMbr = 1;

constexpr uint64_t kHiveBaseBlockBytes = 4096;
constexpr uint64_t kHiveChecksumOffset = 0x1FC;

constexpr std::string_view kBcdRepair =
    "repair from Windows recovery: bcdboot C:\\Windows (or bcdedit /set {default} device "
    "partition=C: and bcdedit /set {default} osdevice partition=C:)";
constexpr std::string_view kMountedDevicesRepair =
    "repair from Windows recovery: reg load HKLM\\OFFLINE C:\\Windows\\System32\\config\\SYSTEM, "
    "delete this disk's values under HKLM\\OFFLINE\\MountedDevices (Windows recreates them), "
    "reg unload HKLM\\OFFLINE";

std::optional<uint32_t> MbrSignature(const BootDisk& table) {
  std::string_view id = table.disk_id;
  if (id.size() > 2 && id[0] == '0' && (id[1] == 'x' || id[1] == 'X')) id.remove_prefix(2);
  uint32_t value = 0;
  auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), value, 16);
  if (ec != std::errc() || end != id.data() + id.size() || id.empty()) return std::nullopt;
  return value;
}

std::string_view StoreName(BootRecordKind kind) {
  return kind == BootRecordKind::kWindowsBcd ? "BCD store" : "MountedDevices";
}

std::string_view StoreRepair(BootRecordKind kind) {
  return kind == BootRecordKind::kWindowsBcd ? kBcdRepair : kMountedDevicesRepair;
}

// The partition offset of `file_offset` .. + `length` when the extents hold it in one run.
std::optional<uint64_t> MapFileBytes(const WindowsStore& store, uint64_t file_offset,
                                     uint64_t length) {
  for (const FileExtent& e : store.extents) {
    if (file_offset < e.file_offset || file_offset - e.file_offset >= e.length) continue;
    if (!e.partition_offset) return std::nullopt;
    if (e.length - (file_offset - e.file_offset) < length) return std::nullopt;
    return CheckedAdd(*e.partition_offset, file_offset - e.file_offset);
  }
  return std::nullopt;
}

std::vector<uint8_t> Le64Bytes(uint64_t value) {
  std::vector<uint8_t> out(8);
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(value >> (8 * i));
  return out;
}

// One reference to a partition of this disk in a value: where its u64 sits in the value's data.
struct StoreRef {
  const HiveValue* value = nullptr;
  uint64_t field = 0;
  uint64_t offset_bytes = 0;
};

}  // namespace

std::vector<BcdPartitionRef> FindBcdPartitionRefs(std::span<const uint8_t> element) {
  std::vector<BcdPartitionRef> out;
  for (uint64_t p = 0; p + kBcdDeviceBlockBytes <= element.size(); p += 4) {
    if (Le<uint32_t>(element, p) != kBcdDevicePartition) continue;
    if (Le<uint32_t>(element, p + kBcdBlockLength) != kBcdDeviceBlockBytes) continue;
    if (Le<uint32_t>(element, p + kBcdBlockStyle) != kBcdStyleMbr) continue;
    out.push_back({p + kBcdBlockOffset, *Le<uint64_t>(element, p + kBcdBlockOffset),
                   *Le<uint32_t>(element, p + kBcdBlockSignature)});
  }
  return out;
}

bool IsBcdDeviceElement(uint32_t element_type) { return ((element_type >> 24) & 0xF) == 1; }

std::optional<MountedDeviceRef> ParseMountedDevice(std::span<const uint8_t> value) {
  if (value.size() != 12) return std::nullopt;
  return MountedDeviceRef{*Le<uint32_t>(value, 0), *Le<uint64_t>(value, kMountedDeviceOffsetField)};
}

std::optional<HiveBaseBlock> ParseHiveBaseBlock(std::span<const uint8_t> bytes) {
  if (bytes.size() < kHiveBaseBlockBytes || !HasMagic(bytes, 0, "regf")) return std::nullopt;
  uint32_t sum = 0;
  for (uint64_t at = 0; at < kHiveChecksumOffset; at += 4) sum ^= *Le<uint32_t>(bytes, at);
  // Windows stores 1 for a sum of 0 and 0xFFFFFFFE for 0xFFFFFFFF; libhivex the raw sum.
  const uint32_t stored = *Le<uint32_t>(bytes, kHiveChecksumOffset);
  const uint32_t windows = sum == 0 ? 1 : sum == 0xFFFFFFFF ? 0xFFFFFFFE : sum;
  return HiveBaseBlock{*Le<uint32_t>(bytes, 4), *Le<uint32_t>(bytes, 8),
                       stored == sum || stored == windows};
}

std::vector<BootFinding> WindowsStoreFindings(const DiskReader& disk, const BootDisk& table,
                                              std::span<const PartitionMove> moves,
                                              std::span<const WindowsStore> stores) {
  std::vector<BootFinding> out;
  const std::optional<uint32_t> signature = MbrSignature(table);
  const uint64_t ss = table.sector_size;
  for (const WindowsStore& store : stores) {
    BootFinding f;
    f.partition = store.partition;
    f.kind = store.kind;
    const std::string name = fmt::format("{} {}", StoreName(store.kind), store.file_path);
    if (table.label == LabelType::kGpt) {
      f.description = fmt::format(
          "{}: a GPT disk, Windows names its partitions by GUID: nothing to change", name);
      out.push_back(std::move(f));
      continue;
    }
    // A store whose values could not be read: whether it names a moved partition is unknown.
    if (store.values.empty() && !store.unlocatable.empty()) {
      f.description = fmt::format("{}: cannot be read ({})", name, store.unlocatable);
      if (!moves.empty()) {
        f.verdict = BootVerdict::kRefuse;
        f.reason = fmt::format(
            "{} in partition {} cannot be read ({}): partalign cannot tell "
            "whether it names a moved partition; {}",
            name, store.partition, store.unlocatable, StoreRepair(store.kind));
      }
      out.push_back(std::move(f));
      continue;
    }
    // Every reference to a partition of this disk (by its signature).
    std::vector<StoreRef> refs;
    for (const HiveValue& v : store.values) {
      if (store.kind == BootRecordKind::kWindowsBcd) {
        if (!IsBcdDeviceElement(v.element_type)) continue;
        for (const BcdPartitionRef& r : FindBcdPartitionRefs(v.data)) {
          if (signature && r.disk_signature == *signature) {
            refs.push_back({&v, r.offset_field, r.partition_offset_bytes});
          }
        }
      } else if (std::optional<MountedDeviceRef> m = ParseMountedDevice(v.data)) {
        if (signature && m->disk_signature == *signature) {
          refs.push_back({&v, kMountedDeviceOffsetField, m->partition_offset_bytes});
        }
      }
    }
    // Old byte offset -> new byte offset of every partition that changes place; the
    // partitions' present offsets.
    std::map<uint64_t, uint64_t> moved;
    for (const PartitionMove& m : moves) {
      std::optional<uint64_t> from = CheckedMul(m.old_start_sector, ss);
      std::optional<uint64_t> to = CheckedMul(m.new_start_sector, ss);
      if (from && to) moved[*from] = *to;
    }
    std::map<uint64_t, uint64_t> starts;  // byte offset -> partition number
    for (const BootPartition& p : table.partitions) {
      if (std::optional<uint64_t> at = CheckedMul(p.start_sector, ss)) starts[*at] = p.number;
    }
    std::vector<const StoreRef*> to_update;
    std::vector<std::string> stale;
    for (const StoreRef& r : refs) {
      if (moved.count(r.offset_bytes) != 0) {
        to_update.push_back(&r);
      } else if (starts.count(r.offset_bytes) == 0) {
        std::string line = fmt::format("{} names byte offset {}, where no partition starts",
                                       r.value->path, r.offset_bytes);
        for (const auto& [from, to] : moved) {
          if (to == r.offset_bytes) {
            line +=
                fmt::format(" (and where a moved partition will start: it will name that one too)");
          }
        }
        stale.push_back(std::move(line));
      }
    }
    if (to_update.empty()) {
      f.description = refs.empty()
                          ? fmt::format("{}: names no partition of this disk: nothing to do", name)
                          : fmt::format(
                                "{}: {} reference{} to partitions of this disk, none of "
                                "them moves: nothing to do",
                                name, refs.size(), refs.size() == 1 ? "" : "s");
      if (!stale.empty()) {
        f.reason = "stale: " + stale.front();
        if (stale.size() > 1) f.reason += fmt::format(" (and {} more)", stale.size() - 1);
      }
      out.push_back(std::move(f));
      continue;
    }
    // Something names a moved partition: the edit must be locatable and provably right.
    auto refuse = [&](std::string why) {
      f.verdict = BootVerdict::kRefuse;
      f.description = fmt::format("{}: names a moved partition by its byte offset", name);
      f.reason = fmt::format("{} in partition {}: {}; {}", name, store.partition, why,
                             StoreRepair(store.kind));
      out.push_back(f);
    };
    if (!store.unlocatable.empty()) {
      refuse(fmt::format("its bytes cannot be located on the disk ({})", store.unlocatable));
      continue;
    }
    if (!store.base.checksum_ok) {
      refuse("the hive's base block checksum is wrong");
      continue;
    }
    if (store.base.primary_sequence != store.base.secondary_sequence) {
      refuse(
          fmt::format("the hive was not written cleanly (sequence numbers {} and {}): Windows "
                      "would replay its log over the edit",
                      store.base.primary_sequence, store.base.secondary_sequence));
      continue;
    }
    const BootPartition* holder = table.Find(store.partition);
    std::optional<uint64_t> holder_start =
        holder ? CheckedMul(holder->start_sector, ss) : std::nullopt;
    if (!holder_start) {
      refuse("the partition holding it is not in the table");
      continue;
    }
    std::vector<ByteEdit> edits;
    std::string problem;
    std::map<uint64_t, uint64_t> shown;  // old -> new offsets, for the description
    for (const StoreRef* r : to_update) {
      const uint64_t new_offset = moved[r->offset_bytes];
      if (!r->value->data_file_offset) {
        problem = fmt::format("{} has no data cell of its own", r->value->path);
        break;
      }
      std::optional<uint64_t> file_at = CheckedAdd(*r->value->data_file_offset, r->field);
      std::optional<uint64_t> at = file_at ? MapFileBytes(store, *file_at, 8) : std::nullopt;
      std::optional<uint64_t> disk_at = at ? CheckedAdd(*holder_start, *at) : std::nullopt;
      if (!disk_at) {
        problem =
            fmt::format("{}: its bytes are not in one run of the file's extents", r->value->path);
        break;
      }
      std::vector<uint8_t> now(8);
      if (!disk.ReadAt(*disk_at, now)) {
        problem =
            fmt::format("{}: cannot read its bytes at disk byte {}", r->value->path, *disk_at);
        break;
      }
      const std::vector<uint8_t> expected = Le64Bytes(r->offset_bytes);
      if (now != expected) {
        problem = fmt::format(
            "{}: the disk's bytes at {} are not the value's (the hive and the "
            "file's extents disagree)",
            r->value->path, *disk_at);
        break;
      }
      edits.push_back(
          {store.partition, *at, expected, Le64Bytes(new_offset),
           static_cast<uint32_t>(starts.count(r->offset_bytes) ? starts[r->offset_bytes] : 0)});
      shown[r->offset_bytes] = new_offset;
    }
    if (!problem.empty()) {
      refuse(problem);
      continue;
    }
    f.verdict = BootVerdict::kUpdate;
    std::string changes;
    for (const auto& [from, to] : shown) {
      changes += fmt::format("{}{} -> {}", changes.empty() ? "" : ", ", from, to);
    }
    f.description =
        fmt::format("{}: {} value{} name{} a moved partition: byte offset {}", name, edits.size(),
                    edits.size() == 1 ? "" : "s", edits.size() == 1 ? "s" : "", changes);
    if (!stale.empty()) f.reason = "stale: " + stale.front();
    f.edits = std::move(edits);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace partalign
