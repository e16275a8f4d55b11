// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/tools/tool_versions.h"

#include <string>

#include "io/util/child_process.h"

namespace partalign {
namespace {

// `--version` answers in milliseconds; a tool that takes longer is treated as missing rather
// than holding up explain.
constexpr int kVersionTimeoutMs = 2000;
// The first line is all ParseVersionOutput() reads.
constexpr size_t kMaxOutput = 4096;

}  // namespace

std::optional<std::string> RunVersionCommand(const std::string& command) {
  Result<ProgramRun> run = RunProgram(
      {command, "--version"},
      {.timeout_ms = kVersionTimeoutMs, .max_output_bytes = kMaxOutput, .discard_stderr = true});
  if (!run || run->exit_code != 0) return std::nullopt;
  return run->output;
}

std::optional<ToolVersion> InstalledToolVersion(Tool tool) {
  std::optional<std::string> out = RunVersionCommand(std::string(CommandName(tool)));
  if (!out) return std::nullopt;
  return ParseVersionOutput(tool, *out);
}

ToolVersions DetectToolVersions() {
  ToolVersions versions = NewestKnownVersions();
  for (Tool tool : {Tool::kParted, Tool::kUtilLinux, Tool::kGptfdisk, Tool::kSystemd}) {
    std::optional<ToolVersion> v = InstalledToolVersion(tool);
    // An installed version older than anything modelled is reported by the models themselves.
    if (v) versions.For(tool) = ResolvedVersion{*v, VersionSource::kInstalled};
  }
  return versions;
}

}  // namespace partalign
