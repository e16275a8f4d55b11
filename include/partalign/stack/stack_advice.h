// SPDX-License-Identifier: GPL-3.0-or-later
// What `plan` says about the layers inside a partition: a misaligned layer is either fixed by
// the plan's move of the partition (its data offset inside the partition is a multiple of what
// alignment needs, so an aligned start fixes it too), or cannot be fixed by any partition start
// - its own offset is off - and then the advice names the command that would fix it inside the
// layer (a new PV with `pvcreate --dataalignment`, `cryptsetup reencrypt` to a new offset,
// `mdadm --grow --data-offset`). Layers above a misaligned one inherit its offset and get no
// advice of their own. Filesystem stripe geometry that does not match the layer below gets the
// tune2fs/mkfs.xfs line (informational).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partalign/stack/stack_layer.h"
#include "partalign/topology/topology.h"

namespace partalign {

struct StackAdvice {
  uint32_t partition = 0;  ///< 0 for a whole-disk stack
  std::string layer;       ///< the layer's name
  /// The plan's new partition start puts this layer's data on an aligned offset.
  bool fixed_by_plan = false;
  /// Not about alignment: the filesystem's stripe geometry (the command tunes it).
  bool informational = false;
  std::string text;     ///< what is wrong and why moving the partition does (not) help
  std::string command;  ///< what would fix it inside the layer; empty when fixed_by_plan
};

/// Advice for the checked `walk` of partition `partition` that starts at `start_bytes` and
/// that the plan moves to `new_start_bytes` (nullopt: it does not move). `grain_bytes` is the
/// plan's alignment grain, used for the commands' alignment.
std::vector<StackAdvice> AdviseStack(const StackWalk& walk, const Topology& topology,
                                     uint32_t partition, uint64_t start_bytes,
                                     std::optional<uint64_t> new_start_bytes, uint64_t grain_bytes);

/// "partition 1: LVM2 PV (VG vg0): ... fix: pvcreate --dataalignment 1m ..." lines.
std::vector<std::string> StackAdviceLines(const std::vector<StackAdvice>& advice);

}  // namespace partalign
