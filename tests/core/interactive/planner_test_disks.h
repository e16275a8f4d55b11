// SPDX-License-Identifier: GPL-3.0-or-later
// Disks for the interactive planner's unit tests: an empty image and one whose table is
// misaligned, as plain values (what the CLI probes and reads).
#pragma once

#include <cstdint>

#include "partalign/interactive/planner_model.h"
#include "support/test_topology.h"

namespace partalign::test {

inline constexpr uint64_t kPlannerDiskBytes = 2ull << 30;

/// An empty 2 GiB image file (no table).
inline PlannerDisk EmptyDisk(uint64_t bytes = kPlannerDiskBytes) {
  PlannerDisk d;
  d.device.identity.path = "disk.img";
  d.device.topology = MakeTopology(512, 512, 512, 0, 0, TopologyOrigin::kDefault, bytes);
  d.table.sector_size = 512;
  d.table.disk_size_sectors = bytes / 512;
  d.table.fingerprint = "xxh64:0000000000000000";
  return d;
}

/// A GPT of three partitions at 63-sector-era starts; partition 2 holds 100 MiB of ext4.
inline PlannerDisk MisalignedDisk() {
  PlannerDisk d = EmptyDisk();
  PartitionTable& t = d.table;
  t.label = LabelType::kGpt;
  t.first_usable_lba = 34;
  t.last_usable_lba = kPlannerDiskBytes / 512 - 34;
  auto add = [&](uint32_t n, uint64_t start, uint64_t sectors, bool data) {
    Partition p;
    p.number = n;
    p.start_sector = start;
    p.size_sectors = sectors;
    p.type_code = "0FC63DAF-8483-4772-8E79-3D69D8477DE4";
    p.contents.proof = ContentProof::kZeros;  // read in full: empty
    if (data) {
      p.contents.proof = ContentProof::kSignature;
      p.contents.fs_type = "ext4";
      p.contents.fs_size_bytes = 100ull << 20;
    }
    t.partitions.push_back(p);
  };
  add(1, 63, 204800, false);
  add(2, 204863, 409600, true);
  add(3, 614463, 409600, false);
  return d;
}

/// The most common legacy layout (issue #30): a 128 MiB DOS disk, partition 1 at 63-100062
/// and partition 2 at 100100-180099, both ext4 filling them. `partalign plan` moves them to
/// 2048 and 102400.
inline PlannerDisk LegacyDosDisk(ContentProof proof = ContentProof::kSignature) {
  PlannerDisk d = EmptyDisk(128ull << 20);
  PartitionTable& t = d.table;
  t.label = LabelType::kDos;
  t.first_usable_lba = 1;
  t.last_usable_lba = (128ull << 20) / 512 - 1;
  t.disk_id = "0x1234abcd";
  auto add = [&](uint32_t n, uint64_t start, uint64_t sectors) {
    Partition p;
    p.number = n;
    p.start_sector = start;
    p.size_sectors = sectors;
    p.type_code = "0x83";
    p.contents.proof = proof;
    if (proof == ContentProof::kSignature) {
      p.contents.fs_type = "ext4";
      p.contents.fs_size_bytes = sectors * 512;
    }
    t.partitions.push_back(p);
  };
  add(1, 63, 100000);
  add(2, 100100, 80000);
  return d;
}

}  // namespace partalign::test
