// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/table/plan_check.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>

#include "partalign/layout/layout_spec.h"
#include "partalign/layout/planner.h"
#include "partalign/util/units.h"
#include "support/random_layout.h"
#include "support/xp_table.h"

namespace partalign {
namespace {

Partition Part(uint32_t number, uint64_t start, uint64_t size) {
  Partition p;
  p.number = number;
  p.start_sector = start;
  p.size_sectors = size;
  p.type_code = "0FC63DAF-8483-4772-8E79-3D69D8477DE4";
  p.uuid = "11111111-2222-3333-4444-55555555555" + std::to_string(number);
  p.name = "p" + std::to_string(number);
  p.contents.proof = ContentProof::kZeros;  // proven empty: a table-only move loses nothing
  return p;
}

struct World {
  Plan plan;
  DeviceInfo device;
  PartitionTable table;
};

World Matching() {
  World w;
  w.device.identity.path = "/dev/sdb";
  w.device.identity.serial = "WD-123";
  w.device.topology = {512, 4096, 4096, 0, 0, 8ull << 30, TopologyOrigin::kKernel};
  w.table.label = LabelType::kGpt;
  w.table.fingerprint = "xxh64:00000000000000aa";
  w.table.first_usable_lba = 34;
  w.table.last_usable_lba = 16777182;
  w.table.disk_id = "3A0B3E5C-7F37-4B43-8C2E-1D7A0F5E9B11";
  w.table.partitions = {Part(1, 63, 20000), Part(2, 40000, 20480)};
  w.plan.disk = IdentityOf(w.device);
  w.plan.topology = w.device.topology;
  w.plan.label = LabelType::kGpt;
  w.plan.table_fingerprint = w.table.fingerprint;
  w.plan.alignment = {kMiB, 0};
  w.plan.actions = {{1, 63, 20062, 2048, 20062, ActionKind::kTableOnly, 0, "no data"},
                    {2, 40000, 60479, 40000, 60479, ActionKind::kNone, 0, "aligned"}};
  return w;
}

TEST(PlanCheckTest, MatchingDiskHasNoMismatches) {
  World w = Matching();
  EXPECT_TRUE(PlanMismatches(w.plan, w.device, w.table).empty());
  // The table's identifier as libfdisk prints it or in lower case, or absent (older plans).
  w.plan.disk.table_id = "3a0b3e5c-7f37-4b43-8c2e-1d7a0f5e9b11";
  EXPECT_TRUE(PlanMismatches(w.plan, w.device, w.table).empty());
  w.plan.disk.table_id = w.table.disk_id;
  EXPECT_TRUE(PlanMismatches(w.plan, w.device, w.table).empty());
  // The path is not identity: the same disk under another name.
  w.device.identity.path = "/dev/disk/by-id/wwn-0x5000";
  EXPECT_TRUE(PlanMismatches(w.plan, w.device, w.table).empty());
}

TEST(PlanCheckTest, EachDifferenceIsNamed) {
  struct Case {
    std::function<void(World&)> change;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](World& w) { w.device.topology.size_bytes = 4ull << 30; },
       "size: plan 8589934592 bytes, disk 4294967296 bytes"},
      {[](World& w) { w.device.topology.logical_sector_size = 4096; },
       "logical sector size: plan 512, disk 4096"},
      {[](World& w) { w.device.identity.serial = "WD-999"; },
       "serial: plan 'WD-123', disk 'WD-999'"},
      {[](World& w) { w.device.identity.serial.clear(); }, "serial: plan 'WD-123', disk none"},
      {[](World& w) { w.device.identity.wwn = "0x5000"; }, "WWN: plan none, disk '0x5000'"},
      {[](World& w) { w.table.fingerprint = "xxh64:00000000000000bb"; },
       "table fingerprint: plan xxh64:00000000000000aa, disk xxh64:00000000000000bb"},
      {[](World& w) { w.table.label = LabelType::kDos; }, "partition table: plan gpt, disk dos"},
      // A plan naming another disk GUID than the table's was edited (the fingerprint agreeing).
      {[](World& w) { w.plan.disk.table_id = "9F0B3E5C-7F37-4B43-8C2E-1D7A0F5E9B99"; },
       "disk GUID: plan '9F0B3E5C-7F37-4B43-8C2E-1D7A0F5E9B99', disk "
       "'3A0B3E5C-7F37-4B43-8C2E-1D7A0F5E9B11'"},
      {[](World& w) { w.device.topology.physical_sector_size = 512; },
       "topology: physical sector size: plan 4096, disk 512"},
      {[](World& w) { w.device.topology.optimal_io_size = 33553920; },
       "topology: optimal I/O size: plan 0, disk 33553920"},
      {[](World& w) { w.table.partitions[0].start_sector = 64; },
       "partition 1: plan sectors 63-20062, disk sectors 64-20063"},
      {[](World& w) { w.table.partitions.pop_back(); },
       "partition 2: in the plan, not on the disk"},
  };
  for (const Case& c : cases) {
    World w = Matching();
    c.change(w);
    std::vector<std::string> m = PlanMismatches(w.plan, w.device, w.table);
    ASSERT_FALSE(m.empty()) << c.message;
    EXPECT_EQ(m.front(), c.message);
  }
}

