// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/device/device_probe.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "io/device/blkid_probe.h"
#include "io/device/sysfs_identity.h"
#include "io/device/target.h"
#include "partalign/table/table_sector_size.h"

namespace partalign {
namespace {

LabelType LabelFromBlkid(const std::string& name) {
  if (name.empty()) return LabelType::kNone;
  if (name == "gpt" || name == "PMBR") return LabelType::kGpt;
  if (name == "dos") return LabelType::kDos;
  return LabelType::kOther;
}

Result<TableInfo> ProbeTable(const Target& target, uint64_t sector_size) {
  TableInfo table;
  Result<std::string> type = ProbeBlkidTableType(target.fd.get(), target.path, sector_size);
  if (!type) return type.error();
  table.label_name = *type;
  table.label = LabelFromBlkid(*type);

  std::vector<uint8_t> head(std::min<uint64_t>(kTableHeadBytes, target.size_bytes));
  Result<size_t> got = ReadAt(target.fd.get(), head.data(), head.size(), 0, target.path);
  if (!got) return got.error();
  head.resize(*got);
  TableSectorSizeGuess guess = GuessTableSectorSize(head, sector_size, target.size_bytes);
  // libblkid finds no table when a GPT was written for another sector size; the bytes do.
  if (table.label == LabelType::kNone || table.label == guess.label) {
    if (table.label == LabelType::kNone) table.label = guess.label;
    table.written_for_sector_size = guess.sector_size;
    table.written_for_reason = guess.reason;
  }
  return table;
}

}  // namespace

Result<DeviceInfo> ProbeTarget(const std::string& path, const ProbeOptions& options) {
  Result<Target> target = OpenTarget(path);
  if (!target) return target.error();
  // A command's first read of the disk: nothing cached before it is taken for the disk's bytes.
  DropCachedPages(*target);

  DeviceInfo info;
  info.identity.path = path;
  info.topology = DefaultTopology(target->logical_sector_size, target->size_bytes);
  if (target->kind == TargetKind::kBlockDevice) {
    Result<std::optional<BlkidTopology>> tp = ProbeBlkidTopology(target->fd.get(), path);
    if (!tp) return tp.error();
    if (tp->has_value()) {
      const BlkidTopology& b = **tp;
      Topology& t = info.topology;
      t.physical_sector_size =
          b.physical_sector_size ? b.physical_sector_size : target->logical_sector_size;
      t.minimum_io_size = b.minimum_io_size;
      t.optimal_io_size = b.optimal_io_size;
      t.alignment_offset = b.alignment_offset;
      t.origin = TopologyOrigin::kKernel;
    }
    Result<Identity> id = ReadSysfsIdentity(options.sysfs_root, target->major, target->minor);
    if (!id) return id.error();
    info.identity = std::move(*id);
    info.identity.path = path;
  } else {
    info.identity.transport = Transport::kFile;
  }

  // Too small for one sector of the size it is read with: said before the override is checked,
  // which would otherwise call a 4095-byte image read with 4096-byte sectors "impossible".
  const uint64_t size = options.assume.size_bytes.value_or(info.topology.size_bytes);
  const uint64_t sector =
      options.assume.logical_sector_size.value_or(info.topology.logical_sector_size);
  if (size < sector) {
    return MakeError(fmt::format(
        "'{}' is too small for a partition table: {} bytes, less than one {}-byte sector", path,
        size, sector));
  }
  Result<Topology> topology = ApplyOverride(info.topology, options.assume);
  if (!topology) return MakeError(fmt::format("'{}': {}", path, topology.error().message));
  info.topology = *topology;

  Result<TableInfo> table = ProbeTable(*target, info.topology.logical_sector_size);
  if (!table) return table.error();
  info.table = std::move(*table);
  return info;
}

}  // namespace partalign
