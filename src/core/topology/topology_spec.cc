// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/topology/topology_spec.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "partalign/topology/topology_check.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t end = s.find(sep, start);
    parts.push_back(s.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
}

// Splits off the next whitespace-separated word.
std::string_view NextWord(std::string_view* rest) {
  *rest = Trim(*rest);
  size_t end = rest->find_first_of(" \t");
  std::string_view word = rest->substr(0, end);
  *rest = end == std::string_view::npos ? std::string_view() : rest->substr(end);
  return word;
}

struct SpecKey {
  std::string_view name;
  std::optional<uint64_t> TopologyOverride::*field;
};

constexpr std::array<SpecKey, 6> kKeys{{
    {"log", &TopologyOverride::logical_sector_size},
    {"phys", &TopologyOverride::physical_sector_size},
    {"min-io", &TopologyOverride::minimum_io_size},
    {"opt-io", &TopologyOverride::optimal_io_size},
    {"align-offset", &TopologyOverride::alignment_offset},
    {"size", &TopologyOverride::size_bytes},
}};

std::string KeyNames() {
  std::string names;
  for (const SpecKey& k : kKeys) {
    if (!names.empty()) names += ", ";
    names += k.name;
  }
  return names;
}

// Parses only KEY=SIZE items (no profile names); used for profile bodies and spec tails.
Status ParseItems(const std::vector<std::string_view>& items, std::string_view spec,
                  TopologyOverride* out) {
  std::vector<std::string_view> seen;
  for (std::string_view item : items) {
    size_t eq = item.find('=');
    std::string_view key = Trim(item.substr(0, eq));
    std::string_view value = eq == std::string_view::npos ? "" : Trim(item.substr(eq + 1));
    auto it =
        std::find_if(kKeys.begin(), kKeys.end(), [&](const SpecKey& k) { return k.name == key; });
    if (it == kKeys.end()) {
      return MakeError(fmt::format("invalid topology spec '{}': unknown key '{}' (known: {})", spec,
                                   key, KeyNames()));
    }
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      return MakeError(fmt::format("invalid topology spec '{}': '{}' given twice", spec, key));
    }
    seen.push_back(key);
    Result<uint64_t> size = ParseSize(value);
    if (!size) {
      return MakeError(fmt::format("invalid topology spec '{}': {}: {}", spec, key,
                                   value.empty() ? "missing value" : size.error().message));
    }
    out->*(it->field) = *size;
  }
  return {};
}

}  // namespace

bool TopologyOverride::empty() const {
  return !logical_sector_size && !physical_sector_size && !minimum_io_size && !optimal_io_size &&
         !alignment_offset && !size_bytes;
}

Result<std::vector<TopologyProfile>> ParseProfiles(std::string_view text) {
  std::vector<TopologyProfile> profiles;
  int line_number = 0;
  for (std::string_view line : Split(text, '\n')) {
    ++line_number;
    std::string_view rest = Trim(line);
    if (rest.empty() || rest.front() == '#') continue;
    TopologyProfile profile;
    profile.name = std::string(NextWord(&rest));
    profile.spec = std::string(NextWord(&rest));
    profile.description = std::string(Trim(rest));
    TopologyOverride check;
    if (profile.spec.empty() || profile.spec.find('=') == std::string::npos) {
      return MakeError(
          fmt::format("profile table line {}: '{}' has no spec", line_number, profile.name));
    }
    if (Status s = ParseItems(Split(profile.spec, ','), profile.spec, &check); !s) {
      return MakeError(fmt::format("profile table line {}: {}", line_number, s.error().message));
    }
    for (const TopologyProfile& p : profiles) {
      if (p.name == profile.name) {
        return MakeError(
            fmt::format("profile table line {}: '{}' defined twice", line_number, profile.name));
      }
    }
    profiles.push_back(std::move(profile));
  }
  return profiles;
}

