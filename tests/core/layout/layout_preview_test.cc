// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/layout/layout_preview.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/test_topology.h"

namespace partalign {
namespace {

constexpr uint64_t kMiB = 1 << 20;

LayoutSpec Spec(const char* text) {
  Result<LayoutSpec> s = ParseLayoutSpec(text);
  EXPECT_TRUE(s) << s.error().message;
  return *s;
}

const LayoutPrediction& Of(const LayoutPreview& p, const std::string& tool) {
  for (const LayoutPrediction& q : p.predictions) {
    if (q.tool == tool) return q;
  }
  ADD_FAILURE() << "no prediction for " << tool;
  static const LayoutPrediction kNone;
  return kNone;
}

TEST(LayoutPreviewTest, EveryToolOfTheViewsThenPartalign) {
  Topology t = test::MakeTopology(512, 512, 512, 0, 0, TopologyOrigin::kKernel, 2ull << 30);
  LayoutPreview p = PreviewLayout(Spec("size=256M;size=512M;type=L"), t, NewestKnownVersions());
  std::vector<std::string> tools;
  for (const LayoutPrediction& q : p.predictions) tools.push_back(q.tool);
  EXPECT_EQ(tools, (std::vector<std::string>{"parted-mib", "parted-percent", "sfdisk", "sgdisk",
                                             "systemd-repart", "yast", "anaconda", "calamares",
                                             "ubuntu", "partalign"}));
  // On a plain disk every tool starts at 1 MiB and keeps the sizes.
  for (const char* tool : {"parted-mib", "sfdisk", "sgdisk", "systemd-repart", "partalign"}) {
    const LayoutPrediction& q = Of(p, tool);
    ASSERT_EQ(q.partitions.size(), 3u) << tool;
    EXPECT_EQ(q.partitions[0].start_sector, 2048u) << tool;
    EXPECT_EQ(q.partitions[1].start_sector, 2048u + 256 * 2048) << tool;
  }
  // The rest ends differently: parted and sfdisk on the last MiB, sgdisk at LastUsableLBA.
  EXPECT_EQ(Of(p, "parted-mib").partitions[2].end_sector, 4192255u);
  EXPECT_EQ(Of(p, "sfdisk").partitions[2].end_sector, 4192255u);
  EXPECT_EQ(Of(p, "sgdisk").partitions[2].end_sector, 4194270u);
  EXPECT_EQ(Of(p, "systemd-repart").partitions[2].end_sector, 4194263u);
}

TEST(LayoutPreviewTest, GapsAndJson) {
  Topology t = test::MakeTopology(512, 512, 512, 0, 0, TopologyOrigin::kKernel, 2ull << 30);
  LayoutPreview p = PreviewLayout(Spec("size=256M;size=512M"), t, NewestKnownVersions());
  std::vector<LayoutGap> gaps = GapsOf(Of(p, "sfdisk"), p.request, t);
  ASSERT_EQ(gaps.size(), 2u);
  EXPECT_EQ(gaps[0], (LayoutGap{34, 2047}));
  EXPECT_EQ(gaps[1], (LayoutGap{1574912, 4194270}));
  nlohmann::json j = LayoutPredictionsJson(p);
  ASSERT_TRUE(j.is_array());
  EXPECT_EQ(j[2]["tool"], "sfdisk");
  EXPECT_EQ(j[2]["partitions"][1]["start_sector"], 526336);
  EXPECT_EQ(j[2]["partitions"][1]["end_sector"], 1574911);
  EXPECT_EQ(j[2]["partitions"][1]["size_bytes"], 512 * kMiB);
  EXPECT_EQ(j[2]["partitions"][1]["aligned"], true);
  EXPECT_EQ(j[2]["gaps"][0]["start_sector"], 34);
  EXPECT_TRUE(j[2]["error"].is_null());
  EXPECT_EQ(j[2]["command"][1], "label: gpt");
}

TEST(LayoutPreviewTest, BridgeDiskShowsWhoWarns) {
  Topology t =
      test::MakeTopology(512, 4096, 4096, 33553920, 0, TopologyOrigin::kAssumed, 64ull << 30);
  LayoutPreview p = PreviewLayout(Spec("size=512M;type=L"), t, NewestKnownVersions());
  EXPECT_EQ(Of(p, "parted-mib").warnings.size(), 2u);
  EXPECT_TRUE(Of(p, "sfdisk").warnings.empty());
  // parted -a optimal with % positions finds 65535-sector multiples in the 0.5% ranges.
  EXPECT_EQ(Of(p, "parted-percent").partitions[0].start_sector, 65535u);
  std::vector<std::vector<std::string>> rows = LayoutPreviewRows(p);
  EXPECT_EQ(rows.front().size(), LayoutPreviewColumns().size());
}

TEST(LayoutPreviewTest, DosLogicalPartitions) {
  Topology t = test::MakeTopology(512, 512, 512, 0, 0, TopologyOrigin::kKernel, 2ull << 30);
  LayoutPreview p =
      PreviewLayout(Spec("label=dos;size=256M;size=512M;size=100M;size=300M;size=200M"), t,
                    NewestKnownVersions());
  const LayoutPrediction& s = Of(p, "sfdisk");
  ASSERT_EQ(s.partitions.size(), 6u);
  EXPECT_EQ(s.partitions[3].kind, PlacedKind::kExtended);
  EXPECT_EQ(s.partitions[4].kind, PlacedKind::kLogical);
  EXPECT_EQ(s.partitions[4].number, 5u);
  EXPECT_EQ(s.partitions[4].start_sector, 1781760u);  // one first LBA after the extended start
  EXPECT_EQ(Of(p, "sgdisk").error, "sgdisk writes GPT only");
  EXPECT_FALSE(Of(p, "partalign").error.empty());
  std::vector<std::string> lines = LayoutPreviewLines(p);
  EXPECT_NE(std::find(lines.begin(), lines.end(), "    type=Ex"), lines.end());
}

}  // namespace
}  // namespace partalign