// Which case a stale plan is, and what to run: issue 40, item 3.
TEST(PlanCheckTest, TheRefusalSaysAnotherDiskOrTheSameDiskChanged) {
  // Loop devices: no serial, no WWN; the table's disk GUID is what tells the disks apart.
  World w = Matching();
  w.device.identity.serial.clear();
  w.plan.disk = IdentityOf(w.device);
  w.plan.disk.table_id = w.table.disk_id;
  w.device.identity.path = "/dev/loop4";

  World twin = w;  // another disk with the same layout: another GUID, another fingerprint
  twin.table.disk_id = "9F0B3E5C-7F37-4B43-8C2E-1D7A0F5E9B99";
  twin.table.fingerprint = "xxh64:00000000000000cc";
  StalePlan another = ClassifyStalePlan(twin.plan, twin.device, twin.table);
  EXPECT_EQ(another.kind, StalePlanCase::kAnotherDisk);
  std::vector<std::string> lines = StalePlanRefusal(
      twin.plan, twin.device, twin.table, PlanMismatches(twin.plan, twin.device, twin.table),
      "/tmp/t/plan.json", "/dev/loop4");
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0],
            "refusing to apply '/tmp/t/plan.json' to '/dev/loop4': it is another disk than the "
            "plan's '/dev/sdb' (its table's disk GUID is '9F0B3E5C-7F37-4B43-8C2E-1D7A0F5E9B99', "
            "the plan's '3A0B3E5C-7F37-4B43-8C2E-1D7A0F5E9B11'):");
  EXPECT_EQ(lines[1],
            "  table fingerprint: plan xxh64:00000000000000aa, disk xxh64:00000000000000cc");
  EXPECT_EQ(lines[2], "nothing was written");
  EXPECT_EQ(lines[3],
            "to align '/dev/loop4', plan it (the plan stays right for its own disk): partalign "
            "plan --output /tmp/t/plan-loop4.json /dev/loop4");

  World changed = w;  // the same GUID (in another case), partition 1 moved by another tool
  changed.table.disk_id = "3a0b3e5c-7f37-4b43-8c2e-1d7a0f5e9b11";
  changed.table.partitions[0].start_sector = 2048;
  changed.table.fingerprint = "xxh64:00000000000000dd";
  EXPECT_EQ(ClassifyStalePlan(changed.plan, changed.device, changed.table).kind,
            StalePlanCase::kChanged);
  lines = StalePlanRefusal(changed.plan, changed.device, changed.table,
                           PlanMismatches(changed.plan, changed.device, changed.table), "plan.json",
                           "/dev/loop4");
  EXPECT_EQ(lines.front(),
            "refusing to apply 'plan.json' to '/dev/loop4': it is the plan's disk (the same disk "
            "GUID 3A0B3E5C-7F37-4B43-8C2E-1D7A0F5E9B11), but it changed since the plan was made:");
  EXPECT_EQ(lines.back(),
            "plan it again as it is now: partalign plan --output plan.json /dev/loop4");

  // A serial decides before the table: another disk even with a copy of the table on it.
  World serial = Matching();
  serial.plan.disk.table_id = serial.table.disk_id;
  serial.device.identity.serial = "WD-999";
  serial.device.topology.size_bytes = 4ull << 30;
  StalePlan by_serial = ClassifyStalePlan(serial.plan, serial.device, serial.table);
  EXPECT_EQ(by_serial.kind, StalePlanCase::kAnotherDisk);
  EXPECT_EQ(by_serial.why, "its serial is 'WD-999', the plan's 'WD-123'");

  // A plan of an older partalign (no table_id) on a disk without a serial: cannot tell.
  World old = w;
  old.plan.disk.table_id.clear();
  old.table.fingerprint = "xxh64:00000000000000ee";
  EXPECT_EQ(ClassifyStalePlan(old.plan, old.device, old.table).kind, StalePlanCase::kUnknown);
  lines = StalePlanRefusal(old.plan, old.device, old.table,
                           PlanMismatches(old.plan, old.device, old.table), "p.json", "/dev/loop4");
  EXPECT_NE(lines.front().find("nothing on it tells which"), std::string::npos) << lines.front();

  // The same disk and table with another topology: the plan's --assume, not "changed".
  World topology = w;
  topology.plan.topology.optimal_io_size = 33553920;
  topology.plan.topology.origin = TopologyOrigin::kAssumed;
  EXPECT_EQ(ClassifyStalePlan(topology.plan, topology.device, topology.table).kind,
            StalePlanCase::kTopology);
  // An assumed topology goes into the command for a changed disk.
  topology.table.partitions[0].start_sector = 2048;
  lines = StalePlanRefusal(topology.plan, topology.device, topology.table,
                           PlanMismatches(topology.plan, topology.device, topology.table), "p.json",
                           "/dev/loop4");
  EXPECT_EQ(lines.back(),
            "plan it again as it is now: partalign plan --output p.json --assume "
            "'log=512,phys=4096,min-io=4096,opt-io=33553920,align-offset=0' /dev/loop4");
}

