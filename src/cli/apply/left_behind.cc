// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/apply/left_behind.h"

#include <functional>
#include <optional>
#include <ostream>

#include <fmt/format.h>

#include "io/device/zero_scan.h"
#include "partalign/util/units.h"

namespace partalign {

void PrintLeftBehind(std::ostream& out, const PartitionTable& table,
                     const LeftBehind& left_behind) {
  if (left_behind.to_prove.empty() && left_behind.discarded.empty() && left_behind.tails.empty()) {
    return;
  }
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
  const uint64_t ss = table.sector_size;
  for (const TailProof& tail : left_behind.tails) {
    const Partition* p = table.Find(tail.partition);
    if (p == nullptr || tail.from_bytes >= p->size_sectors * ss) continue;
    out << fmt::format(
        "  partition {}: its last {} sectors (sectors {}-{}, {}), past its new end: read: zeros "
        "(read again once the disk is held)\n",
        tail.partition, p->size_sectors - tail.from_bytes / ss,
        p->start_sector + tail.from_bytes / ss, p->end_sector(),
        FormatSize(p->size_sectors * ss - tail.from_bytes));
  }
}

namespace {

// Reads [offset, offset + length) of the held disk `fd` again: true when every byte is still
// zero; otherwise prints why not (`changed` says it of the first byte that is not zero, counted
// from `offset`) or the read's error, and false.
bool StillZeros(Streams io, const std::string& path, int fd, uint64_t offset, uint64_t length,
                const std::function<std::string(uint64_t)>& changed) {
  Result<std::optional<uint64_t>> found = FindFirstNonZero(fd, path, offset, length);
  if (!found) {
    PrintError(io.err, found.error().message + "; nothing was written");
    return false;
  }
  if (!*found) return true;
  PrintError(io.err,
             changed(**found) + ": something wrote to it; nothing was written (make a new plan)");
  return false;
}

}  // namespace

bool StillEmpty(Streams io, const std::string& path, const PartitionTable& table,
                const LeftBehind& left_behind, int fd) {
  const uint64_t ss = table.sector_size;
  for (uint32_t number : left_behind.to_prove) {
    const Partition* p = table.Find(number);
    if (p == nullptr || p->contents.MayHoldData()) continue;  // a filesystem shrunk: kept
    const uint64_t offset = p->start_sector * ss;
    const uint64_t length = p->size_sectors * ss;
    if (p->contents.proof == ContentProof::kHoles && IsAllHoles(fd, offset, length)) continue;
    if (!StillZeros(io, path, fd, offset, length, [&](uint64_t at) {
          return fmt::format(
              "partition {} of '{}' was proven empty, but byte {} of it is not "
              "zero now",
              number, path, at);
        })) {
      return false;
    }
  }
  // The ends partitions give up: still zeros (nothing may have written there since).
  for (const TailProof& tail : left_behind.tails) {
    const Partition* p = table.Find(tail.partition);
    if (p == nullptr || tail.from_bytes >= p->size_sectors * ss) continue;
    if (!StillZeros(io, path, fd, p->start_sector * ss + tail.from_bytes,
                    p->size_sectors * ss - tail.from_bytes, [&](uint64_t at) {
                      return fmt::format(
                          "partition {} of '{}' gives up its last {} sectors, which were proven "
                          "zero, but byte {} of it is not zero now",
                          tail.partition, path, p->size_sectors - tail.from_bytes / ss,
                          tail.from_bytes + at);
                    })) {
      return false;
    }
  }
  return true;
}

}  // namespace partalign
