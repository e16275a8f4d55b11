// SPDX-License-Identifier: GPL-3.0-or-later
// Versions of the two tools that place data inside a partition, whose placement explain
// predicts beside the partitioners': lvm2's pvcreate (where a PV's data area starts) and
// cryptsetup's luksFormat (where a LUKS payload starts). Their eras are separate from the
// partitioners' (tool_version.h) so that the two lists can grow independently.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "partalign/tools/tool_version.h"
#include "partalign/util/result.h"

namespace partalign {

enum class StackTool { kLvm2, kCryptsetup };

/// "lvm2", "cryptsetup".
std::string_view ToString(StackTool tool);

/// The eras in which the tool's data placement differs, oldest first (docs/stack.md).
const std::vector<ToolEra>& Eras(StackTool tool);

/// The era `version` falls in, or an error for a version older than the first modelled era.
Result<ToolEra> EraOf(StackTool tool, const ToolVersion& version);

/// The newest version whose sources partalign read: the default when the tool is missing.
ToolVersion NewestKnownVersion(StackTool tool);

/// How the project prints its versions: lvm2 "2.03.16", "2.02.166"; cryptsetup "2.6.1".
std::string VersionText(StackTool tool, const ToolVersion& version);

/// The version in `lvm version` ("  LVM version:     2.03.16(2) (2022-05-18)") or
/// `cryptsetup --version` ("cryptsetup 2.6.1 flags: UDEV BLKID ..."); nullopt otherwise.
std::optional<ToolVersion> ParseStackToolVersionOutput(StackTool tool, std::string_view output);

struct StackToolVersions {
  ResolvedVersion lvm2;
  ResolvedVersion cryptsetup;

  ResolvedVersion& For(StackTool tool) { return tool == StackTool::kLvm2 ? lvm2 : cryptsetup; }
  const ResolvedVersion& For(StackTool tool) const {
    return tool == StackTool::kLvm2 ? lvm2 : cryptsetup;
  }
};

/// Both tools at their newest known versions.
StackToolVersions NewestKnownStackVersions();

/// True when `--tool-version ITEM` names lvm2 or cryptsetup (lvm2, lvm, pvcreate; cryptsetup),
/// so explain hands it to ParseStackToolVersionOverride instead of the partitioners' parser.
bool IsStackToolOverride(std::string_view item);

/// Parses "lvm2=2.02.166", "pvcreate=2.03.16", "cryptsetup=2.3.3"; the version must lie in a
/// modelled era.
Result<std::pair<StackTool, ToolVersion>> ParseStackToolVersionOverride(std::string_view item);

}  // namespace partalign
