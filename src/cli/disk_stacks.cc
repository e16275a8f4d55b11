#include "cli/disk_stacks.h"

#include <algorithm>

#include "io/device/target.h"
#include "io/stack/stack_walker.h"
#include "io/tools/stack_tool_versions.h"

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

}  // namespace partalign
