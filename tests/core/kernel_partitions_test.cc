#include "partalign/kernel_partitions.h"

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
}

TEST(KernelPartitionsTest, ExtendedPartitionStopsBeforeALogicalPartitionRightAfterItsEbr) {
  PartitionTable t = Dos(512);
  t.partitions[0].start_sector = 30001;  // partition 5, right after the head EBR
  // BLKPG would refuse the 1 KiB (it overlaps partition 5): one sector it is.
  EXPECT_EQ(KernelPartitionsFor(t)[1], (KernelPartition{2, 30000 * 512, 512}));
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
