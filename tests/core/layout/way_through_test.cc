// SPDX-License-Identifier: GPL-3.0-or-later
// The way through (issue 38): what would align the partitions the planner cannot, worded once.
// The disks are issue 38's, as Windows XP laid them out (cylinders of 255 x 63, every partition
// filling its cylinders): with the swap, and with one NTFS to the last cylinder.
#include "partalign/layout/way_through.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

#include "partalign/util/units.h"
#include "support/case359_table.h"
#include "support/xp_table.h"

namespace partalign {
namespace {

constexpr uint64_t kCyl = test::kXpCylinder;
const Alignment kMiBAlignment{kMiB, 0};

using test::XpDos;
using test::XpPart;
PartitionTable XpDisk() { return test::XpDiskTable(); }

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
  const PartitionTable t = XpDos({XpPart(1, PartitionKind::kPrimary, 63, 261 * kCyl - 1, "ntfs")});
  WaysThrough ways = FindWaysThrough(t, kMiBAlignment, {}, Plan(t));
  EXPECT_EQ(ways.impossible, std::vector<uint32_t>{1});
  EXPECT_TRUE(ways.ways.empty());
  EXPECT_EQ(ways.missing_sectors, 646u);
  EXPECT_EQ(WayText(ways, {}),
            std::vector<std::string>{"partition 1 needs 323 KiB more room than the disk has free "
                                     "(646 sectors): a partition made that much smaller, or one "
                                     "given up, makes room"});
}

// Issue 39: the running system's partition at 63 on a disk with room enough. It is impossible
// because it is in use, not for want of room: no way through and no room missing. (Before, it
// counted among what room would align, and plan looked for ways without the in-use facts: on
// the at-boot test's disk it said "partition 1 needs 512 B more room than the disk has free".)
TEST(WayThroughTest, APartitionInUseWaitsForTheNextBootNotForRoom) {
  const PartitionTable t =
      XpDos({XpPart(1, PartitionKind::kPrimary, 63, 100 * kCyl - 1, "ext4"),
             XpPart(2, PartitionKind::kPrimary, 100 * kCyl, 120 * kCyl - 1, "swap")});
  PlanOptions in_use;
  in_use.in_use = {1};
  const std::vector<PlanAction> actions = Plan(t, in_use);
  ASSERT_EQ(actions[0].kind, ActionKind::kImpossible) << actions[0].reason;
  WaysThrough ways = FindWaysThrough(t, kMiBAlignment, in_use, actions);
  EXPECT_TRUE(ways.impossible.empty());
  EXPECT_TRUE(ways.ways.empty());
  EXPECT_EQ(ways.missing_sectors, 0u);
  EXPECT_TRUE(WayText(ways, {}).empty());
}

// What ReadShrinkLimit would say of the XP disk: each partition may lose all but a tenth.
std::vector<ShrinkOffer> XpOffers(const PartitionTable& t) {
  std::vector<ShrinkOffer> offers;
  for (const Partition& p : t.partitions) {
    if (p.kind == PartitionKind::kExtended) continue;
    ShrinkWay way = ShrinkWayFor(p.contents.fs_type);
    offers.push_back({p.number, way.tool, way.reason, p.size_sectors * 512 / 10, 0});
  }
  return offers;
}

size_t ImpossibleCount(const std::vector<PlanAction>& actions) {
  return static_cast<size_t>(std::count_if(actions.begin(), actions.end(), [](const PlanAction& a) {
    return a.kind == ActionKind::kImpossible;
  }));
}

TEST(WayThroughTest, TheXpDisksSwapShrunkByTheFewestMiBIsTheLeastInvasiveWay) {
  const PartitionTable t = XpDisk();
  WaysThrough ways = FindWaysThrough(t, kMiBAlignment, {}, Plan(t), XpOffers(t));
  ASSERT_FALSE(ways.ways.empty());
  const WayThrough& best = ways.ways[0];
  EXPECT_EQ(best.source, RoomSource::kShrinkSwap);
  EXPECT_EQ(best.partition, 7u);
  EXPECT_EQ(best.tool, ShrinkTool::kMkswap);
  EXPECT_EQ(best.aligned, (std::vector<uint32_t>{1, 5, 6}));
  EXPECT_TRUE(best.still_impossible.empty());
  ASSERT_EQ(best.shrink_bytes % kMiB, 0u);
  ASSERT_GT(best.shrink_bytes, 0u);
  EXPECT_EQ(BestShrink(ways), &best);

  // Shrunk by that much, every partition aligns; by one MiB less, some do not.
  PlanOptions with;
  with.shrinks.push_back(ShrinkOf(best, t));
  EXPECT_EQ(with.shrinks[0].size_sectors, t.Find(7)->size_sectors - best.shrink_bytes / 512);
  std::vector<PlanAction> actions = Plan(t, with);
  EXPECT_EQ(ImpossibleCount(actions), 0u);
  for (const PlanAction& a : actions) {
    if (a.partition != 2) {
      EXPECT_EQ(a.new_start_sector % 2048, 0u) << a.partition;
    }
    if (a.partition != 7) {
      EXPECT_FALSE(a.shrink) << a.partition;
      continue;
    }
    ASSERT_TRUE(a.shrink);
    EXPECT_EQ(*a.shrink, with.shrinks[0]);
    EXPECT_EQ(a.old_end_sector, t.Find(7)->end_sector());  // its place before the shrink
    EXPECT_LE(a.new_end_sector - a.new_start_sector + 1, t.Find(7)->size_sectors);
    EXPECT_GE(a.new_end_sector - a.new_start_sector + 1, with.shrinks[0].size_sectors);
    EXPECT_NE(a.kind, ActionKind::kNone);
    EXPECT_NE(a.reason.find("swap shrunk first by"), std::string::npos) << a.reason;
  }
  if (best.shrink_bytes > kMiB) {
    PlanOptions less;
    less.shrinks.push_back({7, ShrinkTool::kMkswap, with.shrinks[0].size_sectors + 2048});
    Result<std::vector<PlanAction>> fewer = PlanPartitions(t, kMiBAlignment, less);
    EXPECT_TRUE(!fewer || ImpossibleCount(*fewer) > 0);
  }

  // Giving the swap up comes next; each filesystem shrunk after it, ext before NTFS before FAT.
  std::vector<RoomSource> sources;
  std::vector<uint32_t> order;
  for (const WayThrough& w : ways.ways) {
    if (!w.still_impossible.empty()) continue;
    sources.push_back(w.source);
    order.push_back(w.partition);
  }
  ASSERT_GE(sources.size(), 2u);
  EXPECT_EQ(sources[1], RoomSource::kDiscard);
  EXPECT_TRUE(std::is_sorted(sources.begin(), sources.end()));
  std::vector<uint32_t> filesystems;
  for (size_t i = 0; i < sources.size(); ++i) {
    if (sources[i] == RoomSource::kShrinkFilesystem) filesystems.push_back(order[i]);
  }
  // ext4 (5), NTFS (1), FAT (6): those among them that give the room, in that order.
  std::vector<uint32_t> rank{5, 1, 6};
  std::vector<uint32_t> expected;
  for (uint32_t n : rank) {
    if (std::find(filesystems.begin(), filesystems.end(), n) != filesystems.end())
      expected.push_back(n);
  }
  EXPECT_EQ(filesystems, expected);

  WayContext context;
  context.make_room_command = [] { return std::string("partalign plan --make-room disk.img"); };
  std::vector<std::string> lines = WayText(ways, context);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], fmt::format("way through: partition 7 (swap, 321.58 MiB) can give the room: "
                                  "'partalign plan --make-room disk.img' makes it {} smaller at "
                                  "its end, before the moves (mkswap re-creates the swap area "
                                  "with the same UUID, label and page size; refused if it holds "
                                  "a hibernation image); partitions 1, 5 and 6 then align",
                                  FormatSize(best.shrink_bytes)));
}

