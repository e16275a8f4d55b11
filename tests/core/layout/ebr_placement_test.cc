// SPDX-License-Identifier: GPL-3.0-or-later
// Where libfdisk 2.38 puts the EBRs of a table it writes (dos.c add_partition()), and the node
// the kernel and partx give an extended partition (msdos.c msdos_partition(), partx.c
// add_parts()). The sweep checks the model against the real libfdisk on every table it writes
// (tests/tools/apply_invariant_sweep.cc); these cases pin each rule.
#include "partalign/layout/ebr_placement.h"

#include <gtest/gtest.h>

namespace partalign {
namespace {

PartitionTable Dos(std::vector<Partition> parts, uint64_t ss = 512) {
  PartitionTable t;
  t.label = LabelType::kDos;
  t.sector_size = ss;
  t.disk_size_sectors = 1 << 24;
  t.first_usable_lba = 2048;
  t.last_usable_lba = t.disk_size_sectors - 1;
  t.partitions = std::move(parts);
  return t;
}

Partition Part(uint32_t number, PartitionKind kind, uint64_t start, uint64_t size) {
  Partition p;
  p.number = number;
  p.kind = kind;
  p.start_sector = start;
  p.size_sectors = size;
  return p;
}

TEST(EbrPlacementTest, ExtendedNodeIsOneKibibyteOrOneSector) {
  EXPECT_EQ(ExtendedNodeSectors(512), 2u);
  EXPECT_EQ(ExtendedNodeSectors(1024), 1u);
  EXPECT_EQ(ExtendedNodeSectors(4096), 1u);
}

TEST(EbrPlacementTest, FirstLbaKeptWhenNothingStartsCloser) {
  // fdisk's own layout: everything on the grain, the first logical partition one grain after
  // its EBR: libfdisk keeps 2048 sectors before every other logical partition.
  PartitionTable t = Dos({Part(1, PartitionKind::kPrimary, 2048, 2048),
                          Part(2, PartitionKind::kExtended, 4096, 100000),
                          Part(5, PartitionKind::kLogical, 6144, 10240),
                          Part(6, PartitionKind::kLogical, 18432, 10240)});
  EXPECT_EQ(EffectiveFirstLba(t, 2048), 2048u);
  std::map<uint32_t, uint64_t> ebrs = PredictEbrSectors(t, 2048);
  EXPECT_EQ(ebrs.at(5), 4096u);           // the head, at the extended partition's start
  EXPECT_EQ(ebrs.at(6), 18432u - 2048u);  // first_lba before its partition
}

TEST(EbrPlacementTest, FirstLbaDropsToOneForAPrimaryBelowIt) {
  PartitionTable t = Dos({Part(1, PartitionKind::kPrimary, 63, 2048),
                          Part(2, PartitionKind::kExtended, 4096, 100000),
                          Part(5, PartitionKind::kLogical, 6144, 10240),
                          Part(6, PartitionKind::kLogical, 18432, 10240)});
  EXPECT_EQ(EffectiveFirstLba(t, 2048), 1u);
  EXPECT_EQ(PredictEbrSectors(t, 2048).at(6), 18431u);
}

TEST(EbrPlacementTest, FirstLbaDropsToOneForAFirstLogicalCloseToItsEbr) {
  // The XP layout: every logical partition 63 sectors after its EBR.
  PartitionTable t = Dos({Part(1, PartitionKind::kPrimary, 2048, 2048),
                          Part(2, PartitionKind::kExtended, 16065, 160650),
                          Part(5, PartitionKind::kLogical, 16128, 16002),
                          Part(6, PartitionKind::kLogical, 32193, 16002)});
  EXPECT_EQ(EffectiveFirstLba(t, 2048), 1u);
  std::map<uint32_t, uint64_t> ebrs = PredictEbrSectors(t, 2048);
  EXPECT_EQ(ebrs.at(5), 16065u);
  // libfdisk does not keep XP's EBR on the cylinder: it rebuilds it right before the partition.
  EXPECT_EQ(ebrs.at(6), 32192u);
}

TEST(EbrPlacementTest, NoLogicalPartitionsNoEbrs) {
  PartitionTable t = Dos({Part(1, PartitionKind::kPrimary, 2048, 2048)});
  EXPECT_TRUE(PredictEbrSectors(t, 2048).empty());
}

}  // namespace
}  // namespace partalign
