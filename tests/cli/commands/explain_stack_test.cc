// SPDX-License-Identifier: GPL-3.0-or-later
// explain's pvcreate and cryptsetup predictions against the real pvcreate (lvm2 2.03.16) and
// cryptsetup luksFormat (2.6.1) on a loop device that the topology shim makes report each
// topology: lvm2 reads sysfs through fopen(), cryptsetup the BLKIO* ioctls, and both are faked
// for the disk and for its partition (with the partition's own alignment offset).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "partalign/tools/luks_format_model.h"
#include "partalign/tools/pvcreate_model.h"
#include "support/device_test.h"
#include "support/loop_device.h"
#include "support/run_command.h"
#include "support/stack_tools.h"
#include "support/temp_dir.h"
#include "support/tool_oracle.h"

namespace partalign {
namespace {

constexpr uint64_t kDiskBytes = 256ull << 20;

struct Row {
  const char* name;
  uint64_t pbs, min_io, opt_io, align_off;
};

void PrintTo(const Row& r, std::ostream* os) { *os << r.name; }

Topology RowTopology(const Row& r) {
  Topology t;
  t.physical_sector_size = r.pbs;
  t.minimum_io_size = r.min_io;
  t.optimal_io_size = r.opt_io;
  t.alignment_offset = r.align_off;
  t.size_bytes = kDiskBytes;
  return t;
}

const nlohmann::json& Prediction(const nlohmann::json& j, const std::string& tool) {
  for (const nlohmann::json& p : j["stack_predictions"]) {
    if (p["tool"] == tool) return p;
  }
  throw std::runtime_error("no prediction for " + tool);
}

// pe_start of a fresh PV on `device`, made under the shim.
uint64_t RealPeStart(const std::string& device, const std::string& disk, const Topology& t) {
  test::RunLvmOrThrow("pvcreate", {"-q", "-ff", "-y", device}, {device},
                      test::ShimEnvironment(disk, t));
  return test::LvmBytes(test::LvmReport("pvs", "pe_start", {device})[0]["pe_start"]);
}

// The payload offset of a fresh LUKS header on `device`, made under the shim.
uint64_t RealPayload(const std::string& device, const std::string& disk, const Topology& t,
                     const std::string& type) {
  test::CommandResult r =
      test::LuksFormat(device, {"--type", type}, test::ShimEnvironment(disk, t));
  if (r.exit_code != 0) throw std::runtime_error("luksFormat failed: " + r.err);
  return test::LuksDumpDataOffset(device);
}

class ExplainStackOracleTest : public testing::TestWithParam<Row> {};

TEST_P(ExplainStackOracleTest, PvcreateAndCryptsetupDoWhatExplainPredicts) {
  PARTALIGN_REQUIRE_DEVICES();
  const Row& row = GetParam();
  const Topology t = RowTopology(row);
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kDiskBytes);
  test::LoopDevice loop(image, 512);
  const std::string dev = loop.path();

  const std::vector<std::string> args{"explain",
                                      "--json",
                                      "--no-cross-check",
                                      "--tool-version",
                                      "lvm2=2.03.16",
                                      "--tool-version",
                                      "cryptsetup=2.6.1",
                                      "--assume",
                                      fmt::format("phys={},min-io={},opt-io={},align-offset={}",
                                                  row.pbs, row.min_io, row.opt_io, row.align_off),
                                      dev};
  test::CommandResult r = test::RunPartalign(args);
  ASSERT_EQ(r.exit_code, 0) << test::Describe(args, r);
  const nlohmann::json j = nlohmann::json::parse(r.out);

  // The whole disk.
  const nlohmann::json& pv = Prediction(j, "pvcreate");
  EXPECT_EQ(RealPeStart(dev, dev, t), pv["whole_disk_data_offset_bytes"]) << pv["reasons"];
  test::WipeDevice(dev);
  for (const char* type : {"luks2", "luks1"}) {
    const nlohmann::json& p = Prediction(j, std::string("cryptsetup-") + type);
    EXPECT_EQ(RealPayload(dev, dev, t, type), p["whole_disk_data_offset_bytes"])
        << type << " " << p["reasons"];
    test::WipeDevice(dev);
  }

