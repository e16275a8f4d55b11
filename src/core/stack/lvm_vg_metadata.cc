// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/stack/lvm_vg_metadata.h"

#include <algorithm>
#include <charconv>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "partalign/util/checked_math.h"

namespace partalign {
namespace {

constexpr uint64_t kVgSectorBytes = 512;
// lvm2 writes VG { physical_volumes|logical_volumes { name { segmentN { ... } } } }: four
// levels. A little room for other sections, then refuse.
constexpr int kMaxDepth = 8;

// A recursive-descent reader of lvm2's config syntax into a JSON tree: a section is an object,
// an array an array, a string a string, a number a number. The first of duplicate keys wins
// (dm_config_find_node() finds the first).
class ConfigReader {
 public:
  explicit ConfigReader(std::string_view text) : text_(text) {}

  Result<nlohmann::json> ReadAll() {
    nlohmann::json root = nlohmann::json::object();
    if (Status s = ReadSectionBody(&root, 0, /*top=*/true); !s) return s.error();
    return root;
  }

 private:
  static bool IsDelimiter(char c) {
    return c == '=' || c == '{' || c == '}' || c == '[' || c == ']' || c == ',' || c == '#' ||
           c == '"' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\0';
  }

  Error Fail(std::string_view what) const {
    return MakeError(fmt::format("LVM2 metadata text, line {}: {}", line_, what));
  }

  void SkipSpace() {
    while (at_ < text_.size()) {
      const char c = text_[at_];
      if (c == '\n') {
        ++line_;
        ++at_;
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\0') {
        ++at_;  // the committed text ends in a NUL; tolerate any
      } else if (c == '#') {
        while (at_ < text_.size() && text_[at_] != '\n') ++at_;
      } else {
        return;
      }
    }
  }

  char Peek() {
    SkipSpace();
    return at_ < text_.size() ? text_[at_] : '\0';
  }

  std::string_view Word() {
    const size_t start = at_;
    while (at_ < text_.size() && !IsDelimiter(text_[at_])) ++at_;
    return text_.substr(start, at_ - start);
  }

  Status ReadSectionBody(nlohmann::json* section, int depth, bool top) {
    if (depth > kMaxDepth) return Fail("sections nested too deep");
    for (;;) {
      const char c = Peek();
      if (c == '\0') {
        if (top) return {};
        return Fail("a section is not closed");
      }
      if (c == '}') {
        if (top) return Fail("'}' without a section");
        ++at_;
        return {};
      }
      std::string_view name = Word();
      if (name.empty()) return Fail(fmt::format("unexpected '{}'", c));
      const char next = Peek();
      nlohmann::json value;
      if (next == '{') {
        ++at_;
        value = nlohmann::json::object();
        if (Status s = ReadSectionBody(&value, depth + 1, false); !s) return s;
      } else if (next == '=') {
        ++at_;
        Result<nlohmann::json> v = ReadValue(depth);
        if (!v) return v.error();
        value = std::move(*v);
      } else {
        return Fail(fmt::format("'{}' is followed by neither '=' nor '{{'", name));
      }
      std::string key(name);
      if (!section->contains(key)) (*section)[key] = std::move(value);
    }
  }

  Result<nlohmann::json> ReadValue(int depth) {
    const char c = Peek();
    if (c == '"') return ReadString();
    if (c == '[') {
      if (depth > kMaxDepth) return Fail("arrays nested too deep");
      ++at_;
      nlohmann::json array = nlohmann::json::array();
      if (Peek() == ']') {
        ++at_;
        return array;
      }
      for (;;) {
        Result<nlohmann::json> item = ReadValue(depth + 1);
        if (!item) return item;
        array.push_back(std::move(*item));
        const char sep = Peek();
        ++at_;
        if (sep == ']') return array;
        if (sep != ',') return Fail("an array item is followed by neither ',' nor ']'");
      }
    }
    return ReadNumber();
  }

  Result<nlohmann::json> ReadString() {
    ++at_;  // the opening quote
    std::string out;
    while (at_ < text_.size() && text_[at_] != '"') {
      if (text_[at_] == '\\' && at_ + 1 < text_.size()) ++at_;
      if (text_[at_] == '\n') ++line_;
      out += text_[at_++];
    }
    if (at_ >= text_.size()) return Fail("a string is not closed");
    ++at_;
    return nlohmann::json(std::move(out));
  }

