// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/stack_tool_version.h"

#include <array>

#include <fmt/format.h>

namespace partalign {
namespace {

constexpr ToolVersion StackV(uint32_t major, uint32_t minor, uint32_t patch) {
  return ToolVersion{major, minor, patch, 3};
}

struct StackAlias {
  std::string_view name;
  StackTool tool;
};

constexpr std::array<StackAlias, 4> kStackAliases{{
    {"lvm2", StackTool::kLvm2},
    {"lvm", StackTool::kLvm2},
    {"pvcreate", StackTool::kLvm2},
    {"cryptsetup", StackTool::kCryptsetup},
}};

const StackAlias* FindAlias(std::string_view name) {
  for (const StackAlias& a : kStackAliases) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

// The number after `marker` in `output`, up to the first character that is not a digit or '.'
// ("2.03.16(2)" gives "2.03.16").
std::optional<ToolVersion> VersionAfter(std::string_view output, std::string_view marker) {
  size_t at = output.find(marker);
  if (at == std::string_view::npos) return std::nullopt;
  at = output.find_first_of("0123456789", at + marker.size());
  if (at == std::string_view::npos) return std::nullopt;
  size_t end = output.find_first_not_of("0123456789.", at);
  std::string_view text = output.substr(at, end == std::string_view::npos ? end : end - at);
  Result<ToolVersion> version = ParseToolVersion(text);
  if (!version) return std::nullopt;
  return *version;
}

}  // namespace

std::string_view ToString(StackTool tool) {
  return tool == StackTool::kLvm2 ? "lvm2" : "cryptsetup";
}

const std::vector<ToolEra>& Eras(StackTool tool) {
  // lvm2: lib/metadata/metadata.c set_pe_align(), lib/format_text/format-text.c (the metadata
  // area's end is rounded up to the alignment), lib/device/dev-type.c; WHATS_NEW.
  static const std::vector<ToolEra> kLvm2{
      {"lvm2 2.02.51-2.02.72", StackV(2, 2, 51), StackV(2, 2, 73),
       "data_alignment_detection: the alignment is the largest of 64 KiB, the minimum and the "
       "optimal I/O size; the metadata area is 255 sectors"},
      {"lvm2 2.02.73-2.03.02", StackV(2, 2, 73), StackV(2, 3, 3),
       "\"Change default alignment of pe_start to 1MB\" (2.02.73); a minimum or optimal I/O size "
       "that does not divide 1 MiB replaces it (_alignment_overrides_default, 4efb1d9cb)"},
      {"lvm2 2.03.03-2.03.30", StackV(2, 3, 3), StackV(2, 3, 31),
       "\"Place the first PE at 1 MiB for all defaults\" (904e1e3d2): the metadata area fills "
       "the first MiB; each I/O size is compared with the alignment chosen so far"},
      {"lvm2 >= 2.03.31", StackV(2, 3, 31), std::nullopt,
       "minimum/optimal I/O sizes above one sector that are not a multiple of 4 sectors are "
       "ignored (5f71cebcb, 36ae51c3c: \"not divisible by 4KiB\")"},
  };
  // cryptsetup: lib/utils_device.c device_topology_alignment(), lib/luks2/luks2_json_format.c
  // LUKS2_generate_hdr(), lib/luks1/keymanage.c LUKS_generate_phdr().
  static const std::vector<ToolEra> kCryptsetup{
      {"cryptsetup 2.1-2.3.3", StackV(2, 1, 0), StackV(2, 3, 4),
       "LUKS2 by default with a 16 MiB header; an optimal I/O size that is a multiple of the "
       "minimum I/O size replaces the 1 MiB alignment when it does not divide it"},
      {"cryptsetup >= 2.3.4", StackV(2, 3, 4), std::nullopt,
       "an optimal I/O size that is not a multiple of 4 KiB is ignored (4cf663a6: \"some bogus "
       "USB enclosures\")"},
  };
  return tool == StackTool::kLvm2 ? kLvm2 : kCryptsetup;
}

Result<ToolEra> EraOf(StackTool tool, const ToolVersion& version) {
  const std::vector<ToolEra>& eras = Eras(tool);
  for (const ToolEra& era : eras) {
    if (version >= era.since && (!era.before || version < *era.before)) return era;
  }
  return MakeError(fmt::format("{} {} is older than the oldest modelled version {}", ToString(tool),
                               VersionText(tool, version), VersionText(tool, eras.front().since)));
}

ToolVersion NewestKnownVersion(StackTool tool) {
  // The newest tags read: lvm2 v2_03_39, cryptsetup v2.8.6.
  return tool == StackTool::kLvm2 ? StackV(2, 3, 39) : StackV(2, 8, 6);
}

std::string VersionText(StackTool tool, const ToolVersion& version) {
  if (tool == StackTool::kLvm2) {
    return fmt::format("{}.{:02}.{:02}", version.major, version.minor, version.patch);
  }
  return version.ToString();
}

std::optional<ToolVersion> ParseStackToolVersionOutput(StackTool tool, std::string_view output) {
  return tool == StackTool::kLvm2 ? VersionAfter(output, "LVM version:")
                                  : VersionAfter(output, "cryptsetup ");
}

StackToolVersions NewestKnownStackVersions() {
  StackToolVersions v;
  for (StackTool t : {StackTool::kLvm2, StackTool::kCryptsetup}) {
    v.For(t) = ResolvedVersion{NewestKnownVersion(t), VersionSource::kNewestKnown};
  }
  return v;
}

bool IsStackToolOverride(std::string_view item) {
  return FindAlias(item.substr(0, item.find('='))) != nullptr;
}

Result<std::pair<StackTool, ToolVersion>> ParseStackToolVersionOverride(std::string_view item) {
  const size_t eq = item.find('=');
  if (eq == std::string_view::npos) return MakeError(fmt::format("'{}' is not TOOL=VERSION", item));
  std::string_view name = item.substr(0, eq);
  std::string_view text = item.substr(eq + 1);
  const StackAlias* alias = FindAlias(name);
  if (alias == nullptr) return MakeError(fmt::format("unknown tool '{}'", name));
  Result<ToolVersion> version = ParseToolVersion(text);
  if (!version || text.find_first_not_of("0123456789.") != std::string_view::npos) {
    return MakeError(fmt::format("'{}' is not a version (expected e.g. 2.03.16)", text));
  }
  if (Result<ToolEra> era = EraOf(alias->tool, *version); !era) return era.error();
  return std::make_pair(alias->tool, *version);
}

}  // namespace partalign
