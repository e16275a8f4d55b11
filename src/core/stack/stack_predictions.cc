// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/stack/stack_predictions.h"

#include <fmt/format.h>

#include "partalign/stack/stack_check.h"
#include "partalign/tools/luks_format_model.h"
#include "partalign/tools/pvcreate_model.h"
#include "partalign/topology/alignment.h"
#include "partalign/util/json_util.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// What the tool sees when it formats the partition starting at `start`: the disk's I/O sizes,
// the partition's own alignment offset and size.
Topology InPartition(const Topology& t, uint64_t start) {
  Topology p = t;
  p.alignment_offset = PartitionAlignmentOffset(t, start);
  p.size_bytes = t.size_bytes > start ? t.size_bytes - start : 0;
  return p;
}

std::string Cell(const std::optional<uint64_t>& value) {
  return value ? std::to_string(*value) : "-";
}

std::string Cell(const std::optional<bool>& value) { return value ? (*value ? "yes" : "NO") : "-"; }

}  // namespace

std::vector<StackToolPrediction> PredictStackTools(const Topology& t,
                                                   const StackToolVersions& versions) {
  const uint64_t start = RecommendAlignment(t).alignment.Up(kMiB);
  std::vector<StackToolPrediction> out;
  {
    StackToolPrediction p;
    p.tool = "pvcreate";
    p.project = StackTool::kLvm2;
    p.version = versions.lvm2.version;
    p.version_source = versions.lvm2.source;
    p.partition_start_bytes = start;
    PvcreatePrediction disk = PredictPvcreate(t, p.version);
    PvcreatePrediction part = PredictPvcreate(InPartition(t, start), p.version);
    p.era = disk.era;
    p.error = disk.error;
    p.reasons = disk.reasons;
    p.key_reason = disk.key_reason;
    if (disk.error.empty()) {
      p.whole_disk_data_offset_bytes = disk.pe_start_bytes;
      p.whole_disk_aligned = StackOffsetAligned(t, disk.pe_start_bytes);
    }
    if (part.error.empty()) {
      p.partition_data_offset_bytes = start + part.pe_start_bytes;
      p.partition_aligned = StackOffsetAligned(t, start + part.pe_start_bytes);
    }
    out.push_back(std::move(p));
  }
  for (LuksType type : {LuksType::kLuks2, LuksType::kLuks1}) {
    StackToolPrediction p;
    p.tool = fmt::format("cryptsetup-{}", ToString(type));
    p.project = StackTool::kCryptsetup;
    p.version = versions.cryptsetup.version;
    p.version_source = versions.cryptsetup.source;
    p.partition_start_bytes = start;
    LuksFormatPrediction disk = PredictLuksFormat(t, p.version, type);
    LuksFormatPrediction part = PredictLuksFormat(InPartition(t, start), p.version, type);
    p.era = disk.era;
    p.error = disk.error;
    p.reasons = disk.reasons;
    p.key_reason = disk.key_reason;
    if (disk.error.empty()) {
      p.whole_disk_data_offset_bytes = disk.data_offset_bytes;
      p.whole_disk_aligned = StackOffsetAligned(t, disk.data_offset_bytes);
      p.partition_data_offset_bytes = start + part.data_offset_bytes;
      p.partition_aligned = StackOffsetAligned(t, start + part.data_offset_bytes);
    }
    out.push_back(std::move(p));
  }
  return out;
}

nlohmann::json StackPredictionsJson(const std::vector<StackToolPrediction>& predictions) {
  nlohmann::json out = nlohmann::json::array();
  for (const StackToolPrediction& p : predictions) {
    out.push_back({{"tool", p.tool},
                   {"version", VersionText(p.project, p.version)},
                   {"version_source", ToString(p.version_source)},
                   {"era", StringOrNull(p.era)},
                   {"whole_disk_data_offset_bytes", OptionalJson(p.whole_disk_data_offset_bytes)},
                   {"whole_disk_aligned", OptionalJson(p.whole_disk_aligned)},
                   {"partition_start_bytes", p.partition_start_bytes},
                   {"partition_data_offset_bytes", OptionalJson(p.partition_data_offset_bytes)},
                   {"partition_aligned", OptionalJson(p.partition_aligned)},
                   {"reasons", p.reasons},
                   {"error", StringOrNull(p.error)}});
  }
  return out;
}

std::vector<std::vector<std::string>> StackPredictionRows(
    const std::vector<StackToolPrediction>& predictions) {
  std::vector<std::vector<std::string>> rows;
  for (const StackToolPrediction& p : predictions) {
    std::string version = VersionText(p.project, p.version);
    if (p.version_source == VersionSource::kNewestKnown) version += "*";
    rows.push_back({p.tool, version, Cell(p.whole_disk_data_offset_bytes),
                    Cell(p.whole_disk_aligned), Cell(p.partition_data_offset_bytes),
                    Cell(p.partition_aligned)});
  }
  return rows;
}

std::vector<std::string> StackPredictionLines(const std::vector<StackToolPrediction>& predictions) {
  std::vector<std::string> lines;
  for (const StackToolPrediction& p : predictions) {
    if (!p.error.empty()) {
      lines.push_back(fmt::format("{}: {}", p.tool, p.error));
      continue;
    }
    const std::string what = p.project == StackTool::kLvm2 ? "the PV's data" : "the LUKS payload";
    if (p.whole_disk_aligned == false) {
      lines.push_back(fmt::format(
          "{} on the whole disk will put {} at byte {}, off the 4 KiB / physical sector / I/O "
          "size alignment: {}",
          p.tool, what, *p.whole_disk_data_offset_bytes, p.key_reason));
    }
    if (p.partition_aligned == false) {
      lines.push_back(fmt::format(
          "{} in a partition at byte {} will put {} at byte {}, misaligned inside an aligned "
          "partition: {}",
          p.tool, p.partition_start_bytes, what, *p.partition_data_offset_bytes, p.key_reason));
    }
  }
  for (const StackToolPrediction& p : predictions) {
    if (!p.error.empty()) continue;
    lines.push_back(fmt::format("{} ({}):", p.tool, p.era));
    for (const std::string& r : p.reasons) lines.push_back("  " + r);
  }
  return lines;
}

}  // namespace partalign
