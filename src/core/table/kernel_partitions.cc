// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/table/kernel_partitions.h"

#include <algorithm>

#include <fmt/format.h>

namespace partalign {
namespace {

// block/partitions/msdos.c, parse_extended() callers: an extended partition is registered with
// n = min(size, max(sector_size_in_512_units, 2)) 512-byte units: 1 KiB, or one logical
// sector when that is larger ("leave room for LILO").
constexpr uint64_t kExtendedPartitionMinBytes = 1024;

const KernelPartition* FindNumber(const std::vector<KernelPartition>& list, uint32_t number) {
  for (const KernelPartition& p : list) {
    if (p.number == number) return &p;
  }
  return nullptr;
}

}  // namespace

std::vector<KernelPartition> KernelPartitionsFor(const PartitionTable& table,
                                                 uint64_t device_sector_size) {
  // The kernel counts in the device's logical sectors: a table written for smaller ones (a
  // translate undone by restore) still gets an extended partition of one whole device sector.
  const uint64_t unit = std::max(table.sector_size, device_sector_size);
  std::vector<KernelPartition> out;
  for (const Partition& p : table.partitions) {
    KernelPartition k{p.number, p.start_sector * table.sector_size,
                      p.size_sectors * table.sector_size};
    if (p.kind == PartitionKind::kExtended) {
      k.size_bytes = std::min(k.size_bytes, std::max(unit, kExtendedPartitionMinBytes));
      // BLKPG refuses a partition that overlaps another (the kernel's own parser does not
      // check): a logical partition starting right after the head EBR, one sector into the
      // extended one, could not be added. The extended partition then gets only the sectors
      // before its first logical one, which still hold the head EBR.
      for (const Partition& l : table.partitions) {
        if (l.kind == PartitionKind::kLogical && l.start_sector > p.start_sector) {
          k.size_bytes =
              std::min(k.size_bytes, (l.start_sector - p.start_sector) * table.sector_size);
        }
      }
    }
    out.push_back(k);
  }
  std::sort(out.begin(), out.end(),
            [](const KernelPartition& a, const KernelPartition& b) { return a.number < b.number; });
  return out;
}

std::vector<KernelUpdate> KernelUpdates(const std::vector<KernelPartition>& current,
                                        const std::vector<KernelPartition>& wanted) {
  std::vector<KernelUpdate> deletes;
  std::vector<KernelUpdate> adds;
  for (const KernelPartition& c : current) {
    const KernelPartition* w = FindNumber(wanted, c.number);
    if (!w || !(*w == c)) deletes.push_back({KernelUpdate::Op::kDelete, c});
  }
  for (const KernelPartition& w : wanted) {
    const KernelPartition* c = FindNumber(current, w.number);
    if (!c || !(*c == w)) adds.push_back({KernelUpdate::Op::kAdd, w});
  }
  auto by_number = [](const KernelUpdate& a, const KernelUpdate& b) {
    return a.partition.number < b.partition.number;
  };
  std::sort(deletes.begin(), deletes.end(), by_number);
  std::sort(adds.begin(), adds.end(), by_number);
  deletes.insert(deletes.end(), adds.begin(), adds.end());
  return deletes;
}

std::string Describe(const KernelUpdate& u) {
  if (u.op == KernelUpdate::Op::kDelete) {
    return fmt::format("delete partition {}", u.partition.number);
  }
  return fmt::format("add partition {} at byte {}, {} bytes", u.partition.number,
                     u.partition.start_bytes, u.partition.size_bytes);
}

}  // namespace partalign