  // A partition at partalign's first start: the tools see its own alignment offset.
  const uint64_t start = pv["partition_start_bytes"];
  test::RunOrThrow({"sfdisk", "--no-reread", "--no-tell-kernel", "-q", dev},
                   fmt::format("label: gpt\nstart={}, type=linux\n", start / 512));
  test::RunOrThrow({"partx", "--add", "--nr", "1", dev});
  const std::string part = loop.PartitionPath(1);
  EXPECT_EQ(start + RealPeStart(part, dev, t), pv["partition_data_offset_bytes"]) << pv["reasons"];
  test::RunOrThrow({"wipefs", "-q", "-a", part});
  for (const char* type : {"luks2", "luks1"}) {
    const nlohmann::json& p = Prediction(j, std::string("cryptsetup-") + type);
    EXPECT_EQ(start + RealPayload(part, dev, t, type), p["partition_data_offset_bytes"])
        << type << " in the partition " << p["reasons"];
    test::RunOrThrow({"wipefs", "-q", "-a", part});
  }
}

// alignment-heuristics.md §6 rows (the ones whose I/O sizes or offset change a placement),
// and a non-power-of-two minimum I/O.
INSTANTIATE_TEST_SUITE_P(Rows, ExplainStackOracleTest,
                         testing::Values(Row{"A plain", 512, 512, 0, 0},
                                         Row{"C JMicron bridge", 4096, 4096, 33553920, 0},
                                         Row{"F alignment offset 3584", 4096, 4096, 0, 3584},
                                         Row{"H RAID-5 64K x 3", 4096, 65536, 196608, 0},
                                         Row{"I 33553920 over 512", 512, 512, 33553920, 0},
                                         Row{"K 196608 minimum I/O", 512, 196608, 0, 0}));

// A partition at 1 MiB of a disk whose LBA 0 is 3584 bytes into a physical block: the kernel
// (and the shim) give the partition an alignment offset of 3584, which pvcreate and cryptsetup
// add. Without the shim the same tools see offset 0: the negative control.
TEST(ExplainStackOracleTest2, APartitionSeesItsOwnAlignmentOffset) {
  PARTALIGN_REQUIRE_DEVICES();
  const Topology t = RowTopology({"F", 4096, 4096, 0, 3584});
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kDiskBytes);
  test::LoopDevice loop(image, 512);
  const std::string dev = loop.path();
  test::RunOrThrow({"sfdisk", "--no-reread", "--no-tell-kernel", "-q", dev},
                   "label: gpt\nstart=2048, type=linux\n");
  test::RunOrThrow({"partx", "--add", "--nr", "1", dev});
  const std::string part = loop.PartitionPath(1);
  Topology seen = t;
  seen.alignment_offset = PartitionAlignmentOffset(t, 1 << 20);
  ASSERT_EQ(seen.alignment_offset, 3584u);
  const ToolVersion lvm2{2, 3, 16, 3}, cryptsetup{2, 6, 1, 3};
  EXPECT_EQ(RealPeStart(part, dev, t), PredictPvcreate(seen, lvm2).pe_start_bytes);
  test::RunOrThrow({"wipefs", "-q", "-a", part});
  EXPECT_EQ(RealPayload(part, dev, t, "luks2"),
            PredictLuksFormat(seen, cryptsetup, LuksType::kLuks2).data_offset_bytes);
  test::RunOrThrow({"wipefs", "-q", "-a", part});
  // Negative control: the plain loop device reports offset 0.
  test::RunLvmOrThrow("pvcreate", {"-q", "-ff", "-y", part}, {part});
  EXPECT_EQ(test::LvmBytes(test::LvmReport("pvs", "pe_start", {part})[0]["pe_start"]), 1u << 20);
}

}  // namespace
}  // namespace partalign