// Issue 37: a plan whose disk.table_id was edited (its table fingerprint, which covers the
// identifier, agrees with the disk) was called "another disk", with the advice to plan that
// other disk. It is this disk's plan, edited: said so, and planned again under its own name.
TEST(PlanCheckTest, AnEditedTableIdentifierIsAnEditedPlanNotAnotherDisk) {
  World w = Matching();
  w.device.identity.serial.clear();
  w.plan.disk = IdentityOf(w.device);
  w.plan.disk.table_id = "9F0B3E5C-7F37-4B43-8C2E-1D7A0F5E9B99";
  w.device.identity.path = "/dev/loop4";
  StalePlan edited = ClassifyStalePlan(w.plan, w.device, w.table);
  EXPECT_EQ(edited.kind, StalePlanCase::kEdited);
  std::vector<std::string> lines =
      StalePlanRefusal(w.plan, w.device, w.table, PlanMismatches(w.plan, w.device, w.table),
                       "/tmp/t/plan.json", "/dev/loop4");
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0],
            "refusing to apply '/tmp/t/plan.json' to '/dev/loop4': the plan file was edited: it "
            "does not match the table identifier of this disk (the plan says disk GUID "
            "'9F0B3E5C-7F37-4B43-8C2E-1D7A0F5E9B99', the disk's table "
            "'3A0B3E5C-7F37-4B43-8C2E-1D7A0F5E9B11'), although its table fingerprint does:");
  EXPECT_EQ(lines[1],
            "  disk GUID: plan '9F0B3E5C-7F37-4B43-8C2E-1D7A0F5E9B99', disk "
            "'3A0B3E5C-7F37-4B43-8C2E-1D7A0F5E9B11'");
  EXPECT_EQ(lines[2], "nothing was written");
  EXPECT_EQ(lines[3], "plan it again: partalign plan --output /tmp/t/plan.json /dev/loop4");
  // With another fingerprint as well, it is another disk (the twin above).
  w.table.fingerprint = "xxh64:00000000000000cc";
  EXPECT_EQ(ClassifyStalePlan(w.plan, w.device, w.table).kind, StalePlanCase::kAnotherDisk);
}

