// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/layout/layout_spec.h"

#include <array>
#include <cctype>

#include <fmt/format.h>

#include "partalign/layout/planner.h"
#include "partalign/util/checked_math.h"
#include "partalign/util/sfdisk_size.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// The GPT entry array: 128 entries of 128 bytes (the UEFI minimum, what libfdisk, parted and
// gdisk write).
constexpr uint64_t kGptEntriesBytes = 128 * 128;
constexpr size_t kMaxGptPartitions = 128;
constexpr size_t kMaxDosPrimaries = 4;
// MAXIMUM_PARTS (libfdisk dos.c): 4 primary slots and up to 56 logical partitions.
constexpr size_t kMaxDosPartitions = 60;
// A size in sectors times the largest sector size (64 KiB) stays within 64 bits of bytes.
constexpr uint64_t kMaxLayoutSectors = UINT64_MAX >> 16;

struct TypeAlias {
  std::string_view names[3];
  std::string_view gpt;  // empty: no GPT equivalent
  std::string_view dos;  // empty: no DOS equivalent
};

// sfdisk's shortcuts (sfdisk(8), "Partition type shortcuts") plus two GPT-only names.
constexpr std::array<TypeAlias, 8> kTypeAliases{{
    {{"L", "linux", ""}, "0FC63DAF-8483-4772-8E79-3D69D8477DE4", "0x83"},
    {{"S", "swap", ""}, "0657FD6D-A4AB-43C4-84E5-0933C84B4F4F", "0x82"},
    {{"H", "home", ""}, "933AC7E1-2EB4-4F13-B844-0E14E2AEF915", "0x83"},
    {{"U", "uefi", "esp"}, "C12A7328-F81F-11D2-BA4B-00A0C93EC93B", "0xef"},
    {{"R", "raid", ""}, "A19D880F-05FC-4D3B-A006-743F0F84911E", "0xfd"},
    {{"V", "lvm", ""}, "E6D6D379-F507-44C2-A23C-238F2A3DF928", "0x8e"},
    {{"bios", "", ""}, "21686148-6449-6E6F-744E-656564454649", ""},
    {{"xbootldr", "", ""}, "BC13C2FF-59E6-4262-A352-B275FD6F7172", "0xea"},
}};

