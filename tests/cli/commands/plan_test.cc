// SPDX-License-Identifier: GPL-3.0-or-later
// partalign plan end to end: the two-era disk (2048-aligned starts, which partitions need a
// data move and how many bytes, a plan file bound to the disk, an sfdisk rendering the real
// sfdisk accepts and that yields the planned table), fresh layouts, errors, a seeded sweep of
// random layouts through the real sfdisk, and loop devices with real ext4/vfat filesystems and
// 4096-byte sectors.
#include <sys/stat.h>

#include <cstdlib>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "io/table/fdisk_table.h"
#include "partalign/layout/plan.h"
#include "partalign/layout/plan_render.h"
#include "partalign/layout/planner.h"
#include "partalign/util/units.h"
#include "support/device_test.h"
#include "support/loop_device.h"
#include "support/random_layout.h"
#include "support/run_command.h"
#include "support/sfdisk.h"
#include "support/temp_dir.h"
#include "support/two_era_disk.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::RunCommand;
using test::RunPartalign;

constexpr const char* kBridge = "usb-jmicron-0xffff";
// Seeded layouts the sweep writes with the real sfdisk; scripts/sweep-plan-sfdisk runs more.
constexpr int kDefaultSweepLayouts = 50;

std::string RunPlan(const std::vector<std::string>& args) {
  CommandResult r = RunPartalign(args);
  EXPECT_EQ(r.exit_code, 0) << test::Describe(args, r);
  return r.out;
}

TableRead Read(const std::string& target, std::optional<uint64_t> sector_size = {}) {
  Result<TableRead> t = ReadPartitionTable(target, {.sector_size = sector_size});
  EXPECT_TRUE(t) << t.error().message;
  return t ? *t : TableRead{};
}

// The table `after` is `before` with every partition at the place `plan` gives it: same
// numbers, kinds, types, names, UUIDs, attributes, boot flags, disk id and usable area.
void ExpectPlannedTable(const PartitionTable& before, const Plan& plan, const PartitionTable& after,
                        const std::string& context) {
  ASSERT_EQ(after.partitions.size(), before.partitions.size()) << context;
  EXPECT_EQ(after.label, before.label) << context;
  EXPECT_EQ(after.disk_id, before.disk_id) << context;
  if (before.label == LabelType::kGpt) {
    EXPECT_EQ(after.first_usable_lba, before.first_usable_lba) << context;
    EXPECT_EQ(after.last_usable_lba, before.last_usable_lba) << context;
  }
  for (size_t i = 0; i < before.partitions.size(); ++i) {
    const Partition& b = before.partitions[i];
    const Partition& a = after.partitions[i];
    const PlanAction& x = plan.actions[i];
    const std::string where = context + ", partition " + std::to_string(b.number);
    ASSERT_EQ(x.partition, b.number) << where;
    EXPECT_EQ(a.number, b.number) << where;
    EXPECT_EQ(a.kind, b.kind) << where;
    EXPECT_EQ(a.start_sector, x.new_start_sector) << where;
    EXPECT_EQ(a.end_sector(), x.new_end_sector) << where;
    EXPECT_EQ(a.type_code, b.type_code) << where;
    EXPECT_EQ(a.name, b.name) << where;
    EXPECT_EQ(a.uuid, b.uuid) << where;
    EXPECT_EQ(a.attributes, b.attributes) << where;
    EXPECT_EQ(a.bootable, b.bootable) << where;
  }
}

TEST(PlanCommandTest, TwoEraDiskGetsOneMiBStartsAndSaysWhatDataMoves) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::MakeTwoEraDisk(image);
  nlohmann::json j = nlohmann::json::parse(RunPlan({"plan", "--json", "--assume", kBridge, image}));
  ASSERT_EQ(j["actions"].size(), 4u);
  for (const nlohmann::json& a : j["actions"]) {
    EXPECT_NE(a["kind"], "impossible") << a.dump();
    EXPECT_EQ(a["new_start_sector"].get<uint64_t>() % 2048, 0u) << a.dump();
    EXPECT_EQ((a["new_end_sector"].get<uint64_t>() + 1) % 2048, 0u) << a.dump();
  }
  // Partitions 1-3 hold filesystems: their data moves, all of it; 4 is empty: a table edit.
  for (int i = 0; i < 3; ++i) {
    const nlohmann::json& a = j["actions"][i];
    EXPECT_EQ(a["kind"], "move-data") << a.dump();
    EXPECT_EQ(a["bytes_to_move"], test::kTwoEraSizes[i] * 512) << a.dump();
    EXPECT_NE(a["reason"].get<std::string>().find(" to move up"), std::string::npos) << a.dump();
  }
  EXPECT_EQ(j["actions"][3]["kind"], "table-only");
  EXPECT_EQ(j["actions"][3]["bytes_to_move"], 0);
  // The first one lands on 1 MiB.
  EXPECT_EQ(j["actions"][0]["new_start_sector"], 2048);
}

