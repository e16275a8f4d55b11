// SPDX-License-Identifier: GPL-3.0-or-later
// apply of fresh-layout plans (`plan --layout`, the interactive planner) on loop devices: the
// whole contract - a backup of every sector the new table uses (and of the old table's), the
// ordered write, the table read back and compared with the plan, the kernel told through BLKPG -
// on a disk without a table, over an empty table of the other label, over partitions that hold
// no data; and restore puts the disk back as it was.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "io/device/device_probe.h"
#include "io/table/fdisk_table.h"
#include "partalign/layout/layout_spec.h"
#include "partalign/layout/plan.h"
#include "support/apply_layouts.h"
#include "support/device_test.h"
#include "support/loop_device.h"
#include "support/partitioned_loop.h"
#include "support/plan_maker.h"
#include "support/run_command.h"
#include "support/sfdisk.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::RunPartalign;

constexpr uint64_t kDiskBytes = 64ull << 20;

CommandResult RunOk(const std::vector<std::string>& args) {
  CommandResult r = RunPartalign(args);
  EXPECT_EQ(r.exit_code, 0) << test::Describe(args, r);
  return r;
}

std::string OnlyBackup(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path());
  EXPECT_EQ(files.size(), 1u);
  return files.empty() ? "" : files.front();
}

// A loop device over a fresh sparse image, with an optional table written by sfdisk first.
struct Disk {
  test::TempDir dir;
  std::string image = dir.File("disk.img");
  std::unique_ptr<test::LoopDevice> loop;
  explicit Disk(unsigned sector_size, const std::string& script = "") {
    test::CreateSparseFile(image, kDiskBytes);
    loop = std::make_unique<test::LoopDevice>(image, sector_size);
    if (!script.empty()) {
      CommandResult r = test::WriteWithSfdisk(loop->path(), script);
      if (r.exit_code != 0) throw std::runtime_error("sfdisk: " + r.err);
    }
  }
  const std::string& dev() const { return loop->path(); }
};

TEST(ApplyFreshTest, GptOnADiskWithoutATableAndRestoreBack) {
  PARTALIGN_REQUIRE_DEVICES();
  Disk d(512);
  const std::string plan = d.dir.File("plan.json");
  RunOk({"plan", "--layout", "size=16M,type=uefi;type=linux", "-o", plan, d.dev()});
  const std::string backups = d.dir.File("backups");
  CommandResult r = RunOk({"apply", "--yes", "--backup-dir", backups, plan});
  EXPECT_NE(r.out.find("A fresh gpt table"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Verified: the table on"), std::string::npos) << r.out;
  nlohmann::json t = test::SfdiskJson(d.dev());
  EXPECT_EQ(t["label"], "gpt");
  ASSERT_EQ(t["partitions"].size(), 2u);
  EXPECT_EQ(t["partitions"][0]["start"], 2048);
  EXPECT_EQ(t["partitions"][0]["size"], 32768);
  EXPECT_EQ(t["partitions"][1]["start"], 2048 + 32768);
  // The kernel knows them (BLKPG).
  EXPECT_EQ(test::KernelStartSize(*d.loop, 1), (std::pair<uint64_t, uint64_t>{2048, 32768}));
  EXPECT_EQ(test::KernelStartSize(*d.loop, 2).first, 2048u + 32768);
  // restore puts the sectors back: no table again, no partitions in the kernel.
  RunOk({"restore", "--yes", OnlyBackup(backups)});
  Result<TableRead> after = ReadPartitionTable(d.dev(), {.probe_contents = false});
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_EQ(after->table.label, LabelType::kNone);
  EXPECT_EQ(test::KernelStartSize(*d.loop, 1), (std::pair<uint64_t, uint64_t>{0, 0}));
}

// A DOS layout over an empty GPT: the new MBR takes sector 0, the old primary header and
// entries are zeroed (the backup ones lie inside the new partition and stay partition space).
TEST(ApplyFreshTest, DosOverAnEmptyGpt) {
  PARTALIGN_REQUIRE_DEVICES();
  Disk d(512, "label: gpt\n");
  const std::string plan = d.dir.File("plan.json");
  RunOk({"plan", "--layout", "label=dos;size=8M;type=linux", "-o", plan, d.dev()});
  RunOk({"apply", "--yes", "--backup-dir", d.dir.File("backups"), plan});
  nlohmann::json t = test::SfdiskJson(d.dev());
  EXPECT_EQ(t["label"], "dos");
  ASSERT_EQ(t["partitions"].size(), 2u);  // 8 MiB, then the rest up to the end of the disk
  CommandResult blkid = test::RunCommand({"blkid", "-p", "-o", "value", "-s", "PTTYPE", d.dev()});
  EXPECT_EQ(blkid.out, "dos\n") << blkid.err;
  std::ifstream f(d.image, std::ios::binary);
  f.seekg(512);
  std::string header(512, 'x');
  f.read(header.data(), 512);
  EXPECT_EQ(header, std::string(512, '\0')) << "the old GPT header is still at LBA 1";
}

// Over a table whose partitions hold no data (the planner's fresh layout after deleting them):
// the kernel loses the old partitions and gets the new one.
TEST(ApplyFreshTest, OverPartitionsWithoutData) {
  PARTALIGN_REQUIRE_DEVICES();
  test::PartitionedLoop disk(test::ApplyLayoutNamed("gpt_512").script, 512);
  EXPECT_NE(test::KernelStartSize(disk.loop(), 3).first, 0u);
  // A plan bound to this table, with a layout instead of actions (what the planner writes).
  Plan p = test::MakeTableOnlyPlan(disk.device());
  p.actions.clear();
  p.layout = PlanLayout{LabelType::kGpt, 2048, 131038, {}};
  p.layout->partitions.push_back(
      {1, 4096, 8191, "0FC63DAF-8483-4772-8E79-3D69D8477DE4", "root", "", false});
  const std::string plan = disk.File("plan.json");
  test::WritePlanFile(plan, p);
  RunOk(test::ApplyArgs(disk, plan));
  nlohmann::json t = test::SfdiskJson(disk.device());
  ASSERT_EQ(t["partitions"].size(), 1u);
  EXPECT_EQ(t["partitions"][0]["start"], 4096);
  EXPECT_EQ(t["partitions"][0]["name"], "root");
  EXPECT_EQ(t["firstlba"], 2048);
  EXPECT_EQ(test::KernelStartSize(disk.loop(), 1), (std::pair<uint64_t, uint64_t>{4096, 4096}));
  EXPECT_EQ(test::KernelStartSize(disk.loop(), 3), (std::pair<uint64_t, uint64_t>{0, 0}));
}

TEST(ApplyFreshTest, FourKnDryRunWritesNothing) {
  PARTALIGN_REQUIRE_DEVICES();
  Disk d(4096);
  const std::string plan = d.dir.File("plan.json");
  RunOk({"plan", "--layout", "size=8M;type=L", "-o", plan, d.dev()});
  CommandResult r = RunOk({"apply", "--dry-run", plan});
  EXPECT_NE(r.out.find("Dry run: nothing was written."), std::string::npos) << r.out;
  Result<TableRead> after = ReadPartitionTable(d.dev(), {.probe_contents = false});
  ASSERT_TRUE(after);
  EXPECT_EQ(after->table.label, LabelType::kNone);
  RunOk({"apply", "--yes", "--backup-dir", d.dir.File("b"), plan});
  nlohmann::json t = test::SfdiskJson(d.dev());
  EXPECT_EQ(t["partitions"][0]["start"], 256);  // 1 MiB in 4 KiB sectors
  EXPECT_EQ(t["sectorsize"], 4096);
}

}  // namespace
}  // namespace partalign

