// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/tools/stack_tool_versions.h"

#include "io/tools/tool_versions.h"

namespace partalign {

StackToolVersions DetectStackToolVersions() {
  StackToolVersions versions = NewestKnownStackVersions();
  // pvcreate, not lvm: `lvm --version` is refused ("Specify options after a command").
  for (auto [tool, command] :
       {std::pair{StackTool::kLvm2, "pvcreate"}, std::pair{StackTool::kCryptsetup, "cryptsetup"}}) {
    std::optional<std::string> out = RunVersionCommand(command);
    if (!out) continue;
    if (std::optional<ToolVersion> v = ParseStackToolVersionOutput(tool, *out)) {
      versions.For(tool) = ResolvedVersion{*v, VersionSource::kInstalled};
    }
  }
  return versions;
}

}  // namespace partalign
