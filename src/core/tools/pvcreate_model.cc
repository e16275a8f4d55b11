// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/pvcreate_model.h"

#include <algorithm>

#include <fmt/format.h>

#include "partalign/tools/stack_tool_version.h"
#include "partalign/topology/alignment.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

constexpr uint64_t kPvSector = 512;
// The first metadata area starts one page in: LABEL_SCAN_SIZE (4 sectors) rounded up to the
// page size (format-text.c); partalign models 4 KiB pages (x86-64, the usual arm64 kernels).
constexpr uint64_t kMdaStart = 4096;
// DEFAULT_PVMETADATASIZE 255 sectors before 2.03.03; from 2.03.03
// get_default_pvmetadatasize_sectors(): 2040 sectors on 4 KiB pages, so the area ends at 1 MiB.
constexpr uint64_t kOldMetadataBytes = 255 * kPvSector;
constexpr uint64_t kMetadataBytes = 2040 * kPvSector;
// DEFAULT_PE_ALIGN_OLD: 128 sectors; DEFAULT_PE_ALIGN / FIRST_PE_AT_ONE_MB_IN_SECTORS: 2048.
constexpr uint64_t kOldDefaultAlignSectors = 128;
constexpr uint64_t kDefaultAlignSectors = 2048;

const ToolVersion kOneMiBDefaultSince{2, 2, 73, 3};
const ToolVersion kFirstPeAtOneMiBSince{2, 3, 3, 3};
const ToolVersion kIgnoresNon4kSince{2, 3, 31, 3};

// dev-type.c _dev_topology_attribute(): bytes >> 9, and 1 for a value below one sector.
uint64_t SysfsSectors(uint64_t bytes) {
  return bytes != 0 && bytes < kPvSector ? 1 : bytes / kPvSector;
}

}  // namespace

uint64_t PartitionAlignmentOffset(const Topology& t, uint64_t start_bytes) {
  const uint64_t granularity = std::max(t.physical_sector_size, t.minimum_io_size);
  if (granularity == 0) return 0;
  const uint64_t phase = start_bytes % granularity;
  return (granularity + t.alignment_offset % granularity - phase) % granularity;
}

PvcreatePrediction PredictPvcreate(const Topology& t, const ToolVersion& version,
                                   const PvcreateOptions& options) {
  PvcreatePrediction p;
  p.version = version;
  Result<ToolEra> era = EraOf(StackTool::kLvm2, version);
  if (!era) {
    p.error = era.error().message;
    return p;
  }
  p.era = std::string(era->name);
  const bool old_default = version < kOneMiBDefaultSince;
  const bool ignores_non_4k = version >= kIgnoresNon4kSince;
  uint64_t min_io = SysfsSectors(t.minimum_io_size);
  uint64_t opt_io = SysfsSectors(t.optimal_io_size);
  if (ignores_non_4k) {
    for (uint64_t* v : {&min_io, &opt_io}) {
      if (*v > 1 && (*v & 3) != 0) {
        p.reasons.push_back(fmt::format(
            "lvm2 {} ignores the I/O size {} (not a multiple of 4 sectors) and uses 8 sectors",
            VersionText(StackTool::kLvm2, version), *v * kPvSector));
        *v = 8;
      }
    }
  }
  uint64_t align = 0;  // sectors
  if (options.data_alignment_bytes) {
    align = SysfsSectors(*options.data_alignment_bytes);
    p.key_reason = fmt::format("--dataalignment {} sets the alignment", align * kPvSector);
    p.reasons.push_back(p.key_reason);
  } else if (old_default) {
    align = std::max({kOldDefaultAlignSectors, min_io, opt_io});
    p.key_reason = fmt::format(
        "lvm2 before 2.02.73 aligns to the largest of 64 KiB, the minimum I/O size {} and the "
        "optimal I/O size {}: {} bytes",
        t.minimum_io_size, t.optimal_io_size, align * kPvSector);
    p.reasons.push_back(p.key_reason);
  } else {
    align = kDefaultAlignSectors;
    p.key_reason = "the data area is aligned to 1 MiB (default_data_alignment)";
    p.reasons.push_back(p.key_reason);
    const bool compare_with_current = version >= kFirstPeAtOneMiBSince;
    for (auto [what, value] :
         {std::pair{"minimum I/O size", min_io}, std::pair{"optimal I/O size", opt_io}}) {
      const uint64_t against = compare_with_current ? align : kDefaultAlignSectors;
      if (value == 0 || against % value == 0) continue;
      align = value;
      p.key_reason = fmt::format(
          "the {} {} bytes does not divide {} bytes, so it replaces the alignment, as it is "
          "(data_alignment_detection; no sanity check)",
          what, value * kPvSector, against * kPvSector);
      p.reasons.push_back(p.key_reason);
    }
  }
  p.alignment_bytes = align * kPvSector;
  uint64_t offset = 0;  // sectors
  if (options.data_alignment_offset_bytes) {
    offset = SysfsSectors(*options.data_alignment_offset_bytes);
    p.reasons.push_back(fmt::format("--dataalignmentoffset {} is added", offset * kPvSector));
  } else if (t.alignment_offset != 0) {
    offset = SysfsSectors(t.alignment_offset);
    p.reasons.push_back(
        fmt::format("the device's alignment offset {} is added "
                    "(data_alignment_offset_detection)",
                    offset * kPvSector));
  }
  p.alignment_offset_bytes = offset * kPvSector;
  if (align < offset) {
    p.error = fmt::format(
        "pe_align ({} sectors) must not be less than pe_align_offset ({} sectors)", align, offset);
    return p;
  }
  const uint64_t metadata = version < kFirstPeAtOneMiBSince ? kOldMetadataBytes : kMetadataBytes;
  uint64_t end = kMdaStart + metadata;
  const uint64_t rounded = AlignUp(end, p.alignment_bytes);
  p.reasons.push_back(fmt::format(
      "the first metadata area ({} bytes from byte {}) ends at {}; rounded up to the alignment "
      "{}: {}",
      metadata, kMdaStart, end, p.alignment_bytes, rounded));
  end = rounded;
  if (p.alignment_offset_bytes != 0) end += p.alignment_offset_bytes;
  // Devices barely larger than the metadata area make lvm2 shrink or refuse it; partalign does
  // not model that and says so.
  if (t.size_bytes != 0 && end >= t.size_bytes) {
    p.error =
        fmt::format("the device ({} bytes) is too small for a data area at {}", t.size_bytes, end);
    return p;
  }
  p.pe_start_bytes = end;
  p.reasons.push_back(fmt::format("pe_start = {} bytes", end));
  return p;
}

}  // namespace partalign