TEST(PlanCheckTest, AssumedTopologyNamesTheAssumeSpec) {
  World w = Matching();
  w.plan.topology.optimal_io_size = 33553920;
  w.plan.topology.origin = TopologyOrigin::kAssumed;
  std::vector<std::string> m = PlanMismatches(w.plan, w.device, w.table);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[1],
            "topology: the plan was made with an assumed topology; to apply it to this disk "
            "anyway, assume the same: --assume "
            "'log=512,phys=4096,min-io=4096,opt-io=33553920,align-offset=0'");
  w.device.topology = w.plan.topology;  // apply --assume with the same values
  EXPECT_TRUE(PlanMismatches(w.plan, w.device, w.table).empty());
}

TEST(PlanCheckTest, TableVersusPlanEntryByEntry) {
  World w = Matching();
  PartitionTable after = w.table;
  after.partitions[0].start_sector = 2048;
  after.partitions[0].size_sectors = 18015;
  EXPECT_TRUE(TableVersusPlan(w.plan, w.table, after).empty());

  struct Case {
    std::function<void(PartitionTable&)> change;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](PartitionTable& t) { t.partitions[0].start_sector = 63; },
       "partition 1: sectors 63-18077, plan 2048-20062"},
      {[](PartitionTable& t) { t.partitions[1].size_sectors = 1; },
       "partition 2: sectors 40000-40000, plan 40000-60479"},
      {[](PartitionTable& t) { t.partitions[1].uuid = "X"; },
       "partition 2: UUID '11111111-2222-3333-4444-555555555552' before, 'X' after"},
      {[](PartitionTable& t) { t.partitions[0].name = "renamed"; },
       "partition 1: name 'p1' before, 'renamed' after"},
      {[](PartitionTable& t) { t.partitions[0].bootable = true; },
       "partition 1: boot flag clear before, set after"},
      {[](PartitionTable& t) { t.partitions.pop_back(); }, "partition 2: missing after the change"},
      {[](PartitionTable& t) { t.partitions.push_back(Part(3, 70000, 10)); },
       "partition 3: new after the change"},
      {[](PartitionTable& t) { t.disk_id = "other"; },
       "disk identifier: 3A0B3E5C-7F37-4B43-8C2E-1D7A0F5E9B11 before, other after"},
      {[](PartitionTable& t) { t.first_usable_lba = 2048; },
       "usable sectors: 34-16777182 before, 2048-16777182 after"},
  };
  for (const Case& c : cases) {
    PartitionTable changed = after;
    c.change(changed);
    std::vector<std::string> m = TableVersusPlan(w.plan, w.table, changed);
    ASSERT_EQ(m.size(), 1u) << c.message;
    EXPECT_EQ(m[0], c.message);
  }
}

TEST(PlanCheckTest, InconsistentPlansAreNamed) {
  World w = Matching();
  EXPECT_TRUE(PlanInconsistencies(w.plan, w.table).empty());
  // An unaligned new start.
  World unaligned = Matching();
  unaligned.plan.actions[0].new_start_sector = 2049;
  std::vector<std::string> m = PlanInconsistencies(unaligned.plan, unaligned.table);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0],
            "partition 1: new start sector 2049 is not on the plan's alignment (grain "
            "1048576 bytes, offset 0 bytes)");
  // A partition with data "moved" by the table alone.
  World data = Matching();
  data.table.partitions[0].contents.proof = ContentProof::kSignature;
  data.table.partitions[0].contents.fs_type = "ext4";
  m = PlanInconsistencies(data.plan, data.table);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0],
            "partition 1 holds data (ext4) but the plan moves its start as 'table-only': "
            "the data would stay behind");
  // Overlaps in the table asked for.
  World overlap = Matching();
  overlap.plan.actions[0].new_end_sector = 45000;
  m = PlanInconsistencies(overlap.plan, overlap.table);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].rfind("the table the plan asks for is not valid: partitions 1 (sectors "
                       "2048-45000) and 2 (sectors 40000-60479) overlap",
                       0),
            0u)
      << m[0];
  // Beyond the usable area.
  World outside = Matching();
  outside.plan.actions[1] = {2, 40000, 60479, 16777216 - 2048, 16777215, ActionKind::kTableOnly,
                             0, ""};
  m = PlanInconsistencies(outside.plan, outside.table);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_NE(m[0].find("lies outside the usable area 34-16777182"), std::string::npos) << m[0];
}

