// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/move/move_destination.h"

#include <fmt/format.h>

#include "partalign/util/byte_extent.h"

namespace partalign {

std::vector<std::string> DestinationOverlaps(const PartitionTable& table,
                                             const MoveGeometry& move) {
  std::vector<std::string> found;
  const ByteExtent source{move.source_bytes, move.length_bytes};
  const ByteExtent dest{move.dest_bytes, move.length_bytes};
  for (const TableArea& area : table.areas) {
    const ByteExtent at{area.offset_bytes, area.size_bytes};
    if (Overlaps(dest, at)) {
      found.push_back(
          fmt::format("the {} (bytes {}-{})", area.name, at.offset_bytes, at.end() - 1));
    }
  }
  for (const Partition& p : table.partitions) {
    if (p.kind == PartitionKind::kExtended) continue;
    const ByteExtent at{p.start_sector * table.sector_size, p.size_sectors * table.sector_size};
    if (!Overlaps(dest, at) || Overlaps(source, at)) continue;
    found.push_back(
        fmt::format("partition {} (bytes {}-{}, {})", p.number, at.offset_bytes, at.end() - 1,
                    p.contents.fs_type.empty() ? MayHoldDataText(p.contents) : p.contents.fs_type));
  }
  return found;
}

}  // namespace partalign
