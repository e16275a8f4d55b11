// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/tool_verdicts.h"

#include <algorithm>

#include <fmt/format.h>

#include "partalign/tools/gdisk_model.h"
#include "partalign/tools/libfdisk_model.h"
#include "partalign/tools/parted_model.h"
#include "partalign/tools/tool_version.h"

namespace partalign {
namespace {

// The tools print some messages over two lines; a verdict is one line.
std::string OneLine(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

ToolVerdict FromWarning(const std::optional<std::string>& warning) {
  return warning ? ToolVerdict{false, OneLine(*warning)} : ToolVerdict{true, ""};
}

}  // namespace

ToolVerdict PartedAlignCheckOpt(const Topology& topology, uint32_t number, uint64_t start_sector) {
  Result<PartedModel> model = MakePartedModel(topology, NewestKnownVersion(Tool::kParted));
  if (!model) return {false, "parted cannot compute an alignment: " + model.error().message};
  AlignCheckOutcome outcome = PredictAlignCheck(
      *model, PartedMode::kOptimal, static_cast<int>(number), static_cast<int64_t>(start_sector));
  return {outcome.aligned, outcome.output};
}

ToolVerdict FdiskPhysicalBoundary(const Topology& topology, uint32_t number,
                                  uint64_t start_sector) {
  Result<LibfdiskContext> cxt = DiscoverLibfdisk(topology, NewestKnownVersion(Tool::kUtilLinux));
  if (!cxt) return {false, "libfdisk cannot use this topology: " + cxt.error().message};
  if (FdiskLbaIsPhyAligned(*cxt, start_sector)) return {true, ""};
  return {false, FdiskPhysBoundaryWarning(static_cast<int>(number))};
}

uint64_t GdiskVerifyAlignment(const Topology& topology, uint64_t disk_sectors,
                              const std::vector<uint64_t>& starts) {
  uint64_t inferred = GdiskComputeAlignment(NewestKnownVersion(Tool::kGptfdisk),
                                            topology.logical_sector_size, disk_sectors, starts);
  return std::max<uint64_t>(GdiskTestAlignment(topology, inferred), 1);
}

ToolVerdict GdiskVerifyStart(const Topology& topology, uint32_t number, uint64_t start_sector,
                             uint64_t test_alignment) {
  return FromWarning(
      GdiskVerifyBeginWarning(topology, test_alignment, static_cast<int>(number), start_sector));
}

ToolVerdict GdiskVerifyEnd(const Topology& topology, uint32_t number, uint64_t end_sector,
                           uint64_t test_alignment) {
  return FromWarning(
      GdiskVerifyEndWarning(topology, test_alignment, static_cast<int>(number), end_sector));
}

}  // namespace partalign