  Result<nlohmann::json> ReadNumber() {
    std::string_view word = Word();
    if (word.empty()) return Fail("a value is missing");
    int64_t integer = 0;
    auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), integer);
    if (ec == std::errc() && end == word.data() + word.size()) return nlohmann::json(integer);
    double real = 0;
    auto [end2, ec2] = std::from_chars(word.data(), word.data() + word.size(), real);
    if (ec2 == std::errc() && end2 == word.data() + word.size()) return nlohmann::json(real);
    return Fail(fmt::format("'{}' is not a number", word));
  }

  std::string_view text_;
  size_t at_ = 0;
  int line_ = 1;
};

// The non-negative integer `key` of `section`, described as `where` in errors.
Result<uint64_t> Unsigned(const nlohmann::json& section, const char* key,
                          const std::string& where) {
  auto it = section.find(key);
  if (it == section.end()) return MakeError(fmt::format("LVM2 metadata: {} has no {}", where, key));
  if (!it->is_number_integer() || it->get<int64_t>() < 0) {
    return MakeError(
        fmt::format("LVM2 metadata: {}: {} is not a non-negative integer", where, key));
  }
  return it->get<uint64_t>();
}

Result<uint64_t> SectorsAsBytes(const nlohmann::json& section, const char* key,
                                const std::string& where) {
  Result<uint64_t> sectors = Unsigned(section, key, where);
  if (!sectors) return sectors;
  std::optional<uint64_t> bytes = CheckedMul(*sectors, kVgSectorBytes);
  if (!bytes) {
    return MakeError(
        fmt::format("LVM2 metadata: {}: {} = {} sectors overflows", where, key, *sectors));
  }
  return *bytes;
}

std::string StringOr(const nlohmann::json& section, const char* key) {
  auto it = section.find(key);
  return it != section.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Result<LvmSegment> ReadSegment(const nlohmann::json& s, const std::string& where) {
  LvmSegment seg;
  Result<uint64_t> start = Unsigned(s, "start_extent", where);
  if (!start) return start.error();
  Result<uint64_t> count = Unsigned(s, "extent_count", where);
  if (!count) return count.error();
  seg.start_extent = *start;
  seg.extent_count = *count;
  seg.type = StringOr(s, "type");
  if (seg.type.empty()) return MakeError(fmt::format("LVM2 metadata: {} has no type", where));
  auto stripes = s.find("stripes");
  if (stripes == s.end()) return seg;  // raid, thin, cache...: no PV extents of their own
  Result<uint64_t> stripe_count = Unsigned(s, "stripe_count", where);
  if (!stripe_count) return stripe_count.error();
  seg.stripe_count = *stripe_count;
  if (s.contains("stripe_size")) {
    Result<uint64_t> size = SectorsAsBytes(s, "stripe_size", where);
    if (!size) return size.error();
    seg.stripe_size_bytes = *size;
  }
  if (!stripes->is_array() || stripes->size() != 2 * seg.stripe_count || seg.stripe_count == 0) {
    return MakeError(fmt::format("LVM2 metadata: {}: stripes does not list {} (pv, extent) pairs",
                                 where, seg.stripe_count));
  }
  for (size_t i = 0; i < stripes->size(); i += 2) {
    const nlohmann::json& pv = (*stripes)[i];
    const nlohmann::json& extent = (*stripes)[i + 1];
    if (!pv.is_string() || !extent.is_number_integer() || extent.get<int64_t>() < 0) {
      return MakeError(
          fmt::format("LVM2 metadata: {}: stripe {} is not a (pv, extent) pair", where, i / 2));
    }
    seg.stripes.push_back({pv.get<std::string>(), extent.get<uint64_t>()});
  }
  return seg;
}

Result<LvmLogicalVolume> ReadLogicalVolume(const std::string& name, const nlohmann::json& lv,
                                           const LvmVolumeGroup& vg) {
  LvmLogicalVolume out;
  out.name = name;
  // segment1, segment2, ... in numeric order (not the JSON object's lexical order).
  std::map<uint64_t, const nlohmann::json*> segments;
  for (auto it = lv.begin(); it != lv.end(); ++it) {
    const std::string& key = it.key();
    if (!it->is_object() || key.rfind("segment", 0) != 0) continue;
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(key.data() + 7, key.data() + key.size(), n);
    if (ec != std::errc() || end != key.data() + key.size()) continue;
    segments[n] = &*it;
  }
  for (const auto& [n, s] : segments) {
    const std::string where = fmt::format("LV {} segment{}", name, n);
    Result<LvmSegment> seg = ReadSegment(*s, where);
    if (!seg) return seg.error();
    for (const LvmStripe& stripe : seg->stripes) {
      if (std::none_of(vg.physical_volumes.begin(), vg.physical_volumes.end(),
                       [&](const LvmPhysicalVolume& pv) { return pv.name == stripe.pv_name; })) {
        return MakeError(
            fmt::format("LVM2 metadata: {} refers to '{}', which the VG does not "
                        "list",
                        where, stripe.pv_name));
      }
    }
    out.segments.push_back(std::move(*seg));
  }
  return out;
}

}  // namespace

