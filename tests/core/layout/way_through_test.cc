// SPDX-License-Identifier: GPL-3.0-or-later
// The way through (issue 38): what would align the partitions the planner cannot, worded once.
// The disks are issue 38's, as Windows XP laid them out (cylinders of 255 x 63, every partition
// filling its cylinders): with the swap, and with one NTFS to the last cylinder.
#include "partalign/layout/way_through.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "partalign/util/units.h"

namespace partalign {
namespace {

constexpr uint64_t kCyl = 255 * 63;
const Alignment kMiBAlignment{kMiB, 0};

Partition Part(uint32_t number, PartitionKind kind, uint64_t start, uint64_t end,
               const std::string& fs) {
  Partition p;
  p.number = number;
  p.kind = kind;
  p.start_sector = start;
  p.size_sectors = end - start + 1;
  if (!fs.empty()) {
    p.contents.proof = ContentProof::kSignature;
    p.contents.fs_type = fs;
    if (fs != "ntfs") p.contents.fs_size_bytes = p.size_sectors * 512;
  }
  return p;
}

PartitionTable Dos(std::vector<Partition> parts) {
  PartitionTable t;
  t.label = LabelType::kDos;
  t.sector_size = 512;
  t.disk_size_sectors = 4194304;  // 2 GiB: 261 cylinders and 1339 sectors
  t.first_usable_lba = 2048;
  t.last_usable_lba = t.disk_size_sectors - 1;
  t.partitions = std::move(parts);
  return t;
}

PartitionTable XpDisk() {
  return Dos({Part(1, PartitionKind::kPrimary, 63, 16 * kCyl - 1, "ntfs"),
              Part(2, PartitionKind::kExtended, 16 * kCyl, 261 * kCyl - 1, ""),
              Part(5, PartitionKind::kLogical, 16 * kCyl + 63, 140 * kCyl - 1, "ext4"),
              Part(6, PartitionKind::kLogical, 140 * kCyl + 63, 220 * kCyl - 1, "vfat"),
              Part(7, PartitionKind::kLogical, 220 * kCyl + 63, 261 * kCyl - 1, "swap")});
}

std::vector<PlanAction> Plan(const PartitionTable& t, const PlanOptions& options = {}) {
  Result<std::vector<PlanAction>> a = PlanPartitions(t, kMiBAlignment, options);
  EXPECT_TRUE(a) << a.error().message;
  return a ? *a : std::vector<PlanAction>{};
}

TEST(WayThroughTest, TheSwapOfTheXpDiskGivesTheRoom) {
  const PartitionTable t = XpDisk();
  WaysThrough ways = FindWaysThrough(t, kMiBAlignment, {}, Plan(t));
  EXPECT_EQ(ways.impossible, (std::vector<uint32_t>{1, 5, 6}));
  ASSERT_EQ(ways.ways.size(), 1u);
  EXPECT_EQ(ways.ways[0].source, RoomSource::kDiscard);
  EXPECT_EQ(ways.ways[0].partition, 7u);
  EXPECT_EQ(ways.ways[0].aligned, (std::vector<uint32_t>{1, 5, 6}));
  EXPECT_TRUE(ways.ways[0].still_impossible.empty());
  // That many more sectors at the end of the disk align everything, one fewer does not.
  ASSERT_GT(ways.missing_sectors, 0u);
  PartitionTable grown = t;
  grown.last_usable_lba += ways.missing_sectors;
  grown.disk_size_sectors += ways.missing_sectors;
  for (const PlanAction& a : Plan(grown)) EXPECT_NE(a.kind, ActionKind::kImpossible) << a.reason;
  grown.last_usable_lba -= 1;
  grown.disk_size_sectors -= 1;
  std::vector<PlanAction> short_by_one = Plan(grown);
  EXPECT_TRUE(std::any_of(short_by_one.begin(), short_by_one.end(),
                          [](const PlanAction& a) { return a.kind == ActionKind::kImpossible; }));

  WayContext context;
  context.plan_command = [](const std::vector<uint32_t>& discard) {
    std::string c = "partalign plan";
    for (uint32_t n : discard) c += " --discard " + std::to_string(n);
    return c + " -o plan.json disk.img";
  };
  std::vector<std::string> lines = WayText(ways, context);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "way through: partition 7 (swap, 321.58 MiB) can give the room: 'partalign plan "
            "--discard 7 -o plan.json disk.img' gives up its contents (mkswap makes a new swap "
            "area there after apply); partitions 1, 5 and 6 then align");
  EXPECT_NE(lines[1].find("partitions 1, 5 and 6 need"), std::string::npos) << lines[1];
  // In the planner the way is a key.
  EXPECT_NE(WayText(ways, {})[0].find("d on partition 7 gives up its contents"), std::string::npos);
}

TEST(WayThroughTest, NothingImpossibleNothingToSay) {
  PlanOptions discard;
  discard.discard = {7};
  const PartitionTable t = XpDisk();
  WaysThrough ways = FindWaysThrough(t, kMiBAlignment, discard, Plan(t, discard));
  EXPECT_TRUE(ways.impossible.empty());
  EXPECT_TRUE(WayText(ways, {}).empty());
}

TEST(WayThroughTest, ANtfsFillingTheDiskSaysHowMuchRoomIsMissing) {
  // 63 -> 2048 needs 1985 sectors; 1339 are free after the last cylinder.
  const PartitionTable t = Dos({Part(1, PartitionKind::kPrimary, 63, 261 * kCyl - 1, "ntfs")});
  WaysThrough ways = FindWaysThrough(t, kMiBAlignment, {}, Plan(t));
  EXPECT_EQ(ways.impossible, std::vector<uint32_t>{1});
  EXPECT_TRUE(ways.ways.empty());
  EXPECT_EQ(ways.missing_sectors, 646u);
  EXPECT_EQ(WayText(ways, {}),
            std::vector<std::string>{"partition 1 needs 323 KiB more room than the disk has free "
                                     "(646 sectors): a partition made that much smaller, or one "
                                     "given up, makes room"});
}

}  // namespace
}  // namespace partalign