Result<TopologyOverride> ParseTopologySpec(std::string_view spec,
                                           const std::vector<TopologyProfile>& profiles) {
  std::vector<std::string_view> items = Split(Trim(spec), ',');
  if (Trim(spec).empty()) return MakeError("invalid topology spec '': empty");
  TopologyOverride result;
  if (items.front().find('=') == std::string_view::npos) {
    std::string_view name = Trim(items.front());
    auto it = std::find_if(profiles.begin(), profiles.end(),
                           [&](const TopologyProfile& p) { return p.name == name; });
    if (it == profiles.end()) {
      std::string names;
      for (const TopologyProfile& p : profiles) names += (names.empty() ? "" : ", ") + p.name;
      return MakeError(fmt::format("invalid topology spec '{}': unknown profile '{}' (known: {})",
                                   spec, name, names));
    }
    if (Status s = ParseItems(Split(it->spec, ','), it->spec, &result); !s) return s.error();
    result.profile = it->name;
    items.erase(items.begin());
  }
  TopologyOverride tail;
  if (Status s = ParseItems(items, spec, &tail); !s) return s.error();
  for (const SpecKey& k : kKeys) {
    if (tail.*(k.field)) result.*(k.field) = tail.*(k.field);
  }
  if (result.logical_sector_size) {
    uint64_t log = *result.logical_sector_size;
    if (log < 512 || log > kMaxLogicalSectorSize || !IsPowerOfTwo(log)) {
      return MakeError(
          fmt::format("invalid topology spec '{}': log={} is not a power of two between 512 and {}",
                      spec, log, kMaxLogicalSectorSize));
    }
  }
  // 0 means "none" only for the optimal I/O size and the alignment offset; a sector, a minimum
  // I/O and a disk are never 0 bytes (a 0 would make every later division or grain meaningless).
  const std::pair<const char*, std::optional<uint64_t>> nonzero[] = {
      {"phys", result.physical_sector_size},
      {"min-io", result.minimum_io_size},
      {"size", result.size_bytes}};
  for (const auto& [key, value] : nonzero) {
    if (value && *value == 0) {
      return MakeError(
          fmt::format("invalid topology spec '{}': {}=0: must be at least one sector", spec, key));
    }
  }
  return result;
}

Result<Topology> ApplyOverride(Topology base, const TopologyOverride& o) {
  if (o.empty()) return base;
  // A target that reports nothing has every size equal to its logical sector size; changing
  // the logical size of such a target changes those defaults with it.
  if (o.logical_sector_size && base.origin == TopologyOrigin::kDefault) {
    base = DefaultTopology(*o.logical_sector_size, base.size_bytes);
  }
  if (o.logical_sector_size) {
    base.logical_sector_size = *o.logical_sector_size;
    // A device's physical sector and minimum I/O are never below its logical sector: the
    // kernel raises them (blk-settings.c). "--assume log=4096" on a 512-byte device asks "what
    // if it had 4 KiB sectors", so the reported values that are not given rise the same way.
    const uint64_t log = base.logical_sector_size;
    if (!o.physical_sector_size && base.physical_sector_size < log) {
      base.physical_sector_size = log;
    }
    if (!o.minimum_io_size && base.minimum_io_size != 0 && base.minimum_io_size < log) {
      base.minimum_io_size = base.physical_sector_size;
    }
  }
  if (o.physical_sector_size) base.physical_sector_size = *o.physical_sector_size;
  if (o.minimum_io_size) base.minimum_io_size = *o.minimum_io_size;
  if (o.optimal_io_size) base.optimal_io_size = *o.optimal_io_size;
  if (o.alignment_offset) base.alignment_offset = *o.alignment_offset;
  if (o.size_bytes) base.size_bytes = *o.size_bytes;
  base.origin = TopologyOrigin::kAssumed;
  if (Status valid = ValidateTopology(base); !valid) {
    return MakeError(
        fmt::format("--assume gives an impossible topology: {}", valid.error().message));
  }
  return base;
}

}  // namespace partalign