TEST(PlanCommandTest, PlanFileIsBoundToTheDiskAndItsTable) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::MakeTwoEraDisk(image);
  const std::string file = dir.File("plan.json");
  std::string text = RunPlan({"plan", "--assume", kBridge, "-o", file, image});
  EXPECT_NE(text.find("plan file written to '" + file + "'"), std::string::npos) << text;
  Result<Plan> plan = PlanFromJson(test::ReadFile(file));
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->disk.path, image);
  EXPECT_EQ(plan->disk.size_bytes, test::kTwoEraDiskBytes);
  EXPECT_EQ(plan->disk.logical_sector_size, 512u);
  EXPECT_EQ(plan->topology.optimal_io_size, 33553920u);
  EXPECT_EQ(plan->topology.origin, TopologyOrigin::kAssumed);
  EXPECT_EQ(plan->label, LabelType::kGpt);
  EXPECT_EQ(plan->alignment.grain_bytes, kMiB);
  EXPECT_EQ(plan->table_fingerprint, Read(image).table.fingerprint);
  nlohmann::json audit =
      nlohmann::json::parse(RunPartalign({"audit", "--json", "--assume", kBridge, image}).out);
  EXPECT_EQ(plan->table_fingerprint, audit["table_fingerprint"]);
  // --json prints the same document as the plan file.
  EXPECT_EQ(nlohmann::json::parse(RunPlan({"plan", "--json", "--assume", kBridge, image})),
            nlohmann::json::parse(test::ReadFile(file)));
}

TEST(PlanCommandTest, SfdiskRenderingIsAcceptedAndYieldsThePlannedTable) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::MakeTwoEraDisk(image);
  const std::string file = dir.File("plan.json");
  const std::string script =
      RunPlan({"plan", "--assume", kBridge, "--format", "sfdisk", "-o", file, image});
  // Data must move before this table means anything: the script says so.
  EXPECT_NE(script.find("# WARNING: partitions 1, 2, 3 start elsewhere"), std::string::npos)
      << script;
  EXPECT_NE(script.find("'partalign apply' on this plan's file (partalign plan -o) moves it first"),
            std::string::npos);
  const std::string copy = dir.File("copy.img");
  test::CreateSparseFile(copy, test::kTwoEraDiskBytes);
  TableRead before = Read(image);
  // sfdisk applies it to a blank copy as it is (a new label from the script alone).
  CommandResult r = test::WriteWithSfdisk(copy, script);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Result<Plan> plan = PlanFromJson(test::ReadFile(file));
  ASSERT_TRUE(plan);
  ExpectPlannedTable(before.table, *plan, Read(copy).table, "two-era disk");
}

TEST(PlanCommandTest, PlanWritesNothingToTheTarget) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::MakeTwoEraDisk(image);
  struct stat before {};
  ASSERT_EQ(::stat(image.c_str(), &before), 0);
  const std::string fingerprint = Read(image).table.fingerprint;
  for (const char* format : {"text", "markdown", "json", "sfdisk"}) {
    RunPlan({"plan", "--assume", kBridge, "--format", format, "-o", dir.File("p.json"), image});
  }
  struct stat after {};
  ASSERT_EQ(::stat(image.c_str(), &after), 0);
  EXPECT_EQ(before.st_mtim.tv_sec, after.st_mtim.tv_sec);
  EXPECT_EQ(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
  EXPECT_EQ(Read(image).table.fingerprint, fingerprint);
}