const LvmPhysicalVolume* LvmVolumeGroup::FindPvByUuid(std::string_view uuid) const {
  for (const LvmPhysicalVolume& pv : physical_volumes) {
    if (pv.uuid == uuid) return &pv;
  }
  return nullptr;
}

Result<LvmVolumeGroup> ParseLvmVgMetadata(std::string_view text) {
  if (text.size() > kLvmMaxMetadataTextBytes) {
    return MakeError(
        fmt::format("LVM2 metadata text of {} bytes is larger than the {} partalign "
                    "reads",
                    text.size(), kLvmMaxMetadataTextBytes));
  }
  Result<nlohmann::json> root = ConfigReader(text).ReadAll();
  if (!root) return root.error();
  const nlohmann::json* vg_section = nullptr;
  std::string vg_name;
  for (auto it = root->begin(); it != root->end(); ++it) {
    if (!it->is_object()) continue;
    if (vg_section) return MakeError("LVM2 metadata text holds more than one volume group");
    vg_section = &*it;
    vg_name = it.key();
  }
  if (!vg_section) return MakeError("LVM2 metadata text holds no volume group");
  LvmVolumeGroup vg;
  vg.name = vg_name;
  const std::string where = "VG " + vg_name;
  Result<uint64_t> seqno = Unsigned(*vg_section, "seqno", where);
  if (!seqno) return seqno.error();
  vg.seqno = *seqno;
  Result<uint64_t> extent = SectorsAsBytes(*vg_section, "extent_size", where);
  if (!extent) return extent.error();
  if (*extent == 0) return MakeError("LVM2 metadata: " + where + " has an extent size of 0");
  vg.extent_size_bytes = *extent;
  if (auto pvs = vg_section->find("physical_volumes");
      pvs != vg_section->end() && pvs->is_object()) {
    for (auto it = pvs->begin(); it != pvs->end(); ++it) {
      if (!it->is_object()) continue;
      LvmPhysicalVolume pv;
      pv.name = it.key();
      const std::string pv_where = where + " PV " + pv.name;
      pv.uuid = StringOr(*it, "id");
      pv.device = StringOr(*it, "device");
      Result<uint64_t> pe_start = SectorsAsBytes(*it, "pe_start", pv_where);
      if (!pe_start) return pe_start.error();
      Result<uint64_t> pe_count = Unsigned(*it, "pe_count", pv_where);
      if (!pe_count) return pe_count.error();
      pv.pe_start_bytes = *pe_start;
      pv.pe_count = *pe_count;
      vg.physical_volumes.push_back(std::move(pv));
    }
  }
  if (auto lvs = vg_section->find("logical_volumes");
      lvs != vg_section->end() && lvs->is_object()) {
    for (auto it = lvs->begin(); it != lvs->end(); ++it) {
      if (!it->is_object()) continue;
      Result<LvmLogicalVolume> lv = ReadLogicalVolume(it.key(), *it, vg);
      if (!lv) return lv.error();
      vg.logical_volumes.push_back(std::move(*lv));
    }
  }
  return vg;
}

}  // namespace partalign