std::string Lower(std::string_view s) {
  std::string out;
  for (char c : s) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool IsGuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

// Splits `text` at any of `separators` outside double quotes.
Result<std::vector<std::string>> Split(std::string_view text, std::string_view separators) {
  std::vector<std::string> parts(1);
  bool quoted = false;
  for (char c : text) {
    if (c == '"') quoted = !quoted;
    if (!quoted && separators.find(c) != std::string_view::npos) {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  if (quoted) return MakeError("unterminated quote");
  return parts;
}

std::string Unquote(std::string_view value) {
  value = TrimSpace(value);
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
    value = value.substr(1, value.size() - 2);
  }
  return std::string(value);
}

}  // namespace

Result<std::string> ResolvePartitionType(LabelType label, std::string_view type) {
  const bool gpt = label == LabelType::kGpt;
  for (const TypeAlias& a : kTypeAliases) {
    for (std::string_view name : a.names) {
      if (name.empty()) continue;
      // sfdisk's one-letter shortcuts are upper case; the names are case-insensitive.
      bool match = name.size() == 1 ? type == name : Lower(type) == name;
      if (!match) continue;
      std::string_view code = gpt ? a.gpt : a.dos;
      if (code.empty()) {
        return MakeError(fmt::format("type '{}' has no {} equivalent", type, ToString(label)));
      }
      return std::string(code);
    }
  }
  if (gpt) {
    if (IsGuid(type)) {
      std::string upper(type);
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      return upper;
    }
    return MakeError(fmt::format(
        "type '{}' is not a GPT type GUID or one of L, S, H, U, R, V, linux, swap, home, uefi, "
        "esp, raid, lvm, bios, xbootldr",
        type));
  }
  std::string_view hex = type;
  if (hex.size() > 2 && hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X')) hex.remove_prefix(2);
  Result<uint64_t> code = ParseUint("0x" + std::string(hex));
  if (hex.empty() || hex.size() > 2 || !code || *code == 0) {
    return MakeError(fmt::format("type '{}' is not a DOS type byte (1 to ff) or a shortcut", type));
  }
  if (*code == 0x05 || *code == 0x0f || *code == 0x85) {
    return MakeError("extended partitions are not supported in a layout (use label=gpt)");
  }
  return fmt::format("0x{:02x}", *code);
}

std::string PartitionTypeName(LabelType label, std::string_view code) {
  for (const TypeAlias& a : kTypeAliases) {
    std::string_view mine = label == LabelType::kGpt ? a.gpt : a.dos;
    // "H" (home) shares 0x83 with linux on DOS; the first alias wins.
    if (!mine.empty() && Lower(mine) == Lower(code))
      return std::string(a.names[1].empty() ? a.names[0] : a.names[1]);
  }
  return std::string(code);
}

std::optional<uint64_t> LayoutItem::SizeBytes(uint64_t sector_size) const {
  if (size_sectors) return CheckedMul(*size_sectors, sector_size);
  return size_bytes;
}

Result<LayoutSpec> ParseLayoutSpec(std::string_view text) {
  LayoutSpec spec;
  // Comment lines go first, then items split at ';' and newlines.
  std::string uncommented;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos);
    if (TrimSpace(line).empty() || TrimSpace(line).front() != '#') {
      uncommented += line;
      uncommented += '\n';
    }
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  Result<std::vector<std::string>> items = Split(uncommented, ";\n");
  if (!items) return MakeError(fmt::format("--layout: {}", items.error().message));
  bool label_seen = false;
  std::vector<std::string> raw_types;
  for (const std::string& raw : *items) {
    std::string_view item = TrimSpace(raw);
    if (item.empty()) continue;
    const size_t number = spec.items.size() + 1;
    // A header: "label=gpt" or sfdisk's "label: gpt".
    std::string lowered = Lower(item);
    if (lowered.rfind("label", 0) == 0 && item.size() > 5 &&
        (TrimSpace(item.substr(5)).front() == '=' || TrimSpace(item.substr(5)).front() == ':')) {
      std::string value = Lower(TrimSpace(TrimSpace(item.substr(5)).substr(1)));
      if (!spec.items.empty() || label_seen) {
        return MakeError("--layout: the label must come first, once");
      }
      if (value == "gpt") {
        spec.label = LabelType::kGpt;
      } else if (value == "dos" || value == "mbr" || value == "msdos") {
        spec.label = LabelType::kDos;
      } else {
        return MakeError(fmt::format("--layout: label '{}' is not gpt or dos", value));
      }
      label_seen = true;
      continue;
    }
    Result<std::vector<std::string>> fields = Split(item, ",");
    if (!fields)
      return MakeError(fmt::format("--layout: item {}: {}", number, fields.error().message));
    LayoutItem out;
    std::string type = "L";
    for (const std::string& raw_field : *fields) {
      std::string_view field = TrimSpace(raw_field);
      if (field.empty()) continue;
      size_t eq = field.find('=');
      std::string key = Lower(TrimSpace(field.substr(0, eq)));
      std::string value = eq == std::string_view::npos ? "" : Unquote(field.substr(eq + 1));
      auto error = [&](const std::string& what) {
        return MakeError(fmt::format("--layout: item {}: {}: {}", number, key, what));
      };
      if (key == "bootable" && eq == std::string_view::npos) {
        out.bootable = true;
      } else if (eq == std::string_view::npos) {
        return error("expected key=value (size=, type=, name=, attrs=) or bootable");
      } else if (key == "size") {
        out.size_bytes.reset();
        out.size_sectors.reset();
        if (value.empty() || value == "+") continue;
        Result<SfdiskSize> size = ParseSfdiskSize(value);
        if (!size) return error(size.error().message);
        if (size->value == 0) return error("is 0");
        if (size->sectors && size->value > kMaxLayoutSectors) {
          return error(fmt::format("{} sectors is too large for any disk", size->value));
        }
        (size->sectors ? out.size_sectors : out.size_bytes) = size->value;
      } else if (key == "type" || key == "id") {
        type = value;
      } else if (key == "name") {
        out.name = value;
      } else if (key == "attrs") {
        out.attributes = value;
      } else if (key == "start") {
        return error("partalign places every start itself (on the alignment); leave it out");
      } else {
        return error("unknown key (size=, type=, name=, attrs=, bootable)");
      }
    }
    raw_types.push_back(type);
    spec.items.push_back(std::move(out));
  }
  if (spec.items.empty()) return MakeError("--layout: no partitions");
  spec.text = std::string(text);
  for (size_t i = 0; i < spec.items.size(); ++i) {
    LayoutItem& it = spec.items[i];
    auto error = [&](const std::string& what) {
      return MakeError(fmt::format("--layout: item {}: {}", i + 1, what));
    };
    Result<std::string> type = ResolvePartitionType(spec.label, raw_types[i]);
    if (!type) return error("type: " + type.error().message);
    it.type = *type;
    if (it.rest() && i + 1 != spec.items.size()) {
      return error("only the last partition may take the rest (give it a size=)");
    }
    if (spec.label == LabelType::kDos && (!it.name.empty() || !it.attributes.empty())) {
      return error("name= and attrs= are GPT fields; a DOS table has neither");
    }
    if (spec.label == LabelType::kGpt && it.bootable) {
      return error("bootable is a DOS flag; on GPT use attrs=LegacyBIOSBootable");
    }
  }
  // A DOS layout of more than four partitions is four slots, the last an extended partition
  // holding the rest as logical partitions (explain --layout predicts the tools on it; plan
  // --layout makes primary partitions only).
  const size_t max = spec.label == LabelType::kGpt ? kMaxGptPartitions : kMaxDosPartitions - 1;
  if (spec.items.size() > max) {
    return MakeError(fmt::format("--layout: {} partitions, but a {} table holds at most {}",
                                 spec.items.size(), ToString(spec.label), max));
  }
  return spec;
}

Result<std::optional<LayoutSpec>> ParseOptionalLayoutSpec(const std::optional<std::string>& text) {
  if (!text) return std::optional<LayoutSpec>();
  Result<LayoutSpec> spec = ParseLayoutSpec(*text);
  if (!spec) return spec.error();
  return std::optional<LayoutSpec>(std::move(*spec));
}

Result<PlanLayout> MakeLayout(const LayoutSpec& spec, uint64_t disk_sectors, uint64_t sector_size,
                              const Alignment& a) {
  const uint64_t ss = sector_size;
  if (ss == 0 || a.grain_bytes == 0 || a.grain_bytes % ss != 0 || a.offset_bytes % ss != 0) {
    return MakeError("the alignment is not a whole number of sectors");
  }
  // Every sum and product below is of values a user or a disk chose (a size of 2^64-1 bytes, a
  // disk of 2^55 sectors): checked, so that nothing wraps into a small, "fitting" partition.
  const std::optional<uint64_t> disk_bytes = LbaToBytes(disk_sectors, ss);
  if (!disk_bytes) return MakeError(fmt::format("a disk of {} sectors is too large", disk_sectors));
  const uint64_t grain = a.grain_bytes / ss;
  if (spec.label == LabelType::kDos && spec.items.size() > kMaxDosPrimaries) {
    return MakeError(fmt::format(
        "{} partitions on DOS need logical partitions, which partalign does not lay out; a DOS "
        "table holds at most {} primary ones (use label=gpt)",
        spec.items.size(), kMaxDosPrimaries));
  }
  PlanLayout layout;
  layout.label = spec.label;
  uint64_t lo, hi;
  if (spec.label == LabelType::kGpt) {
    const uint64_t entries = (kGptEntriesBytes + ss - 1) / ss;
    if (disk_sectors < 2 * (2 + entries) + 1) return MakeError("the disk is too small for a GPT");
    lo = 2 + entries;                     // protective MBR, header, entries
    hi = disk_sectors - 1 - 1 - entries;  // backup entries and header at the end
  } else {
    if (disk_sectors < 2) return MakeError("the disk is too small for a DOS table");
    lo = 1;  // the MBR
    hi = std::min(disk_sectors - 1, kMbrMaxSector);
  }
  uint64_t start = a.Up(lo * ss) / ss;
  // GPT: FirstUsableLBA = the first partition's start, as libfdisk writes new GPTs.
  layout.first_usable_lba = start;
  layout.last_usable_lba = hi;
  const uint64_t end_limit = a.Down((hi + 1) * ss) / ss;  // the last boundary in the area
  for (size_t i = 0; i < spec.items.size(); ++i) {
    const LayoutItem& it = spec.items[i];
    LayoutPartition p;
    p.partition = static_cast<uint32_t>(i + 1);
    p.type = it.type;
    p.name = it.name;
    p.attributes = it.attributes;
    p.bootable = it.bootable;
    p.start_sector = start;
    uint64_t sectors;
    if (!it.rest()) {
      const std::optional<uint64_t> size_bytes = it.SizeBytes(ss);
      if (!size_bytes || *size_bytes > *disk_bytes) {
        return MakeError(fmt::format(
            "the layout does not fit: partition {} is {}, more than the whole disk ({})",
            p.partition,
            it.size_sectors ? fmt::format("{} sectors of {} bytes", *it.size_sectors, ss)
                            : fmt::format("{} bytes", *size_bytes),
            FormatSize(*disk_bytes)));
      }
      const uint64_t wanted = *size_bytes / ss + (*size_bytes % ss != 0 ? 1 : 0);
      std::optional<uint64_t> rounded = CheckedAdd(wanted, grain - 1);
      if (!rounded) return MakeError(fmt::format("partition {} is too large", p.partition));
      sectors = *rounded / grain * grain;
    } else {
      if (end_limit <= start) {
        return MakeError(
            fmt::format("no room is left for partition {} (the rest of the disk)", p.partition));
      }
      sectors = end_limit - start;
    }
    const std::optional<uint64_t> end = LastSector(start, sectors);
    if (!end) return MakeError(fmt::format("partition {} is too large", p.partition));
    if (*end > hi) {
      const std::optional<uint64_t> short_bytes = CheckedMul(*end - hi, ss);
      return MakeError(fmt::format(
          "the layout does not fit: partition {} would end at sector {}, but the usable area "
          "ends at {} ({} short)",
          p.partition, *end, hi,
          short_bytes ? FormatSize(*short_bytes) : fmt::format("{} sectors", *end - hi)));
    }
    p.end_sector = *end;
    start = p.end_sector + 1;
    layout.partitions.push_back(std::move(p));
  }
  return layout;
}

Result<Plan> MakeLayoutPlan(const LayoutSpec& spec, const PartitionTable& current,
                            const DeviceInfo& device, const Alignment& alignment) {
  if (Status s = CheckChangeable(current); !s) return s.error();
  if (!current.partitions.empty()) {
    return MakeError(fmt::format(
        "'{}' already holds {} partition{}; --layout plans a fresh table for an empty disk",
        device.identity.path, current.partitions.size(),
        current.partitions.size() == 1 ? "" : "s"));
  }
  const uint64_t ss = device.topology.logical_sector_size;
  Result<PlanLayout> layout = MakeLayout(spec, device.topology.size_bytes / ss, ss, alignment);
  if (!layout) return layout.error();
  Plan plan = EmptyPlan(current, device, alignment);
  plan.layout = std::move(*layout);
  return plan;
}

}  // namespace partalign
