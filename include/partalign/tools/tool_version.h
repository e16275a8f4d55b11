// SPDX-License-Identifier: GPL-3.0-or-later
// Versions of the partitioners partalign models, and the eras in which their alignment rules
// differ (alignment-heuristics.md §2.3, §3.7, §4, §5). An era is a named half-open version
// range; every model asks "which era is this version in" instead of comparing numbers itself.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "partalign/util/result.h"

namespace partalign {

/// The upstream projects whose tools partalign predicts. util-linux covers fdisk, sfdisk, cfdisk
/// and libfdisk; gptfdisk covers gdisk and sgdisk; systemd covers systemd-repart.
enum class Tool { kParted, kUtilLinux, kGptfdisk, kSystemd };

/// "parted", "util-linux", "gptfdisk", "systemd".
std::string_view ToString(Tool tool);

/// The command whose version stands for the project: "parted", "sfdisk", "sgdisk",
/// "systemd-repart".
std::string_view CommandName(Tool tool);

/// A dotted version with up to three numeric components ("3.5", "2.38.1", "252"). Compares
/// numerically; missing components are 0.
struct ToolVersion {
  uint32_t major = 0;
  uint32_t minor = 0;
  uint32_t patch = 0;
  /// How many components the text had (1-3); only affects ToString().
  int components = 2;

  std::strong_ordering operator<=>(const ToolVersion& other) const;
  bool operator==(const ToolVersion& other) const;
  std::string ToString() const;
};

/// Parses "3.5", "2.38.1", "252", "1.0.9"; a fourth component ("3.4.64.2") is ignored, and a
/// suffix after the digits ("2.39-rc1", "252.39-1~deb12u2") ends the version.
Result<ToolVersion> ParseToolVersion(std::string_view text);

/// The version in a tool's `--version` output: "parted (GNU parted) 3.5", "sfdisk from
/// util-linux 2.38.1", "GPT fdisk (sgdisk) version 1.0.9", "systemd 252 (252.39-1~deb12u2)".
/// nullopt when the text does not look like that tool's output.
std::optional<ToolVersion> ParseVersionOutput(Tool tool, std::string_view output);

/// A range of versions [since, before) in which a tool's alignment behaviour is constant.
struct ToolEra {
  std::string_view name;              ///< short, for output: "parted >= 3.3"
  ToolVersion since;                  ///< first version of the era
  std::optional<ToolVersion> before;  ///< first version of the next era, if any
  std::string_view summary;           ///< what changed at `since`, with the upstream commit
};

/// The eras of `tool`, oldest first.
const std::vector<ToolEra>& Eras(Tool tool);

/// The era `version` falls in, or an error for versions older than the first modelled era.
Result<ToolEra> EraOf(Tool tool, const ToolVersion& version);

/// The era of `eras` (oldest first) that `version` falls in; `project` names it in the error.
Result<ToolEra> FindEra(const std::vector<ToolEra>& eras, std::string_view project,
                        const ToolVersion& version);

/// Splits one `NAME=X.Y` override: the index of NAME in `names` and the version, which must be
/// digits and dots only. `what` ("tool") and `example` ("2.38.1") word the errors.
Result<std::pair<size_t, ToolVersion>> ParseVersionOverride(
    std::string_view item, const std::vector<std::string_view>& names, std::string_view what,
    std::string_view example);

/// The newest version partalign knows the behaviour of (the default when a tool is not
/// installed).
ToolVersion NewestKnownVersion(Tool tool);

/// Where a version used for a prediction came from.
/// kUserOverride is `--tool-version`, kInstallerOverride `--installer-version`.
enum class VersionSource { kInstalled, kUserOverride, kNewestKnown, kInstallerOverride };

std::string_view ToString(VersionSource source);

struct ResolvedVersion {
  ToolVersion version;
  VersionSource source = VersionSource::kNewestKnown;
};

/// The version of every tool a prediction uses.
struct ToolVersions {
  ResolvedVersion parted;
  ResolvedVersion util_linux;
  ResolvedVersion gptfdisk;
  ResolvedVersion systemd;

  ResolvedVersion& For(Tool tool);
  const ResolvedVersion& For(Tool tool) const;
};

/// Every tool at its newest known version.
ToolVersions NewestKnownVersions();

/// Parses one `--tool-version TOOL=X.Y` item. TOOL is a project or one of its commands:
/// parted; util-linux, fdisk, sfdisk, cfdisk, libfdisk; gptfdisk, gdisk, sgdisk;
/// systemd, systemd-repart, repart. The version must lie in a modelled era.
Result<std::pair<Tool, ToolVersion>> ParseToolVersionOverride(std::string_view item);

}  // namespace partalign
