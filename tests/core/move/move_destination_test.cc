// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/move/move_destination.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace partalign {
namespace {

// A DOS disk: the MBR, partition 1 at 1 MiB (ext4), an extended partition 2 at 9 MiB whose EBR
// heads logical partition 5 (no signature), 4 MiB each.
PartitionTable Disk() {
  PartitionTable t;
  t.label = LabelType::kDos;
  t.sector_size = 512;
  t.disk_size_sectors = 65536;
  t.areas = {{"MBR", 0, 512}, {"EBR", 9 << 20, 512}};
  Partition one{.number = 1, .start_sector = 2048, .size_sectors = 8192};
  one.contents.fs_type = "ext4";
  Partition extended{
      .number = 2, .kind = PartitionKind::kExtended, .start_sector = 18432, .size_sectors = 10240};
  Partition five{
      .number = 5, .kind = PartitionKind::kLogical, .start_sector = 18433, .size_sectors = 8191};
  t.partitions = {one, extended, five};
  return t;
}

MoveGeometry Move(uint64_t from, uint64_t to, uint64_t length) {
  MoveGeometry m;
  m.source_bytes = from;
  m.dest_bytes = to;
  m.length_bytes = length;
  return m;
}

TEST(MoveDestinationTest, FreeSpaceAndTheMovedPartitionsOwnBytesAreNothing) {
  EXPECT_TRUE(DestinationOverlaps(Disk(), Move(1 << 20, 20 << 20, 4 << 20)).empty());
  // Partition 1 moved up by 63 sectors: its destination overlaps only its own bytes.
  EXPECT_TRUE(DestinationOverlaps(Disk(), Move(1 << 20, (1 << 20) + 32256, 4 << 20)).empty());
}

TEST(MoveDestinationTest, NamesTheTableAreasAndTheOtherPartitions) {
  EXPECT_EQ(DestinationOverlaps(Disk(), Move(1 << 20, 0, 4 << 20)),
            std::vector<std::string>{"the MBR (bytes 0-511)"});
  const std::vector<std::string> found =
      DestinationOverlaps(Disk(), Move(1 << 20, 9 << 20, 4 << 20));
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0], "the EBR (bytes 9437184-9437695)");
  EXPECT_EQ(found[1].rfind("partition 5 (bytes 9437696-13631487, ", 0), 0u) << found[1];
  // The ext4 of partition 1 under a move of partition 5 onto it.
  const std::vector<std::string> onto_one =
      DestinationOverlaps(Disk(), Move(9437696, 2 << 20, 1 << 20));
  EXPECT_EQ(onto_one, std::vector<std::string>{"partition 1 (bytes 1048576-5242879, ext4)"});
}

}  // namespace
}  // namespace partalign
