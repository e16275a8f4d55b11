#include "partalign/tools/installers/installer_layout.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/tools/section6_cases.h"
#include "partalign/tools/explain_report.h"
#include "partalign/tools/installers/installer_report.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

// The usb-jmicron-0xffff profile (512/4096/4096/33553920/0) on a 2 TB disk: every installer
// starts somewhere else.
Topology Bridge() {
  Topology t = test::kRowC.topology();
  t.size_bytes = 2000000000000ull;
  return t;
}

const LayoutPrediction* Find(const std::vector<LayoutPrediction>& all, std::string_view tool) {
  for (const LayoutPrediction& p : all) {
    if (p.tool == tool) return &p;
  }
  return nullptr;
}

TEST(InstallerLayoutTest, ToolViewsListThePartitionersThenTheInstallers) {
  std::vector<std::string> ids;
  for (const ToolView& v : ToolViews()) ids.push_back(v.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"parted", "fdisk", "gdisk", "systemd-repart", "yast",
                                           "anaconda", "calamares", "ubuntu"}));
  // Calamares (KPMcore) is the one installer that checks existing partitions.
  for (const ToolView& v : ToolViews()) {
    EXPECT_EQ(v.installer,
              v.id == "yast" || v.id == "anaconda" || v.id == "calamares" || v.id == "ubuntu")
        << v.id;
    if (v.installer) {
      EXPECT_EQ(static_cast<bool>(v.verdict), v.id == "calamares") << v.id;
    }
  }
}

// A first partition of 100 MiB is what explain's installer rows ask (kSecondStartProbeBytes):
// the layout views must start partitions 1 and 2 where those rows do, on GPT and on DOS.
TEST(InstallerLayoutTest, StartsAgreeWithExplainsInstallerRows) {
  const Topology t = Bridge();
  const ToolVersions versions = NewestKnownVersions();
  std::vector<ToolPrediction> rows =
      PredictInstallers(t, NewestKnownInstallerVersions(), versions.parted.version);
  for (LabelType label : {LabelType::kGpt, LabelType::kDos}) {
    LayoutRequest request{label, {kSecondStartProbeBytes, 512 * kMiB, std::nullopt}};
    std::vector<LayoutPrediction> all = PredictLayouts(t, versions, request, true);
    for (const ToolPrediction& row : rows) {
      const LayoutPrediction* p = Find(all, row.tool);
      ASSERT_NE(p, nullptr) << row.tool;
      ASSERT_EQ(p->partitions.size(), 2u) << row.tool << ": " << p->error;
      const bool gpt = label == LabelType::kGpt;
      EXPECT_EQ(p->partitions[0].start_sector, gpt ? row.first_start_gpt : row.first_start_dos)
          << row.tool;
      EXPECT_EQ(p->partitions[1].start_sector, gpt ? row.second_start_gpt : row.second_start_dos)
          << row.tool;
      EXPECT_EQ(p->partitions[0].end_sector - p->partitions[0].start_sector + 1,
                kSecondStartProbeBytes / 512)
          << row.tool;
      // The third partition is not modelled, and the prediction says so.
      EXPECT_NE(p->command.back().find("partitions 3 and up are not modelled"), std::string::npos);
    }
  }
  // explain --layout (checked against the real tools) leaves the installers out.
  std::vector<LayoutPrediction> partitioners =
      PredictLayouts(t, versions, {LabelType::kGpt, {kSecondStartProbeBytes, std::nullopt}});
  EXPECT_EQ(Find(partitioners, "yast"), nullptr);
  EXPECT_NE(Find(partitioners, "sgdisk"), nullptr);
}

// Issue #30 item 2: a 64 MiB disk behind the JMicron bridge, partitions of 1 MiB and 60 MiB.
// YaST's grain is the bridge's 65535 sectors: after partition 1 no aligned slot is left. Its
// row showed partition 1 only, with no word about partition 2; every row shows both
// partitions or says why not.
TEST(InstallerLayoutTest, EveryRowShowsPartitionTwoOrSaysWhyNot) {
  Topology t = test::kRowC.topology();
  t.size_bytes = 64 * kMiB;
  const ToolVersions versions = NewestKnownVersions();
  for (LabelType label : {LabelType::kGpt, LabelType::kDos}) {
    const LayoutRequest request{label, {1 * kMiB, 60 * kMiB}};
    for (const LayoutPrediction& p : PredictLayouts(t, versions, request, true)) {
      if (p.partitions.empty()) {
        EXPECT_FALSE(p.error.empty()) << p.tool;
        continue;
      }
      if (p.partitions.size() < 2) {
        EXPECT_NE(p.error.find("partition 2"), std::string::npos) << p.tool << ": " << p.error;
      }
    }
    const std::vector<LayoutPrediction> all = PredictLayouts(t, versions, request, true);
    const LayoutPrediction* yast = Find(all, "yast");
    ASSERT_NE(yast, nullptr);
    ASSERT_EQ(yast->partitions.size(), 1u) << yast->error;
    EXPECT_EQ(
        yast->error.rfind("partition 2: no aligned slot is left after a 1 MiB partition 1", 0), 0u)
        << yast->error;
    EXPECT_NE(yast->error.find("65535 sectors"), std::string::npos) << yast->error;
  }
}

TEST(InstallerLayoutTest, CalamaresVerdictIsKpmcores) {
  const Topology t = Bridge();
  auto calamares = std::find_if(ToolViews().begin(), ToolViews().end(),
                                [](const ToolView& v) { return v.id == "calamares"; });
  ASSERT_NE(calamares, ToolViews().end());
  VerdictInput in{t, t.size_bytes / 512, 1, 63, 999999, {63}};
  EXPECT_EQ(calamares->verdict(in), KpmcoreVerdict(t, 1, 63, 999999));
  EXPECT_FALSE(calamares->verdict(in).ok);
}

}  // namespace
}  // namespace partalign
