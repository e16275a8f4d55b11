// SPDX-License-Identifier: GPL-3.0-or-later
// The order of a data-moving apply: cascades up and down, table-only changes riding with the
// move that makes room for them, a DOS extended partition that moves with its first logical
// partition, moves that need each other's place (refused) - and, over thousands of planner
// outputs on seeded random layouts, that every step writes only where no other partition's data
// is and leaves a valid table.
#include "partalign/table/apply_steps.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "partalign/layout/ebr_placement.h"
#include "partalign/layout/planner.h"
#include "partalign/util/units.h"
#include "support/random_layout.h"

namespace partalign {
namespace {

constexpr uint64_t kSector = 512;

}  // namespace

// GoogleTest prints steps instead of their bytes.
void PrintTo(const ApplyStep& step, std::ostream* os) {
  *os << "{move " << step.move_partition << ", edits";
  for (const TableEdit& e : step.edits) {
    *os << " " << e.partition << ":" << e.start_sector << "-" << e.end_sector;
  }
  *os << "}";
}

namespace {

Partition Part(uint32_t number, uint64_t start, uint64_t end, bool data,
               PartitionKind kind = PartitionKind::kPrimary) {
  Partition p;
  p.number = number;
  p.kind = kind;
  p.start_sector = start;
  p.size_sectors = end - start + 1;
  p.contents.proof = data ? ContentProof::kData : ContentProof::kZeros;
  return p;
}

PlanAction Move(uint32_t n, uint64_t old_start, uint64_t old_end, uint64_t new_start,
                uint64_t new_end) {
  return {n,
          old_start,
          old_end,
          new_start,
          new_end,
          ActionKind::kMoveData,
          (std::min(old_end - old_start, new_end - new_start) + 1) * kSector,
          "moves"};
}

PlanAction TableOnly(uint32_t n, uint64_t old_start, uint64_t old_end, uint64_t new_start,
                     uint64_t new_end) {
  return {n, old_start, old_end, new_start, new_end, ActionKind::kTableOnly, 0, "table"};
}

struct Case {
  PartitionTable table;
  Plan plan;
};

Case Gpt(std::vector<Partition> parts, std::vector<PlanAction> actions) {
  Case c;
  c.table.label = LabelType::kGpt;
  c.table.sector_size = kSector;
  c.table.partitions = std::move(parts);
  c.plan.label = LabelType::kGpt;
  c.plan.actions = std::move(actions);
  return c;
}

TEST(ApplyStepsTest, TheDemoDiskMovesTheUpperPartitionFirst) {
  // The demo's layout: 1 and 3 hold data, 2 and 4 are empty; everything moves up a little.
  Case c = Gpt({Part(1, 63, 65534, true), Part(2, 65535, 589814, false),
                Part(3, 589815, 2686934, true), Part(4, 2686935, 8388479, false)},
               {Move(1, 63, 65534, 2048, 67583), TableOnly(2, 65535, 589814, 67584, 589823),
                Move(3, 589815, 2686934, 589824, 2686975),
                TableOnly(4, 2686935, 8388479, 2686976, 8386559)});
  Result<std::vector<ApplyStep>> steps = OrderApplySteps(c.plan, c.table);
  ASSERT_TRUE(steps) << steps.error().message;
  // 4 fits at once (rides with the first move); 2 fits once 3 has moved; 1 needs 2 out of the
  // way, which needs 3 out of its way.
  EXPECT_EQ(*steps, (std::vector<ApplyStep>{
                        {3, {{2, 67584, 589823}, {3, 589824, 2686975}, {4, 2686976, 8386559}}},
                        {1, {{1, 2048, 67583}}}}));
}

TEST(ApplyStepsTest, CascadeUpRunsFromTheHighestPartitionDown) {
  // Each moves into the place of the next one.
  Case c = Gpt({Part(1, 100, 1099, true), Part(2, 1100, 2099, true), Part(3, 2100, 3099, true)},
               {Move(1, 100, 1099, 1024, 2023), Move(2, 1100, 2099, 2048, 3047),
                Move(3, 2100, 3099, 3072, 4071)});
  Result<std::vector<ApplyStep>> steps = OrderApplySteps(c.plan, c.table);
  ASSERT_TRUE(steps) << steps.error().message;
  EXPECT_EQ(*steps, (std::vector<ApplyStep>{
                        {3, {{3, 3072, 4071}}}, {2, {{2, 2048, 3047}}}, {1, {{1, 1024, 2023}}}}));
}

TEST(ApplyStepsTest, CascadeDownRunsFromTheLowestPartitionUp) {
  Case c = Gpt({Part(1, 2100, 3099, true), Part(2, 3100, 4099, true), Part(3, 4100, 5099, true)},
               {Move(1, 2100, 3099, 2048, 3047), Move(2, 3100, 4099, 3072, 4071),
                Move(3, 4100, 5099, 4096, 5095)});
  Result<std::vector<ApplyStep>> steps = OrderApplySteps(c.plan, c.table);
  ASSERT_TRUE(steps) << steps.error().message;
  EXPECT_EQ(*steps, (std::vector<ApplyStep>{
                        {1, {{1, 2048, 3047}}}, {2, {{2, 3072, 4071}}}, {3, {{3, 4096, 5095}}}}));
}

TEST(ApplyStepsTest, MixedDirectionsAreOrderedByWhatIsInTheWay) {
  // 2 moves down into the space 1 leaves when it moves further down; 3 moves up into free
  // space; 4 moves down into the space 3 leaves.
  Case c = Gpt({Part(1, 3000, 3999, true), Part(2, 4000, 4999, true), Part(3, 6000, 6999, true),
                Part(4, 7000, 7999, true)},
               {Move(1, 3000, 3999, 2048, 3047), Move(2, 4000, 4999, 3072, 4071),
                Move(3, 6000, 6999, 6144, 7143), Move(4, 7000, 7999, 8192, 9191)});
  Result<std::vector<ApplyStep>> steps = OrderApplySteps(c.plan, c.table);
  ASSERT_TRUE(steps) << steps.error().message;
  std::vector<uint32_t> order;
  for (const ApplyStep& step : *steps) order.push_back(step.move_partition);
  EXPECT_EQ(order, (std::vector<uint32_t>{1, 2, 4, 3}));
}

TEST(ApplyStepsTest, MovesThatNeedEachOthersPlaceAreRefused) {
  // 1 and 2 swap places: whichever goes first overwrites the other's data.
  Case c = Gpt({Part(1, 2048, 3071, true), Part(2, 4096, 5119, true)},
               {Move(1, 2048, 3071, 4096, 5119), Move(2, 4096, 5119, 2048, 3071)});
  Result<std::vector<ApplyStep>> steps = OrderApplySteps(c.plan, c.table);
  ASSERT_FALSE(steps);
  EXPECT_NE(steps.error().message.find("partition 1 would overwrite the data of partition 2"),
            std::string::npos)
      << steps.error().message;
  EXPECT_NE(steps.error().message.find("partition 2 would overwrite the data of partition 1"),
            std::string::npos)
      << steps.error().message;
}

TEST(ApplyStepsTest, AnUnmovedPartitionWithDataBlocks) {
  // The plan is wrong (2 would overlap 3, which does not move): no order helps.
  Case c = Gpt({Part(1, 100, 199, false), Part(2, 200, 1199, true), Part(3, 1300, 2299, true)},
               {Move(2, 200, 1199, 1024, 2023)});
  Result<std::vector<ApplyStep>> steps = OrderApplySteps(c.plan, c.table);
  ASSERT_FALSE(steps);
  EXPECT_NE(steps.error().message.find("partition 2 would overwrite the data of partition 3"),
            std::string::npos)
      << steps.error().message;
}

TEST(ApplyStepsTest, APlanWithoutMovesHasNoSteps) {
  Case c = Gpt({Part(1, 63, 999, false)}, {TableOnly(1, 63, 999, 2048, 2999)});
  EXPECT_FALSE(OrderApplySteps(c.plan, c.table));
}

TEST(ApplyStepsTest, TheExtendedPartitionMovesWithItsFirstLogicalPartition) {
  // What plan makes of an old DOS disk: 1 at 63, the extended partition and its logical
  // partitions 5 and 6 on odd sectors, all holding data.
  Case c;
  c.table.label = LabelType::kDos;
  c.table.sector_size = kSector;
  c.table.partitions = {Part(1, 63, 65598, true),
                        Part(2, 65600, 365599, false, PartitionKind::kExtended),
                        Part(5, 65663, 165662, true, PartitionKind::kLogical),
                        Part(6, 165726, 265725, true, PartitionKind::kLogical)};
  c.plan.label = LabelType::kDos;
  c.plan.actions = {Move(1, 63, 65598, 2048, 67583), TableOnly(2, 65600, 365599, 69631, 365599),
                    Move(5, 65663, 165662, 69632, 169983), Move(6, 165726, 265725, 172032, 272383)};
  Result<std::vector<ApplyStep>> steps = OrderApplySteps(c.plan, c.table);
  ASSERT_TRUE(steps) << steps.error().message;
  EXPECT_EQ(*steps, (std::vector<ApplyStep>{{6, {{6, 172032, 272383}}},
                                            {5, {{2, 69631, 365599}, {5, 69632, 169983}}},
                                            {1, {{1, 2048, 67583}}}}));
}

TEST(ApplyStepsTest, TheExtendedPartitionGrowsFirstWhenItMustMoveBothEnds) {
  // (Seed 692 of the sweep below.) 5 must move before the extended partition's start can
  // move up, 6 before 5, the last logical partition needs the extended partition's new end
  // first: the extended partition first takes the union of its old and new extent. Moving 6
  // up would write over the EBR of 7 (sector 176328, right before it): the union and 7's new
  // place go first, in a table-only step, which puts that EBR before 7's new place.
  Case c;
  c.table.label = LabelType::kDos;
  c.table.sector_size = kSector;
  c.table.partitions = {Part(3, 79872, 147988, true),
                        Part(4, 147989, 208410, false, PartitionKind::kExtended),
                        Part(5, 150910, 161775, true, PartitionKind::kLogical),
                        Part(6, 163824, 174280, true, PartitionKind::kLogical),
                        Part(7, 176329, 208000, false, PartitionKind::kLogical)};
  c.plan.label = LabelType::kDos;
  c.plan.actions = {
      TableOnly(3, 79872, 147988, 79872, 149503), TableOnly(4, 147989, 208410, 151551, 210943),
      Move(5, 150910, 161775, 151552, 163839), Move(6, 163824, 174280, 165888, 178175),
      TableOnly(7, 176329, 208000, 180224, 210943)};
  Result<std::vector<ApplyStep>> steps = OrderApplySteps(c.plan, c.table);
  ASSERT_TRUE(steps) << steps.error().message;
  EXPECT_EQ(*steps, (std::vector<ApplyStep>{
                        {kTableOnlyStep, {{4, 147989, 210943}, {7, 180224, 210943}}},
                        {6, {{6, 165888, 178175}}},
                        {5, {{3, 79872, 149503}, {4, 151551, 210943}, {5, 151552, 163839}}}}));
}

TEST(ApplyStepsTest, AMoveMustNotOverwriteTheTableOnTheDiskBeforeItsOwnIsWritten) {
  // fdisk's DOS layout of old: partition 5 at 65598, the EBR of partition 6 in the gap after
  // it (sector 163964). Moving partition 5 up to 69632 writes over that EBR while the old
  // table, whose chain goes through it, is still the one on the disk.
  TableTransition t;
  t.label = LabelType::kDos;
  t.sector_size = kSector;
  auto ebr = [](uint64_t sector, std::optional<uint32_t> old_index,
                std::optional<uint32_t> new_index) {
    return TableRange{TableAreaRole::kEbr, sector * kSector, kSector, old_index, new_index, {}, {}};
  };
  t.ranges = {ebr(169983, std::nullopt, 1), ebr(163964, 1, std::nullopt), ebr(65535, 0, 0),
              TableRange{TableAreaRole::kMbr, 0, kSector, 0, 0, {}, {}}};
  const MoveGeometry up{65598 * kSector, 69632 * kSector, 98304 * kSector};
  EXPECT_EQ(MoveOverwritesTable(t, 5, up),
            std::vector<std::string>{
                "moving partition 5 to sectors 69632-167935 would overwrite sector 163964, the "
                "EBR of partition 6 (old place), which the table on the disk uses until the "
                "step's new table is written"});
  // Beyond the destination, nothing is hit; a place only the new table has is written after
  // the move (TransitionConflicts checks it against the new table's partitions).
  t.ranges[1].offset_bytes = 167936 * kSector;
  EXPECT_TRUE(MoveOverwritesTable(t, 5, up).empty());
  t.ranges[0].offset_bytes = 100000 * kSector;
  EXPECT_TRUE(MoveOverwritesTable(t, 5, up).empty());
}

TEST(ApplyStepsTest, ATableOnlyStepFirstMovesAnEbrOutOfTheWayOfAMove) {
  // The XP disk of issue 38 with its swap (7) discarded: partition 6 moves up over the sector
  // where XP put the EBR of partition 7 (a cylinder before it). The table-only changes that fit
  // already (the extended partition's union, partition 7's new place) are written first, as a
  // step of their own, which puts that EBR right before partition 7's new place.
  constexpr uint64_t kCyl = 16065;
  Case c;
  c.table.label = LabelType::kDos;
  c.table.sector_size = kSector;
  c.table.first_usable_lba = 2048;
  c.table.partitions = {Part(1, 63, 16 * kCyl - 1, true),
                        Part(2, 16 * kCyl, 261 * kCyl - 1, false, PartitionKind::kExtended),
                        Part(5, 16 * kCyl + 63, 140 * kCyl - 1, true, PartitionKind::kLogical),
                        Part(6, 140 * kCyl + 63, 220 * kCyl - 1, true, PartitionKind::kLogical),
                        Part(7, 220 * kCyl + 63, 261 * kCyl - 1, true, PartitionKind::kLogical)};
  c.table.areas = {{"MBR", 0, 512},
                   {"EBR", 16 * kCyl * kSector, 512},
                   {"EBR", 140 * kCyl * kSector, 512},
                   {"EBR", 220 * kCyl * kSector, 512}};
  PlanAction discarded = TableOnly(7, 220 * kCyl + 63, 261 * kCyl - 1, 3543040, 4194303);
  discarded.empty = Emptiness::kDiscarded;
  c.plan.label = LabelType::kDos;
  c.plan.actions = {Move(1, 63, 16 * kCyl - 1, 2048, 259024),
                    TableOnly(2, 16 * kCyl, 261 * kCyl - 1, 260094, 4194303),
                    Move(5, 16 * kCyl + 63, 140 * kCyl - 1, 260096, 2252799),
                    Move(6, 140 * kCyl + 63, 220 * kCyl - 1, 2254848, 3540991), discarded};
  Result<std::vector<ApplyStep>> steps = OrderApplySteps(c.plan, c.table);
  ASSERT_TRUE(steps) << steps.error().message;
  ASSERT_EQ(steps->size(), 4u);
  EXPECT_EQ((*steps)[0],
            (ApplyStep{kTableOnlyStep, {{2, 16 * kCyl, 4194303}, {7, 3543040, 4194303}}}));
  EXPECT_EQ((*steps)[1].move_partition, 6u);
  EXPECT_EQ((*steps)[2].move_partition, 5u);
  EXPECT_EQ((*steps)[3].move_partition, 1u);
}

TEST(ApplyStepsTest, AMoveOverItsOwnEbrInUseIsRefused) {
  // Partition 6 moves down over the EBR 63 sectors before it: no table-only step can move
  // that EBR (it goes with partition 6's entry, which changes only with the move).
  Case c;
  c.table.label = LabelType::kDos;
  c.table.sector_size = kSector;
  c.table.first_usable_lba = 2048;
  c.table.partitions = {Part(2, 2048, 100000, false, PartitionKind::kExtended),
                        Part(5, 4096, 10239, true, PartitionKind::kLogical),
                        Part(6, 20543, 40000, true, PartitionKind::kLogical)};
  c.table.areas = {{"MBR", 0, 512}, {"EBR", 2048 * kSector, 512}, {"EBR", 20480 * kSector, 512}};
  c.plan.label = LabelType::kDos;
  c.plan.actions = {{2, 2048, 100000, 2048, 100000, ActionKind::kNone, 0, ""},
                    {5, 4096, 10239, 4096, 10239, ActionKind::kNone, 0, ""},
                    Move(6, 20543, 40000, 18432, 37889)};
  Result<std::vector<ApplyStep>> steps = OrderApplySteps(c.plan, c.table);
  ASSERT_FALSE(steps);
  EXPECT_NE(steps.error().message.find("sector 20480, the EBR of partition 6"), std::string::npos)
      << steps.error().message;
}

TEST(ApplyStepsTest, StepPlanKeepsOnlyTheStepsActions) {
  Case c =
      Gpt({Part(1, 63, 65534, true), Part(2, 65535, 589814, false), Part(3, 589815, 2686934, true)},
          {Move(1, 63, 65534, 2048, 67583), TableOnly(2, 65535, 589814, 67584, 589823),
           Move(3, 589815, 2686934, 589824, 2686975)});
  Plan step = StepPlan(c.plan, {3, {{2, 67584, 589823}, {3, 589824, 2686975}}}, c.table);
  EXPECT_EQ(step.actions[0].kind, ActionKind::kNone);
  EXPECT_EQ(step.actions[0].new_start_sector, 63u);
  EXPECT_EQ(step.actions[1], c.plan.actions[1]);
  EXPECT_EQ(step.actions[2], c.plan.actions[2]);
  MoveGeometry g = MoveOf(c.plan.actions[2], kSector);
  EXPECT_EQ(g.source_bytes, 589815u * kSector);
  EXPECT_EQ(g.dest_bytes, 589824u * kSector);
  EXPECT_EQ(g.length_bytes, (2686934u - 589815u + 1) * kSector);
  EXPECT_EQ(Direction(c.plan.actions[2]), "up");
}

// An independent check of one layout: sorted sweeps over the top-level and the logical
// partitions, and containment in the extended partition.
std::string LayoutProblem(const PartitionTable& t, const std::map<uint32_t, PlanAction>& at) {
  struct E {
    uint64_t start, end;
    uint32_t n;
  };
  std::vector<E> top, logical;
  const E* ext = nullptr;
  E ext_extent{};
  for (const Partition& p : t.partitions) {
    const PlanAction& a = at.at(p.number);
    E e{a.new_start_sector, a.new_end_sector, p.number};
    if (p.kind == PartitionKind::kLogical) {
      logical.push_back(e);
    } else {
      top.push_back(e);
    }
    if (p.kind == PartitionKind::kExtended) {
      ext_extent = e;
      ext = &ext_extent;
    }
  }
  for (std::vector<E>* list : {&top, &logical}) {
    std::sort(list->begin(), list->end(), [](const E& a, const E& b) { return a.start < b.start; });
    for (size_t i = 1; i < list->size(); ++i) {
      if ((*list)[i].start <= (*list)[i - 1].end) {
        return "partitions " + std::to_string((*list)[i - 1].n) + " and " +
               std::to_string((*list)[i].n) + " overlap";
      }
    }
  }
  for (const E& l : logical) {
    if (!ext || l.start <= ext->start || l.end > ext->end) {
      return "logical partition " + std::to_string(l.n) + " outside the extended one";
    }
  }
  return "";
}

std::string Describe(const PartitionTable& t, const std::vector<PlanAction>& actions) {
  std::string out;
  for (size_t i = 0; i < t.partitions.size(); ++i) {
    const Partition& p = t.partitions[i];
    const PlanAction& x = actions[i];
    out += "  " + std::to_string(p.number) + " " + std::string(ToString(p.kind)) + " " +
           std::to_string(p.start_sector) + "-" + std::to_string(p.end_sector()) +
           (p.contents.MayHoldData() ? " data" : "") + " -> " + std::to_string(x.new_start_sector) +
           "-" + std::to_string(x.new_end_sector) + " " + std::string(ToString(x.kind)) + "\n";
  }
  return out;
}

TEST(ApplyStepsTest, EveryPlanOfRandomLayoutsIsOrderedSafely) {
  int plans_with_moves = 0, multi_step = 0;
  for (uint64_t seed = 0; seed < 3000; ++seed) {
    test::RandomLayout r(seed);
    test::RandomLayoutOptions o;
    o.label = r.Chance(0.5) ? LabelType::kGpt : LabelType::kDos;
    o.sector_size = r.Chance(0.8) ? 512 : 4096;
    o.dos_first_lba = kMiB / o.sector_size;
    PartitionTable t = r.Make(o);
    Result<std::vector<PlanAction>> actions = PlanPartitions(t, Alignment{kMiB, 0});
    ASSERT_TRUE(actions) << seed;
    Plan plan;
    plan.label = t.label;
    plan.actions = *actions;
    if (std::none_of(actions->begin(), actions->end(),
                     [](const PlanAction& a) { return a.kind == ActionKind::kMoveData; })) {
      continue;
    }
    ++plans_with_moves;
    Result<std::vector<ApplyStep>> steps = OrderApplySteps(plan, t);
    ASSERT_TRUE(steps) << "seed " << seed << ": " << steps.error().message << "\n"
                       << Describe(t, plan.actions);
    multi_step += steps->size() > 1;

    // Replay: `at` is where each partition is (old place until its step), its data with it.
    std::map<uint32_t, PlanAction> at;
    std::map<uint32_t, const PlanAction*> action_of;
    for (const PlanAction& a : plan.actions) action_of[a.partition] = &a;
    for (const Partition& p : t.partitions) {
      PlanAction a;
      a.partition = p.number;
      a.new_start_sector = p.start_sector;
      a.new_end_sector = p.end_sector();
      at[p.number] = a;
    }
    std::set<uint32_t> done;
    // The table at an instant as libfdisk writes it, for where its EBRs are.
    auto table_at = [&] {
      PartitionTable now = t;
      for (Partition& p : now.partitions) {
        p.start_sector = at.at(p.number).new_start_sector;
        p.size_sectors = at.at(p.number).new_end_sector - p.start_sector + 1;
      }
      return now;
    };
    for (const ApplyStep& s : *steps) {
      const std::map<uint32_t, uint64_t> in_use = PredictEbrSectors(table_at(), t.first_usable_lba);
      if (s.move_partition != kTableOnlyStep) {
        const PlanAction& m = *action_of.at(s.move_partition);
        ASSERT_EQ(m.kind, ActionKind::kMoveData) << seed;
        const uint64_t last = m.new_start_sector + m.bytes_to_move / t.sector_size - 1;
        for (const auto& [n, sector] : in_use) {
          ASSERT_FALSE(sector >= m.new_start_sector && sector <= last)
              << "seed " << seed << ": moving " << m.partition << " overwrites the EBR of " << n
              << " in use at " << sector << "\n"
              << Describe(t, plan.actions);
        }
        for (const Partition& p : t.partitions) {
          if (p.number == m.partition || p.kind == PartitionKind::kExtended) continue;
          const bool data =
              p.contents.MayHoldData() || action_of.at(p.number)->kind == ActionKind::kMoveData;
          const PlanAction& q = at.at(p.number);
          if (data && m.new_start_sector <= q.new_end_sector && q.new_start_sector <= last) {
            FAIL() << "seed " << seed << ": moving " << m.partition << " overwrites the data of "
                   << p.number;
          }
        }
        ASSERT_TRUE(std::any_of(s.edits.begin(), s.edits.end(),
                                [&](const TableEdit& e) {
                                  return e.partition == m.partition &&
                                         e.start_sector == m.new_start_sector &&
                                         e.end_sector == m.new_end_sector;
                                }))
            << "seed " << seed << ": the moved partition's entry is not in its step";
      }
      for (const TableEdit& e : s.edits) {
        ASSERT_FALSE(done.count(e.partition))
            << "seed " << seed << ": " << e.partition << " changes after its final place";
        ASSERT_TRUE(action_of.count(e.partition)) << seed;
        const PlanAction& a = *action_of.at(e.partition);
        if (e.start_sector == a.new_start_sector && e.end_sector == a.new_end_sector) {
          done.insert(e.partition);
        } else {
          // Only an extended partition takes an intermediate place: the union of both.
          ASSERT_EQ(t.Find(e.partition)->kind, PartitionKind::kExtended) << seed;
          ASSERT_EQ(e.start_sector, std::min(a.old_start_sector, a.new_start_sector)) << seed;
          ASSERT_EQ(e.end_sector, std::max(a.old_end_sector, a.new_end_sector)) << seed;
        }
        at[e.partition].new_start_sector = e.start_sector;
        at[e.partition].new_end_sector = e.end_sector;
      }
      ASSERT_EQ(LayoutProblem(t, at), "") << "seed " << seed;
      // Every EBR of the step's table lies outside every partition.
      const PartitionTable now = table_at();
      for (const auto& [n, sector] : PredictEbrSectors(now, t.first_usable_lba)) {
        for (const Partition& p : now.partitions) {
          if (p.kind == PartitionKind::kExtended) continue;
          ASSERT_FALSE(sector >= p.start_sector && sector <= p.end_sector())
              << "seed " << seed << ": the EBR of " << n << " lands in " << p.number << "\n"
              << Describe(t, plan.actions);
        }
      }
    }
    for (const PlanAction& a : plan.actions) {
      const bool changes = a.kind == ActionKind::kMoveData || a.kind == ActionKind::kTableOnly;
      EXPECT_EQ(done.count(a.partition) == 1, changes) << "seed " << seed << " " << a.partition;
    }
  }
  // The sweep must reach what it is meant to test.
  EXPECT_GT(plans_with_moves, 500);
  EXPECT_GT(multi_step, 100);
}

}  // namespace
}  // namespace partalign