TEST(PlanCommandTest, TextAndMarkdownShowTheDiskMap) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::MakeTwoEraDisk(image);
  std::string text = RunPlan({"plan", "--assume", kBridge, image});
  EXPECT_NE(text.find("whole disk, 1 character = 64 MiB"), std::string::npos) << text;
  EXPECT_NE(text.find("  partition 2: start 65535 -> "), std::string::npos) << text;
  EXPECT_NE(text.find("4 partitions: 0 unchanged, 1 table-only, 3 move data"), std::string::npos)
      << text;
  std::string md = RunPlan({"plan", "--assume", kBridge, "--format", "markdown", image});
  EXPECT_EQ(md.rfind("# Alignment plan for `" + image + "`", 0), 0u) << md;
  EXPECT_NE(md.find("```text\nwhole disk"), std::string::npos) << md;
}

TEST(PlanCommandTest, LayoutOnAnEmptyDiskIsAcceptedBySfdisk) {
  test::TempDir dir;
  const std::string image = dir.File("empty.img");
  test::CreateSparseFile(image, 8ull << 30);
  const std::string spec = "size=512M,type=uefi,name=ESP;size=1000M,type=swap\ntype=linux";
  nlohmann::json j = nlohmann::json::parse(RunPlan({"plan", "--json", "--layout", spec, image}));
  EXPECT_TRUE(j["actions"].empty());
  ASSERT_EQ(j["layout"]["partitions"].size(), 3u);
  EXPECT_EQ(j["label"], "none");
  std::string script = RunPlan({"plan", "--format", "sfdisk", "--layout", spec, image});
  CommandResult r = test::WriteWithSfdisk(image, script);
  ASSERT_EQ(r.exit_code, 0) << script << r.err;
  const PartitionTable t = Read(image).table;
  ASSERT_EQ(t.partitions.size(), 3u);
  EXPECT_EQ(t.label, LabelType::kGpt);
  EXPECT_EQ(t.first_usable_lba, 2048u);
  EXPECT_EQ(t.partitions[0].start_sector, 2048u);
  EXPECT_EQ(t.partitions[0].name, "ESP");
  EXPECT_EQ(t.partitions[0].type_name, "EFI System");
  EXPECT_EQ(t.partitions[1].start_sector, 2048u + 1048576);
  EXPECT_EQ(t.partitions[1].type_name, "Linux swap");
  EXPECT_EQ(t.partitions[2].start_sector, 2048u + 1048576 + 2048000);
  EXPECT_EQ((t.partitions[2].end_sector() + 1) % 2048, 0u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(t.partitions[i].start_sector, j["layout"]["partitions"][i]["start_sector"]);
    EXPECT_EQ(t.partitions[i].end_sector(), j["layout"]["partitions"][i]["end_sector"]);
  }
  // Now it holds partitions: a fresh layout is refused, and the table audits as aligned.
  CommandResult refused = RunPartalign({"plan", "--layout", spec, image});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("already holds 3 partitions"), std::string::npos) << refused.err;
  EXPECT_EQ(RunPartalign({"audit", image}).exit_code, 0);
}

TEST(PlanCommandTest, DosLayoutIsAcceptedBySfdisk) {
  test::TempDir dir;
  const std::string image = dir.File("empty.img");
  test::CreateSparseFile(image, 1ull << 30);
  std::string script = RunPlan(
      {"plan", "--format", "sfdisk", "--layout", "label=dos;size=100M,bootable;type=S", image});
  CommandResult r = test::WriteWithSfdisk(image, script);
  ASSERT_EQ(r.exit_code, 0) << script << r.err;
  const PartitionTable t = Read(image).table;
  ASSERT_EQ(t.partitions.size(), 2u);
  EXPECT_EQ(t.label, LabelType::kDos);
  EXPECT_TRUE(t.partitions[0].bootable);
  EXPECT_EQ(t.partitions[0].start_sector, 2048u);
  EXPECT_EQ(t.partitions[1].type_code, "0x82");
  EXPECT_EQ(t.partitions[1].start_sector, 2048u + 204800);
}

TEST(PlanCommandTest, BadOptionsExitOne) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, 64ull << 20);
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{"plan", "--format", "html", image}, "html"},
           {{"plan", "--json", "--format", "sfdisk", image}, "contradict"},
           {{"plan", "--layout", "size=12X", image}, "item 1: size"},
           {{"plan", "--grain", "100", image}, "--grain"},
           {{"plan", dir.File("missing.img")}, "cannot open"},
           {{"plan", "--layout", "size=1G", image}, "does not fit"},
       }) {
    CommandResult r = RunPartalign(c.args);
    EXPECT_EQ(r.exit_code, 1) << test::Describe(c.args, r);
    EXPECT_NE(r.err.find(c.message), std::string::npos) << test::Describe(c.args, r);
  }
}

