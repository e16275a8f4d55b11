// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/tool_version.h"

#include <array>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace partalign {
namespace {

constexpr ToolVersion V(uint32_t major, uint32_t minor, uint32_t patch = 0, int components = 2) {
  return ToolVersion{major, minor, patch, components};
}

// The first token of `text` that starts with a digit.
std::string_view FirstNumberToken(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    // A version token starts at a digit that begins a word.
    if (std::isdigit(static_cast<unsigned char>(text[i])) &&
        (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t')) {
      size_t end = text.find_first_of(" \t\n", i);
      return text.substr(i, end == std::string_view::npos ? end : end - i);
    }
    ++i;
  }
  return {};
}

struct VersionSignature {
  Tool tool;
  std::string_view marker;  ///< text the first line of `--version` contains
};

// What each project's `--version` says before the number (checked on Debian 12).
constexpr std::array<VersionSignature, 4> kSignatures{{
    {Tool::kParted, "GNU parted"},
    {Tool::kUtilLinux, "util-linux"},
    {Tool::kGptfdisk, "GPT fdisk"},
    {Tool::kSystemd, "systemd"},
}};

struct Alias {
  std::string_view name;
  Tool tool;
};

constexpr std::array<Alias, 12> kAliases{{
    {"parted", Tool::kParted},
    {"util-linux", Tool::kUtilLinux},
    {"fdisk", Tool::kUtilLinux},
    {"sfdisk", Tool::kUtilLinux},
    {"cfdisk", Tool::kUtilLinux},
    {"libfdisk", Tool::kUtilLinux},
    {"gptfdisk", Tool::kGptfdisk},
    {"gdisk", Tool::kGptfdisk},
    {"sgdisk", Tool::kGptfdisk},
    {"systemd", Tool::kSystemd},
    {"systemd-repart", Tool::kSystemd},
    {"repart", Tool::kSystemd},
}};

}  // namespace

std::string_view ToString(Tool tool) {
  switch (tool) {
    case Tool::kParted:
      return "parted";
    case Tool::kUtilLinux:
      return "util-linux";
    case Tool::kGptfdisk:
      return "gptfdisk";
    case Tool::kSystemd:
      return "systemd";
  }
  return "unknown";
}

std::string_view CommandName(Tool tool) {
  switch (tool) {
    case Tool::kParted:
      return "parted";
    case Tool::kUtilLinux:
      return "sfdisk";
    case Tool::kGptfdisk:
      return "sgdisk";
    case Tool::kSystemd:
      return "systemd-repart";
  }
  return "unknown";
}

std::strong_ordering ToolVersion::operator<=>(const ToolVersion& o) const {
  if (auto c = major <=> o.major; c != 0) return c;
  if (auto c = minor <=> o.minor; c != 0) return c;
  return patch <=> o.patch;
}

bool ToolVersion::operator==(const ToolVersion& o) const { return (*this <=> o) == 0; }

std::string ToolVersion::ToString() const {
  if (components <= 1) return fmt::format("{}", major);
  if (components == 2) return fmt::format("{}.{}", major, minor);
  return fmt::format("{}.{}.{}", major, minor, patch);
}

Result<ToolVersion> ParseToolVersion(std::string_view text) {
  ToolVersion v{0, 0, 0, 0};
  uint32_t* parts[] = {&v.major, &v.minor, &v.patch};
  size_t i = 0;
  int n = 0;
  while (n < 4) {
    size_t start = i;
    uint64_t value = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      value = value * 10 + static_cast<uint64_t>(text[i] - '0');
      if (value > 1000000) return MakeError(fmt::format("'{}' is not a version", text));
      ++i;
    }
    if (i == start) break;
    if (n < 3) *parts[n] = static_cast<uint32_t>(value);
    ++n;
    if (i < text.size() && text[i] == '.' && i + 1 < text.size() &&
        std::isdigit(static_cast<unsigned char>(text[i + 1]))) {
      ++i;
      continue;
    }
    break;
  }
  if (n == 0) return MakeError(fmt::format("'{}' is not a version", text));
  v.components = n > 3 ? 3 : n;
  return v;
}