TEST(WayThroughTest, AFilesystemShrinksWhenTheSwapCannot) {
  PartitionTable t = XpDisk();
  std::vector<ShrinkOffer> offers = XpOffers(t);
  for (ShrinkOffer& o : offers) {
    if (o.partition == 7) o = {7, std::nullopt, "it holds a hibernation image", 0, 0};
  }
  WaysThrough ways = FindWaysThrough(t, kMiBAlignment, {.discard = {}}, Plan(t), offers);
  const WayThrough* shrink = BestShrink(ways);
  ASSERT_NE(shrink, nullptr);
  EXPECT_EQ(shrink->source, RoomSource::kShrinkFilesystem);
  EXPECT_NE(shrink->partition, 7u);
  ASSERT_EQ(ways.not_offered.size(), 1u);
  EXPECT_EQ(ways.not_offered[0].partition, 7u);
  std::vector<std::string> lines = WayText(ways, {});
  EXPECT_NE(std::find(lines.begin(), lines.end(),
                      "partition 7 (swap) cannot give room: it holds a hibernation image"),
            lines.end());
  // The shrink it chose aligns what it says, with the filesystem's tool.
  PlanOptions with;
  with.shrinks.push_back(ShrinkOf(*shrink, t));
  EXPECT_EQ(ImpossibleCount(Plan(t, with)), shrink->still_impossible.size());
}

TEST(WayThroughTest, NothingBelowTheLimitNorWhatCannotShrink) {
  PartitionTable t = XpDisk();
  std::vector<ShrinkOffer> offers;
  for (const Partition& p : t.partitions) {
    if (p.kind == PartitionKind::kExtended) continue;
    // Each may give less than a MiB: no shrink is offered.
    offers.push_back(
        {p.number, ShrinkWayFor(p.contents.fs_type).tool, "", (p.size_sectors - 1000) * 512, 0});
  }
  offers.push_back({5, std::nullopt, "XFS cannot be shrunk (xfs_growfs only grows)", 0, 0});
  WaysThrough ways = FindWaysThrough(t, kMiBAlignment, {}, Plan(t), offers);
  EXPECT_EQ(BestShrink(ways), nullptr);
  ASSERT_EQ(ways.ways.size(), 1u);
  EXPECT_EQ(ways.ways[0].source, RoomSource::kDiscard);
}

