// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/table/kernel_partitions.h"

#include <gtest/gtest.h>

namespace partalign {
namespace {

PartitionTable Dos(uint64_t sector_size) {
  PartitionTable t;
  t.label = LabelType::kDos;
  t.sector_size = sector_size;
  Partition p1, p2, p5;
  p1.number = 1;
  p1.start_sector = 2048;
  p1.size_sectors = 1000;
  p2.number = 2;
  p2.kind = PartitionKind::kExtended;
  p2.start_sector = 30000;
  p2.size_sectors = 100000;
  p5.number = 5;
  p5.kind = PartitionKind::kLogical;
  p5.start_sector = 32768;
  p5.size_sectors = 500;
  t.partitions = {p5, p1, p2};
  return t;
}

TEST(KernelPartitionsTest, ExtendedPartitionsAreRegisteredAsTheKernelDoes) {
  EXPECT_EQ(KernelPartitionsFor(Dos(512)),
            (std::vector<KernelPartition>{
                {1, 2048 * 512, 1000 * 512}, {2, 30000 * 512, 1024}, {5, 32768 * 512, 500 * 512}}));
  // One logical sector on a 4Kn disk (block/partitions/msdos.c).
  EXPECT_EQ(KernelPartitionsFor(Dos(4096))[1], (KernelPartition{2, 30000ull * 4096, 4096}));
  // A table for 512-byte sectors on a 4096-byte device (a translate undone by restore): the
  // kernel's unit is the device's sector; 1 KiB would be refused by BLKPG.
  EXPECT_EQ(KernelPartitionsFor(Dos(512), 4096)[1], (KernelPartition{2, 30000 * 512, 4096}));
  EXPECT_EQ(KernelPartitionsFor(Dos(512), 512)[1], (KernelPartition{2, 30000 * 512, 1024}));
}

TEST(KernelPartitionsTest, ExtendedPartitionStopsWhereItsFirstLogicalOneStarts) {
  // The head EBR at the extended partition's first sector, partition 5 at the next: 1 KiB
  // would overlap partition 5, and BLKPG would refuse to add it (partx -a fails the same way).
  PartitionTable t = Dos(512);
  for (Partition& p : t.partitions) {
    if (p.number == 5) p.start_sector = 30001;
  }
  const std::vector<KernelPartition> k = KernelPartitionsFor(t);
  EXPECT_EQ(k[1], (KernelPartition{2, 30000 * 512, 512}));
  EXPECT_EQ(k[2], (KernelPartition{5, 30001 * 512, 500 * 512}));
  EXPECT_LE(k[1].start_bytes + k[1].size_bytes, k[2].start_bytes);
}

TEST(KernelPartitionsTest, UpdatesDeleteFirstAndLeaveWhatIsRight) {
  std::vector<KernelPartition> current{{1, 100, 10}, {2, 200, 10}, {3, 300, 10}};
  std::vector<KernelPartition> wanted{{1, 100, 10}, {2, 250, 10}, {4, 400, 10}};
  std::vector<KernelUpdate> u = KernelUpdates(current, wanted);
  using Op = KernelUpdate::Op;
  EXPECT_EQ(u, (std::vector<KernelUpdate>{{Op::kDelete, {2, 200, 10}},
                                          {Op::kDelete, {3, 300, 10}},
                                          {Op::kAdd, {2, 250, 10}},
                                          {Op::kAdd, {4, 400, 10}}}));
  EXPECT_EQ(Describe(u[0]), "delete partition 2");
  EXPECT_EQ(Describe(u[2]), "add partition 2 at byte 250, 10 bytes");
  EXPECT_TRUE(KernelUpdates(wanted, wanted).empty());
}

}  // namespace
}  // namespace partalign