std::optional<ToolVersion> ParseVersionOutput(Tool tool, std::string_view output) {
  std::string_view line = output.substr(0, output.find('\n'));
  for (const VersionSignature& s : kSignatures) {
    if (s.tool != tool) continue;
    size_t at = line.find(s.marker);
    if (at == std::string_view::npos) return std::nullopt;
    Result<ToolVersion> v = ParseToolVersion(FirstNumberToken(line.substr(at)));
    if (!v) return std::nullopt;
    return *v;
  }
  return std::nullopt;
}

const std::vector<ToolEra>& Eras(Tool tool) {
  static const std::vector<ToolEra> kParted{
      {"parted 2.2-2.3", V(2, 2), V(2, 4),
       "default --align=optimal; the optimum is 1 MiB only when optimal I/O and alignment offset "
       "are 0 and minimum I/O is a power of two (commit 5fd88eb); every position, MiB included, "
       "is a range of +-1 unit"},
      {"parted 2.4-3.0", V(2, 4), V(3, 1),
       "\"default to 1MiB alignment when possible\" (c749046); KiB/MiB/GiB/TiB positions are "
       "exact (552805a)"},
      {"parted 3.1-3.2", V(3, 1), V(3, 3),
       "position ranges are half a unit wide (18e727d); an end in IEC units is one sector lower"},
      {"parted >= 3.3", V(3, 3), std::nullopt,
       "the alignment warning and align-check print the arithmetic (1726dbb)"},
  };
  static const std::vector<ToolEra> kUtilLinux{
      {"util-linux 2.23-2.26", V(2, 23), V(2, 27),
       "libfdisk: grain = max(I/O size, 1 MiB), optimal I/O taken as it is, bit-mask arithmetic "
       "(wrong for grains that are not powers of two)"},
      {"util-linux 2.27-2.35", V(2, 27), V(2, 36),
       "an I/O size that is not a multiple of the physical sector is ignored (acb7651f8); modulo "
       "arithmetic (68a8648ce)"},
      {"util-linux 2.36", V(2, 36), V(2, 37),
       "areas smaller than a grain are not aligned (89c0297bc)"},
      {"util-linux >= 2.37", V(2, 37), std::nullopt,
       "an I/O size of 33553920 is ignored, \"always a controller error\" (bbb66067c)"},
  };
  static const std::vector<ToolEra> kGptfdisk{
      {"gptfdisk 0.6.6-0.6.11", V(0, 6, 6, 3), V(0, 6, 12, 3),
       "new tables align to 2048 sectors whatever the sector size; inferred alignment is at "
       "least 8 on disks of 1250263728 sectors or more"},
      {"gptfdisk 0.6.12-0.6.14", V(0, 6, 12, 3), V(0, 7, 0, 3),
       "new tables align to 1 MiB in logical sectors (0873e9d)"},
      {"gptfdisk >= 0.7.0", V(0, 7, 0, 3), std::nullopt,
       "inferred alignment is at least 8 on disks of 585937500 sectors (~300 GB) or more "
       "(64cbd17)"},
  };
  static const std::vector<ToolEra> kSystemd{
      {"systemd-repart 245-252", V(245, 0, 0, 1), V(253, 0, 0, 1),
       "grain max(4 KiB, sector size); libfdisk sees the device's own topology"},
      {"systemd-repart >= 253", V(253, 0, 0, 1), std::nullopt,
       "the sector size is always saved in libfdisk (--sector-size, PR #26044), which resets "
       "libfdisk's I/O size to it"},
  };
  switch (tool) {
    case Tool::kParted:
      return kParted;
    case Tool::kUtilLinux:
      return kUtilLinux;
    case Tool::kGptfdisk:
      return kGptfdisk;
    case Tool::kSystemd:
      return kSystemd;
  }
  return kParted;
}

