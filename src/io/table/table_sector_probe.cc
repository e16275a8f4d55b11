// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/table/table_sector_probe.h"

#include <fmt/format.h>

#include "io/table/fdisk_table.h"

namespace partalign {
namespace {

// The sector sizes a DOS table is tried with: those of real disks and of loop devices.
constexpr uint64_t kCandidateSectorSizes[] = {512, 1024, 2048, 4096};

// What the DOS table of `path` read with `sector_size`-byte sectors points at; nullopt when
// libfdisk or libblkid cannot read it that way (partitions past the end of the disk).
std::optional<SectorSizeEvidence> Evidence(const std::string& path, uint64_t sector_size,
                                           uint64_t disk_bytes) {
  Result<TableRead> read =
      ReadPartitionTable(path, {.sector_size = sector_size, .probe_contents = true});
  if (!read || read->table.label != LabelType::kDos) return std::nullopt;
  SectorSizeEvidence e{sector_size, 0, 0};
  for (const Partition& p : read->table.partitions) {
    if (p.kind == PartitionKind::kExtended) continue;
    if ((p.start_sector + p.size_sectors) * sector_size > disk_bytes) return std::nullopt;
    ++e.partitions;
    if (!p.contents.fs_type.empty()) ++e.signatures;
  }
  return e;
}

}  // namespace

Result<TableSectorSizeGuess> DetectTableSectorSize(const std::string& path,
                                                   const DeviceInfo& device) {
  TableSectorSizeGuess guess{device.table.label, device.table.written_for_sector_size,
                             device.table.written_for_reason};
  if (device.table.label != LabelType::kDos) return guess;
  const uint64_t current = guess.sector_size.value_or(device.topology.logical_sector_size);
  std::vector<SectorSizeEvidence> evidence;
  for (uint64_t size : kCandidateSectorSizes) {
    if (std::optional<SectorSizeEvidence> e = Evidence(path, size, device.topology.size_bytes)) {
      evidence.push_back(*e);
    }
  }
  std::optional<uint64_t> better = SectorSizeFromContents(evidence, current);
  if (!better) return guess;
  size_t found = 0;
  size_t at_current = 0;
  size_t total = 0;
  for (const SectorSizeEvidence& e : evidence) {
    if (e.sector_size == *better) {
      found = e.signatures;
      total = e.partitions;
    }
    if (e.sector_size == current) at_current = e.signatures;
  }
  guess.sector_size = *better;
  guess.reason = fmt::format(
      "the DOS entries fit the disk at several sector sizes, but filesystems start at {} of {} "
      "partitions with {}-byte sectors and at {} with {}-byte sectors",
      found, total, *better, at_current, current);
  return guess;
}

}  // namespace partalign
