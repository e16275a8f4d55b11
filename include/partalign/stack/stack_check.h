// SPDX-License-Identifier: GPL-3.0-or-later
// The alignment checks of every layer of a stack (docs/stack.md): its data offset on the disk
// against 4 KiB, the physical sector (after the alignment offset), the minimum and a sane
// optimal I/O size - these decide `aligned` - and, for information, the grain (1 MiB), the
// layer below (a stripe unit must not straddle the chunk or stripe under it), small stripes,
// a filesystem's stripe geometry against what lies under it, and what pvcreate would have
// chosen on this topology.
#pragma once

#include <cstdint>
#include <optional>

#include "partalign/stack/stack_layer.h"
#include "partalign/tools/tool_version.h"
#include "partalign/topology/topology.h"
#include "partalign/util/units.h"

namespace partalign {

/// Stripe units below this are flagged as a risk: lvm2's and mdadm's default stripe/chunk is
/// 64 KiB, and smaller units split ordinary I/O across devices (the 2016 case had 8 KiB).
inline constexpr uint64_t kSmallStripeBytes = 64 * kKiB;
/// The 4 KiB every layer should start on: the physical block of 512e disks, the page most
/// flash translation layers map, and what every current tool aligns to at least.
inline constexpr uint64_t kStackBlockBytes = 4 * kKiB;

struct StackCheckOptions {
  /// The informational grain (--grain, or 1 MiB).
  uint64_t grain_bytes = kDefaultGrainBytes;
  /// The lvm2 whose pvcreate a PV's pe_start is compared with (installed, or newest known).
  std::optional<ToolVersion> lvm2_version;
};

/// The unit a layer's data offset (minus the alignment offset) must be a multiple of to be
/// aligned: the least common multiple of 4 KiB, the physical sector, the minimum I/O size and a
/// sane optimal I/O size.
uint64_t StackRequiredUnit(const Topology& topology);

/// True when a layer whose data started at `data_offset_bytes` would pass the offset checks
/// that decide `aligned` (all but layer_below): (offset - alignment offset) is a multiple of
/// StackRequiredUnit.
bool StackOffsetAligned(const Topology& topology, uint64_t data_offset_bytes);

/// Fills every layer's checks, reasons and `aligned`. `container_start_bytes` is where the
/// partition holding the stack starts (0 for a whole disk).
void CheckStack(StackWalk* walk, const Topology& topology, uint64_t container_start_bytes,
                const StackCheckOptions& options = {});

}  // namespace partalign
