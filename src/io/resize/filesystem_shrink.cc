// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/resize/filesystem_shrink.h"

#include <algorithm>

#include <fmt/format.h>

#include "io/resize/scratch_copy.h"
#include "io/resize/shrink_tools.h"
#include "io/used/used_map_reader.h"
#include "io/util/child_process.h"
#include "partalign/layout/fs_size.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// The last lines a tool printed, for a refusal: enough to say why, short enough for one error.
constexpr size_t kShrinkToolTailLines = 4;

std::string ToolTail(const std::string& output) {
  std::vector<std::string> lines;
  size_t at = 0;
  while (at < output.size()) {
    size_t end = output.find('\n', at);
    if (end == std::string::npos) end = output.size();
    std::string line = output.substr(at, end - at);
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);
    at = end + 1;
  }
  std::string out;
  const size_t first =
      lines.size() > kShrinkToolTailLines ? lines.size() - kShrinkToolTailLines : 0;
  for (size_t i = first; i < lines.size(); ++i) out += (out.empty() ? "" : " / ") + lines[i];
  return out;
}

}  // namespace

Status RunToolStep(ShrinkJob& job, const std::vector<std::string>& argv, std::string_view verdict,
                   const std::vector<int>& ok_exit_codes) {
  std::vector<std::string> shown = argv;
  for (std::string& a : shown) {
    if (a == job.copy.path()) a = "COPY";
  }
  Result<ProgramRun> run = RunProgram(argv);
  if (!run) return run.error();
  const bool ok = run->exit_code && std::find(ok_exit_codes.begin(), ok_exit_codes.end(),
                                              *run->exit_code) != ok_exit_codes.end();
  if (!ok) {
    return MakeError(
        fmt::format("{}: '{}' on a scratch copy {} ({}); nothing was written to the disk",
                    job.request.name, CommandLine(shown),
                    run->exit_code ? fmt::format("exited with status {}", *run->exit_code)
                                   : std::string("was killed"),
                    ToolTail(run->output)));
  }
  job.steps.push_back(fmt::format("{}: {}", CommandLine(shown), verdict));
  return {};
}

Result<ShrinkOutcome> ShrinkOnScratch(const ShrinkRequest& request) {
  const ShrinkWay way = ShrinkWayFor(request.fs_type);
  if (!way.tool) {
    return MakeError(fmt::format("{}: its {} cannot be shrunk: {}", request.name,
                                 request.fs_type.empty() ? "contents" : request.fs_type,
                                 way.reason));
  }
  if (request.new_length_bytes == 0 || request.new_length_bytes >= request.length_bytes ||
      request.sector_bytes == 0 || request.new_length_bytes % request.sector_bytes != 0) {
    return MakeError(fmt::format("{}: cannot shrink {} bytes to {} bytes", request.name,
                                 request.length_bytes, request.new_length_bytes));
  }
  // What the contents use is all a tool reads: the rest of the copy stays holes. A swap area
  // holding a hibernation image is refused here.
  Result<UsedMap> used = ReadUsedMap({.path = request.disk_path,
                                      .fd = request.disk_fd,
                                      .offset_bytes = request.offset_bytes,
                                      .length_bytes = request.length_bytes,
                                      .fs_type = request.fs_type});
  if (!used) return MakeError(fmt::format("{}: {}", request.name, used.error().message));
  Result<ScratchCopy> copy = ScratchCopy::Create(request.scratch_dir, request.length_bytes);
  if (!copy) return copy.error();
  std::vector<ByteExtent> ranges;
  for (const UsedRange& r : used->ranges()) ranges.push_back({r.offset_bytes, r.length_bytes});
  if (Status copied =
          copy->CopyIn(request.disk_fd, request.disk_path, request.offset_bytes, ranges);
      !copied) {
    return copied.error();
  }
  ShrinkOutcome outcome;
  outcome.tool = *way.tool;
  outcome.copied_bytes = used->used_bytes();
  ShrinkJob job{request, *copy, outcome.steps};
  Status shrunk;
  switch (*way.tool) {
    case ShrinkTool::kResize2fs:
      shrunk = ShrinkExt(job);
      break;
    case ShrinkTool::kNtfsresize:
      shrunk = ShrinkNtfs(job);
      break;
    case ShrinkTool::kFatResize:
      shrunk = ShrinkFat(job);
      break;
    case ShrinkTool::kMkswap:
      shrunk = RecreateSwap(job);
      break;
  }
  if (!shrunk) return shrunk.error();
  // The tool's own word is not taken for the size: the superblock must fit the new partition.
  Result<std::vector<uint8_t>> head = copy->Read(0, kSuperblockProbeBytes);
  if (!head) return head.error();
  if (std::optional<uint64_t> size = FilesystemSizeBytes(request.fs_type, *head);
      size && *size > request.new_length_bytes) {
    return MakeError(fmt::format(
        "{}: after {} the {} is {} bytes, more than the partition's new {} bytes; nothing was "
        "written to the disk",
        request.name, ToString(*way.tool), request.fs_type, *size, request.new_length_bytes));
  }
  Result<std::vector<TableUpdate>> updates =
      copy->Changes(request.disk_fd, request.disk_path, request.offset_bytes,
                    request.new_length_bytes, request.sector_bytes);
  if (!updates) return updates.error();
  outcome.updates = std::move(*updates);
  return outcome;
}

}  // namespace partalign