// A fresh layout (plan --layout, the planner) goes through the same check: what plan --layout
// makes passes, and a hand-edited layout off the alignment, outside the disk or without room
// for GPT's headers is named.
TEST(PlanCheckTest, FreshLayoutsAreCheckedToo) {
  World w = Matching();
  PartitionTable empty;
  empty.label = LabelType::kNone;
  empty.sector_size = 512;
  empty.disk_size_sectors = w.device.topology.size_bytes / 512;
  Result<LayoutSpec> spec = ParseLayoutSpec("size=512M,type=uefi;size=1G;type=linux");
  ASSERT_TRUE(spec) << spec.error().message;
  Result<Plan> plan = MakeLayoutPlan(*spec, empty, w.device, {kMiB, 0});
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_TRUE(plan->layout);
  EXPECT_TRUE(PlanInconsistencies(*plan, empty).empty());

  Plan unaligned = *plan;
  unaligned.layout->partitions[1].start_sector += 1;
  std::vector<std::string> m = PlanInconsistencies(unaligned, empty);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].rfind("partition 2: start sector", 0), 0u) << m[0];
  EXPECT_NE(m[0].find("is not on the plan's alignment"), std::string::npos) << m[0];

  Plan beyond = *plan;
  beyond.layout->last_usable_lba = empty.disk_size_sectors - 1;
  beyond.layout->partitions.back().end_sector = empty.disk_size_sectors - 1;
  m = PlanInconsistencies(beyond, empty);
  ASSERT_FALSE(m.empty());
  EXPECT_NE(m[0].find("leave no room for GPT's headers and entries"), std::string::npos) << m[0];

  Plan outside = *plan;
  outside.layout->partitions.back().end_sector = outside.layout->last_usable_lba + 1;
  m = PlanInconsistencies(outside, empty);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_NE(m[0].find("lies outside the usable area"), std::string::npos) << m[0];
}

TEST(PlanCheckTest, ThePlannersOwnPlansPassEveryCheck) {
  // The checks of a hand-edited plan (PlanFromJson, PlanInconsistencies) never refuse a plan
  // the planner made: random layouts, GPT and DOS, 512 and 4096, grains with and without offset.
  int checked = 0;
  for (int seed = 0; seed < 1000; ++seed) {
    test::RandomLayout r(static_cast<uint64_t>(seed));
    test::RandomLayoutOptions o;
    o.label = r.Chance(0.5) ? LabelType::kGpt : LabelType::kDos;
    o.sector_size = r.Chance(0.8) ? 512 : 4096;
    o.dos_first_lba = kMiB / o.sector_size;
    PartitionTable t = r.Make(o);
    Alignment a = r.Chance(0.3) ? Alignment{kMiB, o.sector_size == 512 ? 3584u : 0u}
                                : Alignment{kMiB * (r.Chance(0.5) ? 1 : 4), 0};
    Result<std::vector<PlanAction>> actions = PlanPartitions(t, a);
    ASSERT_TRUE(actions) << "seed " << seed << ": " << actions.error().message;
    Plan plan;
    plan.disk = {"/dev/sdz", t.disk_size_sectors * t.sector_size, t.sector_size, "", ""};
    plan.topology.logical_sector_size = t.sector_size;
    plan.topology.size_bytes = plan.disk.size_bytes;
    plan.label = t.label;
    plan.table_fingerprint = "xxh64:0000000000000000";
    plan.alignment = a;
    plan.actions = *actions;
    Result<Plan> back = PlanFromJson(PlanToJson(plan).dump());
    ASSERT_TRUE(back) << "seed " << seed << ": " << back.error().message;
    std::vector<std::string> m = PlanInconsistencies(*back, t);
    ASSERT_TRUE(m.empty()) << "seed " << seed << ": " << m.front();
    ++checked;
  }
  EXPECT_EQ(checked, 1000);
}

