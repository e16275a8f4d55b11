// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/luks_format_model.h"

#include <fmt/format.h>

#include "partalign/tools/stack_tool_version.h"
#include "partalign/topology/alignment.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// DEFAULT_DISK_ALIGNMENT (lib/internal.h): 1 MiB.
constexpr uint64_t kLuksDefaultAlignment = kMiB;
constexpr uint64_t kPage = 4096;
constexpr uint64_t kLuksSector = 512;
const ToolVersion kIgnoresNon4kOptSince{2, 3, 4, 3};

}  // namespace

std::string_view ToString(LuksType type) { return type == LuksType::kLuks1 ? "luks1" : "luks2"; }

LuksFormatPrediction PredictLuksFormat(const Topology& t, const ToolVersion& version,
                                       LuksType type) {
  LuksFormatPrediction p;
  p.version = version;
  p.type = type;
  Result<ToolEra> era = EraOf(StackTool::kCryptsetup, version);
  if (!era) {
    p.error = era.error().message;
    return p;
  }
  p.era = std::string(era->name);
  p.required_alignment_bytes = kLuksDefaultAlignment;
  p.key_reason = "the payload is aligned to 1 MiB (DEFAULT_DISK_ALIGNMENT)";
  p.reasons.push_back(p.key_reason);
  uint64_t unit = t.minimum_io_size;
  const uint64_t opt = t.optimal_io_size;
  if (unit != 0 && opt != 0 && opt != unit) {
    const bool non_4k = opt % kPage != 0 && version >= kIgnoresNon4kOptSince;
    if (unit < opt && opt % unit == 0 && !non_4k) {
      unit = opt;
      p.reasons.push_back(
          fmt::format("the optimal I/O size {} (a multiple of the minimum I/O "
                      "size) is the I/O unit",
                      opt));
    } else {
      p.reasons.push_back(
          fmt::format("\"Ignoring bogus optimal-io size for data device ({} "
                      "bytes)\"; the minimum I/O size {} is the I/O unit",
                      opt, t.minimum_io_size));
    }
  }
  if (unit != 0 && kLuksDefaultAlignment % unit != 0) {
    p.required_alignment_bytes = unit;
    p.key_reason =
        fmt::format("the I/O unit {} does not divide 1 MiB, so the payload is aligned to it", unit);
    p.reasons.push_back(p.key_reason);
  }
  p.alignment_offset_bytes = t.alignment_offset;
  const uint64_t header =
      type == LuksType::kLuks1 ? kLuks1DefaultHeaderBytes : kLuks2DefaultHeaderBytes;
  // LUKS1 counts in 512-byte sectors: the alignment rounds down to whole sectors.
  const uint64_t align =
      type == LuksType::kLuks1
          ? std::max<uint64_t>(kLuksSector, AlignDown(p.required_alignment_bytes, kLuksSector))
          : p.required_alignment_bytes;
  p.data_offset_bytes = AlignUp(header, align) + t.alignment_offset;
  p.reasons.push_back(fmt::format(
      "the {} header takes {} bytes; rounded up to {}{}: data at {}", ToString(type), header, align,
      t.alignment_offset ? fmt::format(", plus the alignment offset {}", t.alignment_offset)
                         : std::string(),
      p.data_offset_bytes));
  return p;
}

}  // namespace partalign