Result<ToolEra> FindEra(const std::vector<ToolEra>& eras, std::string_view project,
                        const ToolVersion& version) {
  for (const ToolEra& era : eras) {
    if (version >= era.since && (!era.before || version < *era.before)) return era;
  }
  return MakeError(fmt::format("{} {} is older than the oldest modelled version {}", project,
                               version.ToString(), eras.front().since.ToString()));
}

Result<ToolEra> EraOf(Tool tool, const ToolVersion& version) {
  return FindEra(Eras(tool), ToString(tool), version);
}

ToolVersion NewestKnownVersion(Tool tool) {
  switch (tool) {
    case Tool::kParted:
      return V(3, 6);
    case Tool::kUtilLinux:
      return V(2, 42);
    case Tool::kGptfdisk:
      return V(1, 0, 10, 3);
    case Tool::kSystemd:
      return V(257, 0, 0, 1);
  }
  return V(0, 0);
}

std::string_view ToString(VersionSource source) {
  switch (source) {
    case VersionSource::kInstalled:
      return "installed";
    case VersionSource::kUserOverride:
      return "--tool-version";
    case VersionSource::kNewestKnown:
      return "newest known";
    case VersionSource::kInstallerOverride:
      return "--installer-version";
  }
  return "unknown";
}

ResolvedVersion& ToolVersions::For(Tool tool) {
  switch (tool) {
    case Tool::kParted:
      return parted;
    case Tool::kUtilLinux:
      return util_linux;
    case Tool::kGptfdisk:
      return gptfdisk;
    case Tool::kSystemd:
      return systemd;
  }
  return parted;
}

const ResolvedVersion& ToolVersions::For(Tool tool) const {
  return const_cast<ToolVersions*>(this)->For(tool);
}

ToolVersions NewestKnownVersions() {
  ToolVersions v;
  for (Tool t : {Tool::kParted, Tool::kUtilLinux, Tool::kGptfdisk, Tool::kSystemd}) {
    v.For(t) = ResolvedVersion{NewestKnownVersion(t), VersionSource::kNewestKnown};
  }
  return v;
}

Result<std::pair<size_t, ToolVersion>> ParseVersionOverride(
    std::string_view item, const std::vector<std::string_view>& names, std::string_view what,
    std::string_view example) {
  size_t eq = item.find('=');
  if (eq == std::string_view::npos) {
    return MakeError(fmt::format("'{}' is not {}=VERSION", item, what == "tool" ? "TOOL" : "NAME"));
  }
  std::string_view name = item.substr(0, eq);
  std::string_view text = item.substr(eq + 1);
  size_t index = 0;
  while (index < names.size() && names[index] != name) ++index;
  if (index == names.size()) {
    return MakeError(
        fmt::format("unknown {} '{}' (known: {})", what, name, fmt::join(names, ", ")));
  }
  Result<ToolVersion> version = ParseToolVersion(text);
  if (!version || text.find_first_not_of("0123456789.") != std::string_view::npos) {
    return MakeError(fmt::format("'{}' is not a version (expected e.g. {})", text, example));
  }
  return std::make_pair(index, *version);
}

Result<std::pair<Tool, ToolVersion>> ParseToolVersionOverride(std::string_view item) {
  std::vector<std::string_view> names;
  for (const Alias& a : kAliases) names.push_back(a.name);
  Result<std::pair<size_t, ToolVersion>> o = ParseVersionOverride(item, names, "tool", "2.38.1");
  if (!o) return o.error();
  const Tool tool = kAliases[o->first].tool;
  if (Result<ToolEra> era = EraOf(tool, o->second); !era) return era.error();
  return std::make_pair(tool, o->second);
}

}  // namespace partalign