TEST(WayThroughTest, APlanFileWithTheShrinkDescribesTheSameActions) {
  const PartitionTable t = XpDisk();
  WaysThrough ways = FindWaysThrough(t, kMiBAlignment, {}, Plan(t), XpOffers(t));
  ASSERT_NE(BestShrink(ways), nullptr);
  PlanOptions with;
  with.shrinks.push_back(ShrinkOf(*BestShrink(ways), t));
  std::vector<PlanAction> planned = Plan(t, with);
  std::vector<std::pair<uint64_t, uint64_t>> extents;
  for (const PlanAction& a : planned) extents.push_back({a.new_start_sector, a.new_end_sector});
  Result<std::vector<PlanAction>> described = PlanFileActions(t, kMiBAlignment, with, extents);
  ASSERT_TRUE(described) << described.error().message;
  AdoptPlansReasons(planned, &*described);
  EXPECT_EQ(*described, planned);
  // Without the shrink, the same layout cuts into the swap: refused.
  EXPECT_FALSE(PlanFileActions(t, kMiBAlignment, {}, extents));
  // Tails a shrink gives up are the tool's, not proven zero by reading.
  EXPECT_TRUE(TailsToProve(t, planned, with).empty());
}

using test::Case359;
using test::Case359Offers;

TEST(WayThroughTest, TheSwapShrinksToAWholeMiBWhenThatAlignsMore) {
  const PartitionTable t = Case359();
  WaysThrough ways = FindWaysThrough(t, kMiBAlignment, {}, Plan(t), Case359Offers(t));
  EXPECT_EQ(ways.impossible, (std::vector<uint32_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  const WayThrough* best = BestShrink(ways);
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(best->partition, 7u);
  // 1.12 MiB takes 2 MiB once aligned, 1 MiB takes 1: all of what the swap can give.
  EXPECT_EQ(ShrinkOf(*best, t).size_sectors, 2048u);
  EXPECT_EQ(best->still_impossible, (std::vector<uint32_t>{1, 11}));
}

TEST(WayThroughTest, MakeRoomTakesEveryShrinkItNeedsInOnePlan) {
  const PartitionTable t = Case359();
  const std::vector<ShrinkOffer> offers = Case359Offers(t);
  const RoomTaken taken = TakeRoom(t, kMiBAlignment, {}, Plan(t), offers);
  ASSERT_EQ(taken.shrinks.size(), 2u);
  EXPECT_EQ(taken.shrinks[0].partition, 7u);
  EXPECT_EQ(taken.shrinks[1].partition, 10u);
  EXPECT_EQ(taken.shrinks[1].aligned, (std::vector<uint32_t>{1, 11}));
  EXPECT_TRUE(taken.last.impossible.empty());
  const std::vector<PlannedShrink> shrinks = ShrinksOf(taken, t);
  ASSERT_EQ(shrinks.size(), 2u);
  // The ext4 keeps at least its minimum.
  EXPECT_GE(shrinks[1].size_sectors * 512, offers[9].min_bytes);
  PlanOptions with;
  with.shrinks = shrinks;
  const std::vector<PlanAction> actions = Plan(t, with);
  EXPECT_EQ(ImpossibleCount(actions), 0u);

  // Applied, the table has every partition where the plan put it: a second plan finds nothing
  // to move, and --make-room nothing to make room for.
  PartitionTable after = t;
  for (size_t i = 0; i < actions.size(); ++i) {
    after.partitions[i].start_sector = actions[i].new_start_sector;
    after.partitions[i].size_sectors = actions[i].new_end_sector - actions[i].new_start_sector + 1;
    EXPECT_EQ(actions[i].new_start_sector % 2048, 0u) << actions[i].partition;
  }
  after.partitions[6].contents.fs_size_bytes = shrinks[0].size_sectors * 512;
  after.partitions[9].contents.fs_size_bytes = shrinks[1].size_sectors * 512;
  const std::vector<PlanAction> again = Plan(after);
  for (const PlanAction& a : again) {
    EXPECT_EQ(a.kind, ActionKind::kNone) << a.partition << ": " << a.reason;
  }
  EXPECT_TRUE(TakeRoom(after, kMiBAlignment, {}, again, offers).shrinks.empty());

  const std::vector<std::string> lines = MakeRoomLines(taken, offers);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "make room: partition 7 (swap, 4.12 MiB) gives 3.12 MiB at its end, shrunk by mkswap "
            "before any move (its contents use 64 KiB, it keeps at least 1 MiB): the least "
            "invasive way that aligns partitions 2, 3, 4, 5, 6, 7, 8, 9 and 10");
  EXPECT_EQ(lines[1],
            "make room: partition 10 (ext4, 20.73 MiB) gives 1.73 MiB at its end too, shrunk by "
            "resize2fs before any move (its contents use 2.92 MiB, it keeps at least 18.92 MiB): "
            "the least invasive way that then aligns partitions 1 and 11");
}

}  // namespace
}  // namespace partalign