namespace partalign {
namespace {

// A disk without a partition table is not an empty disk: a filesystem written on the whole of
// it, or data without any signature, would be overwritten by the new table's sectors. plan
// refuses a layout over a recognised one; apply refuses both, naming what is there, and
// writes nothing (docs/audit-plan.md, "Empty is proven").
TEST(ApplyFreshTest, DataOnTheWholeDiskIsNotOverwrittenByAFreshTable) {
  PARTALIGN_REQUIRE_DEVICES();
  Disk ext4(512);
  ASSERT_EQ(test::RunCommand({"mkfs.ext4", "-q", "-F", ext4.dev()}).exit_code, 0);
  CommandResult planned = RunPartalign({"plan", "--layout", "size=16M;type=linux", ext4.dev()});
  EXPECT_EQ(planned.exit_code, 1) << planned.err;
  EXPECT_NE(planned.err.find("holds ext4 (at byte 1080) on the whole disk, without a partition "
                             "table"),
            std::string::npos)
      << planned.err;
  // The plan plan --layout would have made (through the core, which knows nothing of disks):
  // apply refuses it too, and writes nothing.
  Result<DeviceInfo> device = ProbeTarget(ext4.dev(), {});
  ASSERT_TRUE(device) << device.error().message;
  Result<TableRead> table = ReadPartitionTable(ext4.dev(), {.probe_contents = false});
  ASSERT_TRUE(table) << table.error().message;
  Result<LayoutSpec> spec = ParseLayoutSpec("size=16M;type=linux");
  ASSERT_TRUE(spec);
  Result<Plan> plan = MakeLayoutPlan(*spec, table->table, *device, {1 << 20, 0});
  ASSERT_TRUE(plan) << plan.error().message;
  const std::string plan_file = ext4.dir.File("plan.json");
  test::WritePlanFile(plan_file, *plan);
  const std::string before = ext4.dir.File("before.img");
  ASSERT_EQ(test::RunCommand({"cp", "--sparse=always", ext4.image, before}).exit_code, 0);
  CommandResult applied =
      RunPartalign({"apply", "--yes", "--backup-dir", ext4.dir.File("backups"), plan_file});
  EXPECT_EQ(applied.exit_code, 3) << applied.err;
  EXPECT_NE(applied.err.find("holds ext4"), std::string::npos) << applied.err;
  EXPECT_NE(applied.err.find("nothing was written"), std::string::npos) << applied.err;
  EXPECT_EQ(test::CmpFiles(ext4.image, before), "");
  // Raw bytes where the backup GPT goes (the last sectors), no signature: refused too. (Bytes
  // in the first sectors change what a plan is bound to: the stale-plan check refuses those.)
  Disk raw(512);
  const std::string blank_plan = raw.dir.File("plan.json");
  RunOk({"plan", "--layout", "size=16M;type=linux", "-o", blank_plan, raw.dev()});
  const std::string bytes(512, '\x5a');
  ASSERT_EQ(test::RunCommand(
                {"dd", "of=" + raw.dev(), "bs=512", fmt::format("seek={}", kDiskBytes / 512 - 1),
                 "conv=notrunc", "status=none"},
                bytes)
                .exit_code,
            0);
  CommandResult refused =
      RunPartalign({"apply", "--yes", "--backup-dir", raw.dir.File("backups"), blank_plan});
  EXPECT_EQ(refused.exit_code, 3) << refused.err;
  EXPECT_NE(refused.err.find(fmt::format("byte {}, where it writes its GPT backup header, is not "
                                         "zero",
                                         kDiskBytes - 512)),
            std::string::npos)
      << refused.err;
  EXPECT_FALSE(std::filesystem::exists(raw.dir.File("backups")));
}

}  // namespace
}  // namespace partalign
