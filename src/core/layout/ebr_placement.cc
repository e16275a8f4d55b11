// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/layout/ebr_placement.h"

#include <algorithm>
#include <vector>

namespace partalign {
namespace {

// The kernel's node for an extended partition: max(2 512-byte sectors, one logical sector).
constexpr uint64_t kExtendedNodeBytes = 1024;

std::vector<const Partition*> InNumberOrder(const PartitionTable& table, PartitionKind kind) {
  std::vector<const Partition*> out;
  for (const Partition& p : table.partitions) {
    if (p.kind == kind) out.push_back(&p);
  }
  std::sort(out.begin(), out.end(),
            [](const Partition* a, const Partition* b) { return a->number < b->number; });
  return out;
}

const Partition* Extended(const PartitionTable& table) {
  for (const Partition& p : table.partitions) {
    if (p.kind == PartitionKind::kExtended) return &p;
  }
  return nullptr;
}

}  // namespace

uint64_t ExtendedNodeSectors(uint64_t sector_size) {
  if (sector_size == 0) return 1;
  return std::max<uint64_t>(1, (kExtendedNodeBytes + sector_size - 1) / sector_size);
}

uint64_t EffectiveFirstLba(const PartitionTable& table, uint64_t first_lba) {
  uint64_t f = std::max<uint64_t>(first_lba, 1);
  for (const Partition& p : table.partitions) {
    if (p.kind != PartitionKind::kLogical && p.start_sector >= 1 && p.start_sector < f) f = 1;
  }
  const Partition* ext = Extended(table);
  const std::vector<const Partition*> logicals = InNumberOrder(table, PartitionKind::kLogical);
  if (ext != nullptr && !logicals.empty()) {
    const uint64_t s = logicals.front()->start_sector;
    if (s >= ext->start_sector && s - ext->start_sector < f) f = 1;
  }
  return f;
}

std::map<uint32_t, uint64_t> PredictEbrSectors(const PartitionTable& table, uint64_t first_lba) {
  std::map<uint32_t, uint64_t> out;
  const Partition* ext = Extended(table);
  const std::vector<const Partition*> logicals = InNumberOrder(table, PartitionKind::kLogical);
  if (ext == nullptr || logicals.empty()) return out;
  const uint64_t f = EffectiveFirstLba(table, first_lba);
  out[logicals.front()->number] = ext->start_sector;
  for (size_t i = 1; i < logicals.size(); ++i) {
    const uint64_t start = logicals[i]->start_sector;
    uint64_t ebr = start >= f ? start - f : 0;
    if (ebr == ext->start_sector) ++ebr;  // dos.c: "must be corrected"
    out[logicals[i]->number] = ebr;
  }
  return out;
}

std::map<uint32_t, uint64_t> TableEbrSectors(const PartitionTable& table) {
  std::map<uint32_t, uint64_t> out;
  if (table.label != LabelType::kDos) return out;
  const std::vector<const Partition*> logicals = InNumberOrder(table, PartitionKind::kLogical);
  size_t k = 0;
  for (const TableArea& a : table.areas) {
    if (a.name == "EBR" && k < logicals.size() && table.sector_size != 0) {
      out[logicals[k++]->number] = a.offset_bytes / table.sector_size;
    }
  }
  if (out.size() < logicals.size()) return PredictEbrSectors(table, table.first_usable_lba);
  return out;
}

}  // namespace partalign
