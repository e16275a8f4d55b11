// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/apply/left_behind.h"

#include <optional>
#include <ostream>

#include <fmt/format.h>

#include "io/device/zero_scan.h"
#include "partalign/util/units.h"

namespace partalign {

void PrintLeftBehind(std::ostream& out, const PartitionTable& table,
                     const LeftBehind& left_behind) {
  if (left_behind.to_prove.empty() && left_behind.discarded.empty()) return;
  out << "\nLeft behind (the table stops pointing at these bytes; nothing of them is copied):\n";
  for (uint32_t number : left_behind.to_prove) {
    const Partition* p = table.Find(number);
    if (p == nullptr) continue;
    const std::string size = FormatSize(p->size_sectors * table.sector_size);
    if (p->contents.proof == ContentProof::kZeros) {
      out << fmt::format("  partition {}: read all {}: zeros (read again once the disk is held)\n",
                         number, size);
    } else if (p->contents.proof == ContentProof::kHoles) {
      out << fmt::format("  partition {}: only holes in the image ({})\n", number, size);
    } else {
      out << fmt::format("  partition {}: {}; only what lies past the filesystem is cut off\n",
                         number, MayHoldDataText(p->contents));
    }
  }
  for (uint32_t number : left_behind.discarded) {
    const Partition* p = table.Find(number);
    if (p == nullptr) continue;
    out << fmt::format(
        "  partition {}: contents discarded (--discard): it {}; sectors {}-{} "
        "keep whatever they hold\n",
        number, MayHoldDataText(p->contents), p->start_sector, p->end_sector());
  }
}

bool StillEmpty(Streams io, const std::string& path, const PartitionTable& table,
                const LeftBehind& left_behind, int fd) {
  for (uint32_t number : left_behind.to_prove) {
    const Partition* p = table.Find(number);
    if (p == nullptr || p->contents.MayHoldData()) continue;  // a filesystem shrunk: kept
    const uint64_t offset = p->start_sector * table.sector_size;
    const uint64_t length = p->size_sectors * table.sector_size;
    if (p->contents.proof == ContentProof::kHoles && IsAllHoles(fd, offset, length)) continue;
    Result<std::optional<uint64_t>> found = FindFirstNonZero(fd, path, offset, length);
    if (!found) {
      PrintError(io.err, found.error().message + "; nothing was written");
      return false;
    }
    if (*found) {
      PrintError(io.err, fmt::format("partition {} of '{}' was proven empty, but byte {} of it is "
                                     "not zero now: something wrote to it; nothing was written "
                                     "(make a new plan)",
                                     number, path, **found));
      return false;
    }
  }
  return true;
}

}  // namespace partalign
