// SPDX-License-Identifier: GPL-3.0-or-later
// Where `pvcreate` puts a physical volume's data area (pe_start) on a device with a given
// topology, per lvm2 era: the alignment (1 MiB, or the minimum/optimal I/O size that replaces
// it, or --dataalignment), the metadata area before it, and the alignment offset added after
// it. Restated from lvm2 lib/metadata/metadata.c set_pe_align()/set_pe_align_offset(),
// lib/format_text/format-text.c (_text_pv_initialise, the first metadata area's end rounded up
// to the alignment) and lib/device/dev-type.c (sysfs values in 512-byte sectors); no upstream
// code is copied. Checked against the real pvcreate under the topology shim
// (tests/cli/commands/explain_stack_test.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partalign/tools/tool_version.h"
#include "partalign/topology/topology.h"

namespace partalign {

struct PvcreateOptions {
  /// --dataalignment, in bytes (lvm2 takes it in 512-byte sectors: a multiple of 512).
  std::optional<uint64_t> data_alignment_bytes;
  /// --dataalignmentoffset, in bytes.
  std::optional<uint64_t> data_alignment_offset_bytes;
};

struct PvcreatePrediction {
  ToolVersion version;
  std::string era;
  /// pe_align: the unit the data area is aligned to.
  uint64_t alignment_bytes = 0;
  /// pe_align_offset: added after the aligned end of the metadata area.
  uint64_t alignment_offset_bytes = 0;
  /// Where the data area (the first extent) starts, from the start of the PV's device.
  uint64_t pe_start_bytes = 0;
  /// Non-empty when pvcreate refuses (the alignment offset exceeds the alignment, the device
  /// is too small); pe_start_bytes is then 0.
  std::string error;
  std::vector<std::string> reasons;
  /// The sentence that decides pe_start.
  std::string key_reason;
};

/// pvcreate of lvm2 `version` on a device reporting `topology`'s minimum I/O, optimal I/O and
/// alignment offset (for a partition: the partition's own alignment offset, see
/// PartitionAlignmentOffset), with lvm.conf's defaults (data_alignment_detection,
/// data_alignment_offset_detection and default_data_alignment on) and 4 KiB pages. The version
/// must lie in a modelled era (EraOf(StackTool::kLvm2)); an older one gives `error`.
PvcreatePrediction PredictPvcreate(const Topology& topology, const ToolVersion& version,
                                   const PvcreateOptions& options = {});

/// The alignment offset the kernel reports for a partition starting at `start_bytes` of a disk
/// with `topology` (queue_limit_alignment_offset() in block/blk-settings.c): where the next
/// physical (or minimum I/O) boundary lies, seen from the partition's start. What pvcreate and
/// cryptsetup read for a partition.
uint64_t PartitionAlignmentOffset(const Topology& topology, uint64_t start_bytes);

}  // namespace partalign