int SweepLayouts() {
  const char* env = std::getenv("PARTALIGN_SFDISK_SWEEP");
  return env ? std::atoi(env) : kDefaultSweepLayouts;
}

// One seeded layout: written with the real sfdisk, read back, planned (with random contents,
// since the image holds no data), rendered, applied with the real sfdisk to a blank copy,
// read back and compared with the plan.
void SweepOne(const test::TempDir& dir, uint64_t seed) {
  test::RandomLayout r(seed);
  test::RandomLayoutOptions o;
  o.label = r.Chance(0.5) ? LabelType::kGpt : LabelType::kDos;
  o.random_contents = false;
  PartitionTable layout = r.Make(o);
  const std::string context = "seed " + std::to_string(seed);
  const uint64_t bytes = layout.disk_size_sectors * 512;
  const std::string image = dir.File("sweep.img");
  const std::string copy = dir.File("sweep-copy.img");
  ::unlink(image.c_str());
  ::unlink(copy.c_str());
  test::CreateSparseFile(image, bytes);
  test::CreateSparseFile(copy, bytes);

  DeviceInfo device;
  device.identity.path = image;
  device.topology = DefaultTopology(512, bytes);
  Result<std::string> original = RenderSfdiskScript(EmptyPlan(layout, device, {kMiB, 0}), layout);
  ASSERT_TRUE(original) << context;
  CommandResult w = test::WriteWithSfdisk(image, *original);
  ASSERT_EQ(w.exit_code, 0) << context << "\n" << *original << w.err;
  PartitionTable table = Read(image).table;
  ASSERT_EQ(table.partitions.size(), layout.partitions.size()) << context << "\n" << *original;
  for (size_t i = 0; i < table.partitions.size(); ++i) {
    ASSERT_EQ(table.partitions[i].start_sector, layout.partitions[i].start_sector) << context;
    ASSERT_EQ(table.partitions[i].size_sectors, layout.partitions[i].size_sectors) << context;
    if (table.partitions[i].kind != PartitionKind::kExtended) {
      table.partitions[i].contents = r.Contents(table.partitions[i].size_sectors * 512);
    }
  }
  const Alignment alignment = r.Chance(0.2) ? Alignment{kMiB, 3584} : Alignment{kMiB, 0};
  Result<Plan> plan = MakePlan(table, device, alignment);
  ASSERT_TRUE(plan) << context << ": " << plan.error().message;
  Result<std::string> script = RenderSfdiskScript(*plan, table);
  ASSERT_TRUE(script) << context;
  CommandResult a = test::WriteWithSfdisk(copy, *script);
  ASSERT_EQ(a.exit_code, 0) << context << "\n" << *original << "\n" << *script << a.err;
  ExpectPlannedTable(table, *plan, Read(copy).table, context + "\n" + *script);
}

TEST(PlanCommandTest, SeededLayoutsApplyWithTheRealSfdisk) {
  test::TempDir dir;
  const int layouts = SweepLayouts();
  for (int seed = 0; seed < layouts; ++seed) {
    SweepOne(dir, static_cast<uint64_t>(seed) + 7000);
    if (HasFatalFailure()) return;
  }
}