// A plan of issue 38's XP disk that shrinks its swap (plan --make-room) and what apply read of
// each partition's contents.
struct ShrinkWorld {
  PartitionTable table = test::XpDiskTable();
  Plan plan;
  std::vector<ShrinkOffer> offers;
};

ShrinkWorld XpShrinkPlan() {
  ShrinkWorld w;
  for (const Partition& p : w.table.partitions) {
    if (p.kind == PartitionKind::kExtended) continue;
    ShrinkWay way = ShrinkWayFor(p.contents.fs_type);
    w.offers.push_back({p.number, way.tool, way.reason, 16 * kMiB, 4 * kMiB});
  }
  PlanOptions options;
  options.shrinks.push_back(
      {7, ShrinkTool::kMkswap, w.table.Find(7)->size_sectors - 2 * kMiB / 512});
  Result<std::vector<PlanAction>> actions = PlanPartitions(w.table, {kMiB, 0}, options);
  EXPECT_TRUE(actions) << actions.error().message;
  w.plan.disk = {"disk.img", w.table.disk_size_sectors * 512, 512, "", ""};
  w.plan.topology.logical_sector_size = 512;
  w.plan.topology.physical_sector_size = 512;
  w.plan.topology.minimum_io_size = 512;
  w.plan.topology.size_bytes = w.plan.disk.size_bytes;
  w.plan.label = LabelType::kDos;
  w.plan.alignment = {kMiB, 0};
  if (actions) w.plan.actions = *actions;
  return w;
}

TEST(PlanCheckTest, AShrinkIsRecomputedAndItsClaimsChecked) {
  ShrinkWorld w = XpShrinkPlan();
  Result<Plan> back = PlanFromJson(PlanToJson(w.plan).dump());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, w.plan);
  EXPECT_EQ(PlanShrinks(w.plan).size(), 1u);
  EXPECT_TRUE(PlanInconsistencies(w.plan, w.table).empty());
  // The shrunk swap's end is the tool's, not a tail apply must read as zeros.
  EXPECT_TRUE(PartitionsLeftBehind(w.plan, w.table).tails.empty());
  RecomputedPlan same = RecomputePlan(w.plan, w.table, {}, w.offers);
  ASSERT_TRUE(same.refusals.empty()) << same.refusals.front();
  EXPECT_EQ(same.actions, w.plan.actions);

  const size_t swap = 4;  // actions[4]: partition 7
  ASSERT_TRUE(w.plan.actions[swap].shrink);
  auto refusals = [&](const std::function<void(ShrinkWorld&)>& change) {
    ShrinkWorld v = w;
    change(v);
    return RecomputePlan(v.plan, v.table, {}, v.offers).refusals;
  };
  auto names = [](const std::vector<std::string>& r, const std::string& field) {
    return std::any_of(r.begin(), r.end(),
                       [&](const std::string& m) { return m.rfind(field, 0) == 0; });
  };
  std::vector<std::string> r =
      refusals([&](ShrinkWorld& v) { v.plan.actions[swap].shrink->tool = ShrinkTool::kResize2fs; });
  EXPECT_TRUE(names(r, "actions[4].shrink.tool: the plan says resize2fs")) << r.front();
  r = refusals([&](ShrinkWorld& v) { v.offers[3].min_bytes = 400 * kMiB; });
  EXPECT_TRUE(names(r, "actions[4].shrink.size_sectors:")) << r.front();
  r = refusals([&](ShrinkWorld& v) {
    v.offers[3] = {7, std::nullopt, "it holds a hibernation image: resume it first", 0, 0};
  });
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(r[0].find("cannot be shrunk: it holds a hibernation image"), std::string::npos) << r[0];
  r = refusals([&](ShrinkWorld& v) { v.offers.clear(); });
  EXPECT_TRUE(names(r, "actions[4].shrink:")) << r.front();
  // Without its shrink, the layout cuts into the swap.
  r = refusals([&](ShrinkWorld& v) { v.plan.actions[swap].shrink.reset(); });
  EXPECT_FALSE(r.empty());
}

}  // namespace
}  // namespace partalign
