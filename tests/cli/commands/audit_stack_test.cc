// SPDX-License-Identifier: GPL-3.0-or-later
// audit and plan on stacks built by the real lvm2, cryptsetup and mkfs on loop devices (no
// device-mapper needed): the issue's "done when" (a PV 3584 bytes past a 4 KiB boundary in an
// aligned partition makes it misaligned, the default pvcreate does not), LUKS with an odd
// offset, a filesystem whose stripes do not match the LV's, and a whole-disk PV made by
// pvcreate under the JMicron bridge topology (the topology shim).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>

#include "support/advice.h"
#include "support/device_test.h"
#include "support/loop_device.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/stack_tools.h"
#include "support/temp_dir.h"
#include "support/tool_oracle.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::RunPartalign;

// One GPT partition at 1 MiB (aligned on every topology used here), 128 MiB.
constexpr const char* kOnePartition = "label: gpt\nstart=2048, size=262144, type=linux\n";
constexpr uint64_t kPartitionStart = 1048576;

nlohmann::json AuditJson(const std::vector<std::string>& extra, const std::string& target,
                         int expected_exit) {
  std::vector<std::string> args{"audit", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(target);
  CommandResult r = RunPartalign(args);
  EXPECT_EQ(r.exit_code, expected_exit) << test::Describe(args, r);
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  return j;
}

const nlohmann::json* Layer(const nlohmann::json& stack, const std::string& kind) {
  for (const nlohmann::json& l : stack) {
    if (l["layer"] == kind) return &l;
  }
  return nullptr;
}

class AuditStackTest : public testing::Test {
 protected:
  void SetUp() override { PARTALIGN_REQUIRE_DEVICES(); }

  // A PV in partition 1 made with `pvcreate ARGS`, a VG with a 16 MiB linear LV.
  void MakePv(const std::vector<std::string>& pvcreate_args) {
    disk_ = std::make_unique<test::PartitionedLoop>(kOnePartition, 512, 160u << 20);
    pv_ = disk_->loop().PartitionPath(1);
    std::vector<std::string> args{"-q"};
    args.insert(args.end(), pvcreate_args.begin(), pvcreate_args.end());
    args.push_back(pv_);
    test::RunLvmOrThrow("pvcreate", args, {pv_});
    vg_ = test::UniqueVgName("a");
    test::RunLvmOrThrow("vgcreate", {"-q", vg_, pv_}, {pv_});
    test::RunLvmOrThrow("lvcreate", {"-q", "-an", "-Zn", "-L", "16m", "-n", "lv", vg_}, {pv_});
    test::RunOrThrow({"sync"});
  }

  uint64_t PeStart() {
    return test::LvmBytes(test::LvmReport("pvs", "pe_start", {pv_})[0]["pe_start"]);
  }

  std::unique_ptr<test::PartitionedLoop> disk_;
  std::string pv_, vg_;
};

// The issue's "done when", first half.
TEST_F(AuditStackTest, APvDataStart3584PastA4KiBBoundaryMakesTheAlignedPartitionMisaligned) {
  MakePv({"--dataalignmentoffset", "3584b"});
  const uint64_t pe_start = PeStart();
  ASSERT_EQ(pe_start, 1052160u);
  nlohmann::json j = AuditJson({}, disk_->image(), 2);
  const nlohmann::json& p = j["partitions"][0];
  EXPECT_EQ(p["checks"]["grain"], true);  // the partition itself is aligned
  EXPECT_EQ(p["aligned"], false);
  const nlohmann::json* pv = Layer(p["stack"], "lvm2_pv");
  ASSERT_NE(pv, nullptr) << p["stack"].dump(1);
  EXPECT_EQ((*pv)["data_offset_bytes"], kPartitionStart + pe_start);
  EXPECT_EQ((*pv)["data_offset_bytes"].get<uint64_t>() % 4096, 3584u);
  EXPECT_EQ((*pv)["aligned"], false);
  EXPECT_EQ((*pv)["checks"]["four_kib"], false);
  EXPECT_NE((*pv)["reasons"][0].get<std::string>().find("3584 bytes past a 4 KiB boundary"),
            std::string::npos)
      << (*pv)["reasons"];
  EXPECT_EQ(j["aligned"], false);

  // The text report shows the tree, and plan says what would fix it.
  CommandResult text = RunPartalign({"audit", disk_->image()});
  EXPECT_EQ(text.exit_code, 2);
  EXPECT_NE(text.out.find("partition 1 stack (misaligned):"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("LVM2 PV (VG " + vg_ + "): data at byte 2100736 (+1052160) NOT ALIGNED"),
            std::string::npos)
      << text.out;
  CommandResult plan = RunPartalign({"plan", disk_->image()});
  EXPECT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("no partition start fixes it"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("pvcreate --dataalignment 1m DEV"), std::string::npos) << plan.out;
}

// A PV in no VG (pvcreate with an offset, nothing made on it): plan's recipe has nothing to move,
// and its two commands (issue #30: advice that works), with the partition for DEV, make the PV
// anew with its data aligned.
TEST_F(AuditStackTest, APvInNoVgIsMadeAnewAsPlanSays) {
  disk_ = std::make_unique<test::PartitionedLoop>(kOnePartition, 512, 160u << 20);
  pv_ = disk_->loop().PartitionPath(1);
  test::RunLvmOrThrow("pvcreate", {"-q", "--dataalignmentoffset", "3584b", pv_}, {pv_});
  test::RunOrThrow({"sync"});
  nlohmann::json j = AuditJson({}, disk_->image(), 2);
  ASSERT_EQ((*Layer(j["partitions"][0]["stack"], "lvm2_pv"))["aligned"], false);
  CommandResult plan = RunPartalign({"plan", disk_->image()});
  EXPECT_EQ(plan.exit_code, 0) << plan.err;
  const std::string remove =
      test::AdviceIn(plan.out, "no extents to move\\): (pvremove) DEV, then");
  const std::string create =
      test::AdviceIn(plan.out, "then pvcreate (--dataalignment [0-9a-z]+) DEV");
  ASSERT_EQ(remove, "pvremove");
  test::RunLvmOrThrow("pvremove", {"-q", pv_}, {pv_});
  test::RunLvmOrThrow("pvcreate",
                      {"-q", "--dataalignment", create.substr(create.find(' ') + 1), pv_}, {pv_});
  test::RunOrThrow({"sync"});
  j = AuditJson({}, disk_->image(), 0);
  const nlohmann::json* pv = Layer(j["partitions"][0]["stack"], "lvm2_pv");
  ASSERT_NE(pv, nullptr) << j["partitions"][0].dump(1);
  EXPECT_EQ((*pv)["aligned"], true);
}

// The issue's "done when", second half.
TEST_F(AuditStackTest, TheSameStackWithDefaultPvcreatePasses) {
  MakePv({});
  nlohmann::json j = AuditJson({}, disk_->image(), 0);
  const nlohmann::json& p = j["partitions"][0];
  const nlohmann::json* pv = Layer(p["stack"], "lvm2_pv");
  ASSERT_NE(pv, nullptr);
  EXPECT_EQ((*pv)["data_offset_bytes"], kPartitionStart + PeStart());
  EXPECT_EQ((*pv)["aligned"], true);
  ASSERT_NE(Layer(p["stack"], "lvm2_lv_segment"), nullptr);
  EXPECT_EQ(p["aligned"], true);
  EXPECT_EQ(j["aligned"], true);
}

TEST_F(AuditStackTest, LuksWithAnOddOffsetIsFlagged) {
  disk_ = std::make_unique<test::PartitionedLoop>(kOnePartition, 512, 160u << 20);
  const std::string part = disk_->loop().PartitionPath(1);
  ASSERT_EQ(test::LuksFormat(part, {"--type", "luks1", "--align-payload", "7"}).exit_code, 0);
  const uint64_t payload = test::LuksDumpDataOffset(part);
  ASSERT_EQ(payload, 4046u * 512);
  test::RunOrThrow({"sync"});
  nlohmann::json j = AuditJson({}, disk_->image(), 2);
  const nlohmann::json* luks = Layer(j["partitions"][0]["stack"], "luks");
  ASSERT_NE(luks, nullptr) << j["partitions"][0].dump(1);
  EXPECT_EQ((*luks)["name"], "LUKS1");
  EXPECT_EQ((*luks)["data_offset_bytes"], kPartitionStart + payload);
  EXPECT_EQ((*luks)["aligned"], false);
  CommandResult plan = RunPartalign({"plan", disk_->image()});
  // The advice's command (issue #30), with the partition for DEV: LUKS2 formatted at the
  // offset it names is aligned.
  const std::string options = test::AdviceIn(
      plan.out, "cryptsetup luksFormat (--type luks2 --offset [0-9]+) DEV \\(512-byte");
  std::vector<std::string> args;
  std::istringstream words(options);
  for (std::string w; words >> w;) args.push_back(w);
  ASSERT_EQ(test::LuksFormat(part, args).exit_code, 0);
  test::RunOrThrow({"sync"});
  j = AuditJson({}, disk_->image(), 0);
  luks = Layer(j["partitions"][0]["stack"], "luks");
  ASSERT_NE(luks, nullptr) << j["partitions"][0].dump(1);
  EXPECT_EQ((*luks)["name"], "LUKS2");
  EXPECT_EQ((*luks)["aligned"], true);
}

// Two partitions as the two PVs of a striped LV (64 KiB stripes), ext4 made with 8 KiB stripes.
TEST_F(AuditStackTest, AFilesystemWhoseStripesDoNotMatchTheLvIsReported) {
  disk_ = std::make_unique<test::PartitionedLoop>(
      "label: gpt\nstart=2048, size=131072, type=linux\nstart=135168, size=131072, type=linux\n",
      512, 160u << 20);
  const std::vector<std::string> pvs{disk_->loop().PartitionPath(1),
                                     disk_->loop().PartitionPath(2)};
  const std::string vg = test::UniqueVgName("s");
  test::RunLvmOrThrow("pvcreate", {"-q", pvs[0], pvs[1]}, pvs);
  test::RunLvmOrThrow("vgcreate", {"-q", "-s", "4m", vg, pvs[0], pvs[1]}, pvs);
  test::RunLvmOrThrow(
      "lvcreate", {"-q", "-an", "-Zn", "-i", "2", "-I", "64", "-L", "32m", "-n", "str", vg}, pvs);
  // The LV starts at extent 0 of the first PV (lvs says "pv1(0),pv2(0)"): ext4's superblock is
  // in the first stripe unit there.
  nlohmann::json segs = test::LvmReport("lvs", "devices", pvs, true);
  ASSERT_EQ(segs[0]["devices"], pvs[0] + "(0)," + pvs[1] + "(0)");
  test::TempDir scratch;
  const std::string fs = scratch.File("fs.img");
  test::CreateSparseFile(fs, 32u << 20);
  test::RunOrThrow({"mkfs.ext4", "-F", "-q", "-b", "4096", "-E", "stride=2,stripe_width=4", fs});
  test::CopyBytes(fs, 0, disk_->image(), kPartitionStart + (1u << 20), 65536);
  test::RunOrThrow({"sync"});

  nlohmann::json j = AuditJson({}, disk_->image(), 0);  // informational only: exit 0
  const nlohmann::json& stack = j["partitions"][0]["stack"];
  const nlohmann::json* seg = Layer(stack, "lvm2_lv_segment");
  ASSERT_NE(seg, nullptr) << stack.dump(1);
  EXPECT_EQ((*seg)["geometry"]["stripe_unit_bytes"], 65536);
  EXPECT_EQ((*seg)["geometry"]["stripe_count"], 2);
  const nlohmann::json* ext4 = Layer(stack, "filesystem");
  ASSERT_NE(ext4, nullptr) << stack.dump(1);
  EXPECT_EQ((*ext4)["geometry"]["stripe_unit_bytes"], 8192);
  EXPECT_EQ((*ext4)["checks"]["stripe_geometry"], false);
  EXPECT_EQ((*ext4)["aligned"], true);
  EXPECT_NE((*ext4)["reasons"].dump().find("tune2fs -E stride=16,stripe_width=32"),
            std::string::npos)
      << (*ext4)["reasons"];
  // The second partition holds the other stripe, reported from its own PV.
  EXPECT_NE(Layer(j["partitions"][1]["stack"], "lvm2_lv_segment"), nullptr);
}

// A whole-disk PV made by pvcreate while the disk reported the JMicron bridge's topology (the
// shim fakes what lvm2 reads from sysfs): pe_start 33553920, 3584 bytes past a 4 KiB boundary.
TEST_F(AuditStackTest, AWholeDiskPvMadeBehindTheBridgeIsMisaligned) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, 256u << 20);
  {
    test::LoopDevice loop(image, 512);
    Topology bridge;
    bridge.physical_sector_size = 4096;
    bridge.minimum_io_size = 4096;
    bridge.optimal_io_size = 33553920;
    bridge.alignment_offset = 0;
    test::RunLvmOrThrow("pvcreate", {"-q", loop.path()}, {loop.path()},
                        test::ShimEnvironment(loop.path(), bridge));
    EXPECT_EQ(test::LvmBytes(test::LvmReport("pvs", "pe_start", {loop.path()})[0]["pe_start"]),
              33553920u);
  }
  nlohmann::json j = AuditJson({"--assume", "usb-jmicron-0xffff"}, image, 2);
  EXPECT_EQ(j["label"], "none");
  ASSERT_TRUE(j["whole_disk"].is_object()) << j.dump(1);
  const nlohmann::json* pv = Layer(j["whole_disk"]["stack"], "lvm2_pv");
  ASSERT_NE(pv, nullptr);
  EXPECT_EQ((*pv)["data_offset_bytes"], 33553920);
  EXPECT_EQ((*pv)["aligned"], false);
  EXPECT_NE((*pv)["reasons"].dump().find("is what pvcreate"), std::string::npos)
      << (*pv)["reasons"];
  EXPECT_EQ(j["whole_disk"]["aligned"], false);
  CommandResult text = RunPartalign({"audit", "--assume", "usb-jmicron-0xffff", image});
  EXPECT_EQ(text.exit_code, 2);
  EXPECT_NE(text.out.find("whole-disk stack (misaligned):"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace partalign