// Adds the partition nodes of `loop` (the kernel here parses no tables; BLKPG does).
void AddPartitionNodes(const test::LoopDevice& loop) {
  CommandResult r = RunCommand({"partx", "-a", loop.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

TEST(PlanCommandTest, LoopDeviceWithRealExt4AndVfat) {
  PARTALIGN_REQUIRE_DEVICES();
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, 512ull << 20);
  ASSERT_EQ(test::WriteWithSfdisk(image,
                                  "label: gpt\nfirst-lba: 34\nstart=63, size=200000, name=old\n"
                                  "start=262143, size=131072, type=U, name=esp\n"
                                  "start=524288, size=262144, name=aligned\n")
                .exit_code,
            0);
  test::LoopDevice loop(image, 512);
  AddPartitionNodes(loop);
  ASSERT_EQ(RunCommand({"mkfs.ext4", "-q", "-F", "-b", "4096", loop.PartitionPath(1)}).exit_code,
            0);
  ASSERT_EQ(RunCommand({"mkfs.vfat", loop.PartitionPath(2)}).exit_code, 0);
  ASSERT_EQ(RunCommand({"mkfs.ext4", "-q", "-F", loop.PartitionPath(3)}).exit_code, 0);

  CommandResult audit = RunPartalign({"audit", "--json", loop.path()});
  ASSERT_EQ(audit.exit_code, 2) << audit.err;
  nlohmann::json j = nlohmann::json::parse(audit.out);
  EXPECT_EQ(j["topology"]["source"], "kernel");
  const nlohmann::json& p = j["partitions"];
  EXPECT_EQ(p[0]["fs_type"], "ext4");
  EXPECT_EQ(p[0]["fs_block_size"], 4096);
  EXPECT_EQ(p[0]["fs_size_bytes"], 200000ull * 512 / 4096 * 4096);  // whole 4 KiB blocks
  EXPECT_EQ(p[0]["has_data"], true);
  EXPECT_EQ(p[0]["aligned"], false);
  EXPECT_EQ(p[1]["fs_type"], "vfat");
  EXPECT_EQ(p[1]["aligned"], false);
  EXPECT_EQ(p[2]["fs_type"], "ext4");
  EXPECT_EQ(p[2]["aligned"], true);

  nlohmann::json plan = nlohmann::json::parse(RunPlan({"plan", "--json", loop.path()}));
  EXPECT_EQ(plan["disk"]["path"], loop.path());
  EXPECT_EQ(plan["topology"]["source"], "kernel");
  EXPECT_EQ(plan["actions"][0]["kind"], "move-data");
  EXPECT_EQ(plan["actions"][0]["new_start_sector"], 2048);
  EXPECT_EQ(plan["actions"][1]["kind"], "move-data");
  EXPECT_EQ(plan["actions"][1]["new_start_sector"].get<uint64_t>() % 2048, 0u);
  EXPECT_EQ(plan["actions"][2]["kind"], "none");
  // The ext4 filesystem in partition 1 is 4 KiB blocks of a partition of 200000 sectors: the
  // plan may end it anywhere, but never before the filesystem's last block.
  const uint64_t new_size = plan["actions"][0]["new_end_sector"].get<uint64_t>() -
                            plan["actions"][0]["new_start_sector"].get<uint64_t>() + 1;
  EXPECT_GE(new_size * 512, p[0]["fs_size_bytes"].get<uint64_t>());
}

TEST(PlanCommandTest, FourKnLoopDevicePlanAppliesWithSfdisk) {
  PARTALIGN_REQUIRE_DEVICES();
  // A 4Kn disk whose GPT (FirstUsableLBA 6) has partitions at 6 and 300: the 1 MiB grain is
  // 256 sectors. The rendering is applied with the real sfdisk to a second 4Kn loop device.
  test::TempDir dir;
  const std::string image = dir.File("4k.img");
  const std::string copy = dir.File("4k-copy.img");
  test::CreateSparseFile(image, 256ull << 20);
  test::CreateSparseFile(copy, 256ull << 20);
  test::LoopDevice loop(image, 4096);
  test::LoopDevice target(copy, 4096);
  CommandResult w = test::WriteWithSfdisk(loop.path(),
                                          "label: gpt\nfirst-lba: 6\nstart=6, size=200, name=a\n"
                                          "start=300, size=5000, name=b\n");
  ASSERT_EQ(w.exit_code, 0) << w.err;
  nlohmann::json j = nlohmann::json::parse(RunPlan({"plan", "--json", loop.path()}));
  EXPECT_EQ(j["disk"]["logical_sector_size"], 4096);
  EXPECT_EQ(j["grain_bytes"], kMiB);
  EXPECT_EQ(j["actions"][0]["new_start_sector"], 256);
  EXPECT_EQ(j["actions"][1]["new_start_sector"].get<uint64_t>() % 256, 0u);
  std::string script = RunPlan({"plan", "--format", "sfdisk", loop.path()});
  EXPECT_NE(script.find("sector-size: 4096\n"), std::string::npos) << script;
  CommandResult a = test::WriteWithSfdisk(target.path(), script);
  ASSERT_EQ(a.exit_code, 0) << script << a.err;
  Result<Plan> plan = PlanFromJson(j.dump());
  ASSERT_TRUE(plan) << plan.error().message;
  ExpectPlannedTable(Read(loop.path()).table, *plan, Read(target.path()).table, "4Kn");
}

}  // namespace
}  // namespace partalign
