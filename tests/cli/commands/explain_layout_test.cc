// SPDX-License-Identifier: GPL-3.0-or-later
// partalign explain --layout end to end: the table and JSON on an image and a hypothetical disk
// (no root), and oracle tests on chosen hard cases - the JMicron bridge, an alignment offset
// with DOS logical partitions, a disk of a few MiB - where the real parted, sfdisk, sgdisk and
// systemd-repart run under the topology simulator exactly as explain says it asks them, and
// must leave every partition where explain predicts. The random sweep is
// tests/tools/layout_sweep.cc.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <algorithm>

#include "partalign/layout/layout_spec.h"

#include "support/device_test.h"
#include "support/layout_oracle.h"
#include "support/loop_device.h"
#include "support/run_command.h"
#include "support/temp_dir.h"
#include "support/tool_oracle.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::RunPartalign;

nlohmann::json LayoutJson(const std::vector<std::string>& args) {
  std::vector<std::string> full{"explain", "--json", "--no-cross-check"};
  full.insert(full.end(), args.begin(), args.end());
  CommandResult r = RunPartalign(full);
  EXPECT_EQ(r.exit_code, 0) << test::Describe(full, r);
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  return j["layout_predictions"];
}

TEST(ExplainLayoutCommandTest, HypotheticalDiskTableAndJson) {
  CommandResult r = RunPartalign({"explain", "--assume", "usb-jmicron-0xffff", "--size", "64GiB",
                                  "--layout", "size=512M,type=uefi;type=linux"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("layout 'size=512M,type=uefi;type=linux' (GPT): where each tool puts it"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("parted-mib: parted -s -a optimal DEV mklabel gpt mkpart primary 1MiB "
                       "513MiB mkpart primary 513MiB 100%"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("prints: The resulting partition is not properly aligned for best "
                       "performance: 2048s % 65535s != 0s"),
            std::string::npos)
      << r.out;
  nlohmann::json j = LayoutJson(
      {"--assume", "usb-jmicron-0xffff", "--size", "64GiB", "--layout", "size=512M;type=L"});
  ASSERT_TRUE(j.is_array());
  // The partitioners, the installers, then partalign.
  ASSERT_EQ(j.size(), 10u);
  EXPECT_EQ(j[9]["tool"], "partalign");
  EXPECT_EQ(j[9]["partitions"][0]["start_sector"], 2048);
  EXPECT_EQ(j[5]["tool"], "yast");
  EXPECT_EQ(j[5]["partitions"][0]["start_sector"], 65535);
  EXPECT_TRUE(j[5]["omitted"].is_array());
  EXPECT_EQ(j[1]["tool"], "parted-percent");
  EXPECT_EQ(j[1]["partitions"][0]["start_sector"], 65535);
}

TEST(ExplainLayoutCommandTest, WithoutLayoutTheKeyIsNull) {
  CommandResult r = RunPartalign({"explain", "--json", "--size", "8GiB"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j.contains("layout_predictions"));
  EXPECT_TRUE(j["layout_predictions"].is_null());
}

TEST(ExplainLayoutCommandTest, BadSpecIsOneLine) {
  CommandResult r = RunPartalign({"explain", "--size", "8GiB", "--layout", "size=12X"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("item 1: size"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

struct OracleCase {
  const char* name;
  uint64_t lbs, pbs, min_io, opt_io, align_off, size_bytes;
  const char* layout;
};

class ExplainLayoutOracleTest : public testing::TestWithParam<OracleCase> {};

TEST_P(ExplainLayoutOracleTest, EveryToolPlacesEveryPartitionAsPredicted) {
  PARTALIGN_REQUIRE_DEVICES();
  std::string missing;
  ASSERT_TRUE(test::OracleToolsInstalled(&missing)) << missing << " is not installed";
  const OracleCase& c = GetParam();
  Topology t;
  t.logical_sector_size = c.lbs;
  t.physical_sector_size = c.pbs;
  t.minimum_io_size = c.min_io;
  t.optimal_io_size = c.opt_io;
  t.alignment_offset = c.align_off;
  t.size_bytes = c.size_bytes;
  t.origin = TopologyOrigin::kAssumed;
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, c.size_bytes);
  test::LoopDevice loop(image, static_cast<unsigned>(c.lbs));
  const std::string assume = fmt::format("log={},phys={},min-io={},opt-io={},align-offset={}",
                                         c.lbs, c.pbs, c.min_io, c.opt_io, c.align_off);
  nlohmann::json j = LayoutJson({"--assume", assume, "--layout", c.layout, loop.path()});
  ASSERT_TRUE(j.is_array());
  Result<LayoutSpec> spec = ParseLayoutSpec(c.layout);
  ASSERT_TRUE(spec) << spec.error().message;
  LayoutRequest request;
  request.label = spec->label;
  for (const LayoutItem& it : spec->items) request.sizes_bytes.push_back(it.SizeBytes(c.lbs));
  int compared = 0;
  for (const nlohmann::json& pj : j) {
    LayoutPrediction p = test::LayoutPredictionFromJson(pj);
    if (p.tool == "partalign" || test::IsInstallerTool(p.tool)) continue;
    if (request.label != LabelType::kGpt && (p.tool == "sgdisk" || p.tool == "systemd-repart")) {
      EXPECT_FALSE(p.error.empty()) << p.tool;
      continue;
    }
    test::ToolLayout real = test::RunToolLayout(loop.path(), t, request, p, dir.path());
    EXPECT_EQ(real.ok, p.error.empty()) << p.tool << ": " << real.error << " / " << p.error;
    EXPECT_EQ(real.partitions, p.partitions) << p.tool;
    std::vector<std::string> rw = real.warnings, pw = p.warnings;
    std::sort(rw.begin(), rw.end());
    std::sort(pw.begin(), pw.end());
    EXPECT_EQ(rw, pw) << p.tool;
    ++compared;
  }
  EXPECT_GE(compared, 3);
  test::WipeDevice(loop.path());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ExplainLayoutOracleTest,
    testing::Values(
        // parted aligns to 65535 sectors and warns at every MiB start; the others keep 1 MiB.
        OracleCase{"jmicron_gpt", 512, 4096, 4096, 33553920, 0, 4ull << 30,
                   "size=512M,type=uefi;size=1000M;type=L"},
        // An alignment offset of 3584 with logical partitions: libfdisk's 7 and n*2048-1,
        // parted's offset 7, each EBR gap.
        OracleCase{"offset_dos_logical", 512, 4096, 4096, 0, 3584, 2ull << 30,
                   "label=dos;size=100M;size=200M;size=300M;size=50M;size=70M;type=L"},
        // A few MiB: parted refuses 100% after 1 MiB, repart has no room for 10 MiB.
        OracleCase{"tiny", 512, 512, 512, 0, 0, 3ull << 20, "size=1M;type=L"},
        // 4Kn with a RAID stripe (optimal I/O 192 KiB): parted's 48-sector grain.
        OracleCase{"raid_4kn", 4096, 4096, 65536, 196608, 0, 8ull << 30,
                   "size=1000K;size=3G;type=L"}),
    [](const testing::TestParamInfo<OracleCase>& c) { return std::string(c.param.name); });

}  // namespace
}  // namespace partalign
