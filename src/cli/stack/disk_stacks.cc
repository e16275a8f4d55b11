// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/stack/disk_stacks.h"

#include <algorithm>

#include <fmt/format.h>

#include "io/device/target.h"
#include "io/stack/stack_walker.h"
#include "io/tools/stack_tool_versions.h"
#include "partalign/topology/alignment.h"

namespace partalign {
namespace {

bool HasPv(const StackWalk& walk) {
  return std::any_of(walk.layers.begin(), walk.layers.end(),
                     [](const StackLayer& l) { return l.kind == LayerKind::kLvmPv; });
}

}  // namespace

Result<DiskStacks> ReadDiskStacks(const LoadedDisk& disk, const std::string& path) {
  DiskStacks stacks;
  Result<Target> target = OpenTarget(path);
  if (!target) return target.error();
  const PartitionTable& table = disk.table.table;
  const uint64_t ss = table.sector_size;
  bool pv = false;
  for (const Partition& p : table.partitions) {
    if (p.kind == PartitionKind::kExtended || p.contents.fs_type.empty()) continue;
    StackWalk walk = WalkStack(target->fd.get(), path, p.start_sector * ss, p.size_sectors * ss,
                               p.contents.fs_type);
    pv = pv || HasPv(walk);
    stacks.partitions.emplace(p.number, std::move(walk));
  }
  if (table.label == LabelType::kNone) {
    stacks.whole_disk = WalkStack(target->fd.get(), path, 0, target->size_bytes, std::nullopt);
    pv = pv || HasPv(*stacks.whole_disk);
  }
  if (pv) stacks.lvm2_version = DetectStackToolVersions().lvm2.version;
  return stacks;
}

Result<AuditReport> AuditLoadedDisk(const LoadedDisk& disk, const std::string& path,
                                    std::optional<uint64_t> grain) {
  if (Status fits = CheckGrainFits(disk.device.topology, grain); !fits) {
    return MakeError(fmt::format("'{}': {}", path, fits.error().message));
  }
  Result<DiskStacks> stacks = ReadDiskStacks(disk, path);
  if (!stacks) return stacks.error();
  return AuditTable(disk.table.table, disk.device.topology,
                    {.grain_bytes = grain,
                     .stacks = std::move(stacks->partitions),
                     .whole_disk = std::move(stacks->whole_disk),
                     .lvm2_version = stacks->lvm2_version});
}

}  // namespace partalign
