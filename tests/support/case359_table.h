// SPDX-License-Identifier: GPL-3.0-or-later
// The table of the apply sweep's seed 45, case 359 as partalign reads it (for pure tests): a
// full GPT disk that plan --make-room aligns with two shrinks, a swap and then an ext4.
#pragma once

#include <optional>
#include <vector>

#include "partalign/layout/partition_table.h"
#include "partalign/layout/way_through.h"
#include "partalign/util/units.h"

namespace partalign::test {

// Seed 45, case 359 of the apply sweep: a GPT disk filled to its last usable sector, whose swap
// (4.12 MiB, keeps 1 MiB) and an ext4 (20.73 MiB, keeps 18.92 MiB) can give room; xfs, btrfs,
// exFAT and raw data cannot. plan --make-room took the swap shrunk by 3 whole MiB (to 1.12 MiB,
// which still takes 2 MiB once aligned) and nothing else: partitions 1, 9, 10 and 11 stayed
// impossible, and each plan + apply after it found more room (5 rounds in all).
inline PartitionTable Case359() {
  PartitionTable t;
  t.fingerprint = "xxh64:0000000000000359";
  t.label = LabelType::kGpt;
  t.sector_size = 512;
  t.disk_size_sectors = 451488;  // 220.45 MiB; the GPT's backup takes the last 33 sectors
  t.last_usable_lba = t.disk_size_sectors - 34;
  t.first_usable_lba = 34;
  struct Spec {
    uint64_t start, size;
    const char* fs;
    std::optional<uint64_t> fs_bytes, data_at;
  };
  const std::vector<Spec> specs = {
      {34, 51144, "", std::nullopt, 2010756},      {51178, 38560, "btrfs", std::nullopt, {}},
      {89738, 26287, "ext4", 26287 * 512ull, {}},  {116025, 61918, "", std::nullopt, 11963937},
      {177943, 47074, "", std::nullopt, 1048576},  {225017, 26168, "", std::nullopt, 13397504},
      {251185, 8432, "swap", 8432 * 512ull, {}},   {259617, 12616, "exfat", std::nullopt, {}},
      {272233, 78365, "xfs", 78360 * 512ull, {}},  {350598, 42448, "ext4", 42448 * 512ull, {}},
      {393046, 58408, "", std::nullopt, 13674298},
  };
  uint32_t number = 0;
  for (const Spec& s : specs) {
    Partition p;
    p.number = ++number;
    p.start_sector = s.start;
    p.size_sectors = s.size;
    p.type_code = "0FC63DAF-8483-4772-8E79-3D69D8477DE4";
    p.contents.fs_type = s.fs;
    p.contents.fs_size_bytes = s.fs_bytes;
    p.contents.proof = s.fs[0] != '\0' ? ContentProof::kSignature : ContentProof::kData;
    p.contents.data_offset_bytes = s.data_at;
    t.partitions.push_back(p);
  }
  return t;
}

// What ReadShrinkLimit said of it: the used bytes and 16 MiB for the tool.
inline std::vector<ShrinkOffer> Case359Offers(const PartitionTable& t) {
  std::vector<ShrinkOffer> offers;
  for (const Partition& p : t.partitions) {
    const ShrinkWay way = ShrinkWayFor(p.contents.fs_type);
    const uint64_t used = p.contents.fs_type == "swap" ? 64 * kKiB : 3061760;
    const uint64_t min = p.contents.fs_type == "swap" ? kMiB : used + 16 * kMiB;
    offers.push_back({p.number, way.tool, way.reason, min, used});
  }
  return offers;
}

}  // namespace partalign::test
