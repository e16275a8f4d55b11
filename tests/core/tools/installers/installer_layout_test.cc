// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/installers/installer_layout.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/tools/section6_cases.h"
#include "partalign/tools/explain_report.h"
#include "partalign/tools/installers/installer_report.h"
#include "partalign/util/units.h"
#include "support/test_topology.h"

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
// the layout views must start partitions 1 and 2 where those rows do, on GPT and on DOS, and
// place partition 3 (the rest) too.
TEST(InstallerLayoutTest, StartsAgreeWithExplainsInstallerRows) {
  const Topology t = Bridge();
  const ToolVersions versions = NewestKnownVersions();
  std::vector<ToolPrediction> rows =
      PredictInstallers(t, NewestKnownInstallerVersions(), versions.parted.version);
  for (LabelType label : {LabelType::kGpt, LabelType::kDos}) {
    LayoutRequest request{label, {kSecondStartProbeBytes, kSecondStartProbeBytes, std::nullopt}};
    std::vector<LayoutPrediction> all = PredictLayouts(t, versions, request);
    for (const ToolPrediction& row : rows) {
      const LayoutPrediction* p = Find(all, row.tool);
      ASSERT_NE(p, nullptr) << row.tool;
      ASSERT_EQ(p->partitions.size(), 3u) << row.tool << ": " << p->error;
      EXPECT_TRUE(p->omitted.empty()) << row.tool;
      const bool gpt = label == LabelType::kGpt;
      EXPECT_EQ(p->partitions[0].start_sector, gpt ? row.first_start_gpt : row.first_start_dos)
          << row.tool;
      EXPECT_EQ(p->partitions[1].start_sector, gpt ? row.second_start_gpt : row.second_start_dos)
          << row.tool;
      for (size_t i = 1; i < p->partitions.size(); ++i) {
        EXPECT_GT(p->partitions[i].start_sector, p->partitions[i - 1].end_sector) << row.tool;
      }
    }
  }
  // explain --layout shows the installers after the partitioners.
  std::vector<LayoutPrediction> all =
      PredictLayouts(t, versions, {LabelType::kGpt, {kSecondStartProbeBytes, std::nullopt}});
  EXPECT_NE(Find(all, "yast"), nullptr);
  EXPECT_NE(Find(all, "sgdisk"), nullptr);
  EXPECT_EQ(Find(PredictLayouts(t, versions, {LabelType::kGpt, {kMiB}}, false), "yast"), nullptr);
}

// The issue's case: a 2 GiB disk behind the bridge, 512M and the rest. YaST's partition 1
// ends where the slot's grain allows (end aligned down), and partition 2 starts after it.
TEST(InstallerLayoutTest, YastLaysTheIssuesExampleOutWithoutOverlap) {
  Topology t = Bridge();
  t.size_bytes = 2ull << 30;
  LayoutPrediction p = InstallerLayout(Installer::kLibstorageNg, t, NewestKnownVersions(),
                                       {LabelType::kGpt, {512 * kMiB, std::nullopt}});
  ASSERT_EQ(p.partitions.size(), 2u) << p.error;
  EXPECT_EQ(p.partitions[0], (PlacedPartition{1, PlacedKind::kPrimary, 65535, 1114094}));
  // The rest: the whole last slot, its end kept (the last usable sector).
  EXPECT_EQ(p.partitions[1], (PlacedPartition{2, PlacedKind::kPrimary, 1114095, 4194270}));
  // parted, at commit, warns about neither: both start on its 65535-sector grain.
  EXPECT_TRUE(p.warnings.empty());
}

TEST(InstallerLayoutTest, YastRefusesSizesOutsideTheSlotsWithTheReason) {
  Topology t = Bridge();
  t.size_bytes = 64ull << 20;
  LayoutPrediction p = InstallerLayout(Installer::kLibstorageNg, t, NewestKnownVersions(),
                                       {LabelType::kGpt, {kMiB, 60 * kMiB}});
  EXPECT_TRUE(p.partitions.empty());
  EXPECT_NE(p.error.find("partition 1: YaST's Partitioner takes a custom size from 32.00 MiB"),
            std::string::npos)
      << p.error;
}

// Calamares: sizes rounded up to whole MiB (Calamares::bytesToSectors), back to back from
// 2 MiB on GPT, the rest to the disk's last sector minus 66.
TEST(InstallerLayoutTest, CalamaresRoundsSizesUpToMibAndKeepsTheBackupGpt) {
  Topology t = Bridge();
  t.size_bytes = 1ull << 30;
  LayoutPrediction p = InstallerLayout(Installer::kKpmcore, t, NewestKnownVersions(),
                                       {LabelType::kGpt, {1536 * kKiB, 100 * kMiB, std::nullopt}});
  ASSERT_EQ(p.partitions.size(), 3u) << p.error;
  EXPECT_EQ(p.partitions[0], (PlacedPartition{1, PlacedKind::kPrimary, 4096, 4096 + 4096 - 1}));
  EXPECT_EQ(p.partitions[1].start_sector, 8192u);
  EXPECT_EQ(p.partitions[2].end_sector, (1ull << 30) / 512 - 67);
  // A layout larger than the disk: the second partition is cut, the third has no sector left
  // and is skipped, and the row says so. Calamares 3.2.61's createPartitions() on KPMcore 22.12
  // (partalign_calamares_layout) gave 2048-1845247 and 1845248-2097151, and no third.
  LayoutPrediction big = InstallerLayout(Installer::kKpmcore, t, NewestKnownVersions(),
                                         {LabelType::kDos, {900 * kMiB, 900 * kMiB, 10 * kMiB}});
  ASSERT_EQ(big.partitions.size(), 2u) << big.error;
  EXPECT_EQ(big.partitions[0], (PlacedPartition{1, PlacedKind::kPrimary, 2048, 1845247}));
  EXPECT_EQ(big.partitions[1], (PlacedPartition{2, PlacedKind::kPrimary, 1845248, 2097151}));
  ASSERT_EQ(big.omitted.size(), 1u);
  EXPECT_EQ(big.omitted[0].number, 3u);
  EXPECT_TRUE(big.omitted[0].modelled);
}

// When the fixed sizes fill the disk, "100%" of what is left is -1 sectors; KPMcore's sfdisk
// backend writes `size=-1`, which sfdisk takes as one sector (the installer sweep: Calamares'
// module, then the sfdisk commands KPMcore runs, on an 8 MiB loop device).
TEST(InstallerLayoutTest, CalamaresRestOfNothingIsOneSector) {
  Topology t = test::kRowA.topology();
  t.size_bytes = 8 * kMiB;
  LayoutPrediction p =
      InstallerLayout(Installer::kKpmcore, t, NewestKnownVersions(),
                      {LabelType::kGpt, {1943040, kMiB, kMiB, kMiB, kMiB, std::nullopt}});
  ASSERT_EQ(p.partitions.size(), 6u) << p.error;
  EXPECT_EQ(p.partitions[4], (PlacedPartition{5, PlacedKind::kPrimary, 14336, 16317}));
  EXPECT_EQ(p.partitions[5], (PlacedPartition{6, PlacedKind::kPrimary, 16318, 16318}));
}

// On msdos the sfdisk KPMcore runs refuses a primary when no gap of a grain is left (installer
// sweep, seed 1, case 42: Calamares' module, then KPMcore's sfdisk commands: 2048-4095,
// 4096-8191, and the third fails).
TEST(InstallerLayoutTest, CalamaresThirdPrimaryFailsWithoutAGrainOfRoom) {
  Topology t = test::MakeTopology(512, 4096, 4096, 24576, 0, TopologyOrigin::kAssumed, 4618240);
  LayoutPrediction p = InstallerLayout(Installer::kKpmcore, t, NewestKnownVersions(),
                                       {LabelType::kDos, {kMiB, 1364992, std::nullopt}});
  ASSERT_EQ(p.partitions.size(), 2u) << p.error;
  EXPECT_EQ(p.partitions[1], (PlacedPartition{2, PlacedKind::kPrimary, 4096, 8191}));
  EXPECT_NE(p.error.find("partition 3: no gap of a libfdisk grain"), std::string::npos) << p.error;
}

// With a 4 MiB optimal I/O the GPT KPMcore's sfdisk writes begins its usable area at 8192, and
// `sfdisk --append start=4096` is refused (checked with sfdisk 2.38.1 under the simulator): an
// erase-disk install fails on its first partition there.
TEST(InstallerLayoutTest, CalamaresFirstGptPartitionBelowLibfdisksFirstLbaFails) {
  Topology t =
      test::MakeTopology(512, 4096, 4096, 4 * kMiB, 0, TopologyOrigin::kAssumed, 8ull << 30);
  LayoutPrediction p = InstallerLayout(Installer::kKpmcore, t, NewestKnownVersions(),
                                       {LabelType::kGpt, {512 * kMiB, std::nullopt}});
  EXPECT_TRUE(p.partitions.empty());
  EXPECT_NE(p.error.find("partition 1: 4096-1052671 is outside the usable area 8192-"),
            std::string::npos)
      << p.error;
  // msdos takes a start below libfdisk's first LBA.
  LayoutPrediction dos = InstallerLayout(Installer::kKpmcore, t, NewestKnownVersions(),
                                         {LabelType::kDos, {512 * kMiB, std::nullopt}});
  EXPECT_EQ(dos.partitions.size(), 2u) << dos.error;
}

// Anaconda's do_partitioning() allocates the larger request first: partition 1 is the 300 MiB
// one, then the 100 MiB one, then the growing rest up to the last aligned end (blivet 3.7.1
// run on a 1 GiB loop device gave 2048-616447, 616448-821247, 821248-2095103).
TEST(InstallerLayoutTest, AnacondaAllocatesLargerRequestsFirstAndGrowsTheRest) {
  Topology t = test::kRowA.topology();
  t.size_bytes = 1ull << 30;
  LayoutPrediction p = InstallerLayout(Installer::kBlivet, t, NewestKnownVersions(),
                                       {LabelType::kGpt, {100 * kMiB, 300 * kMiB, std::nullopt}});
  ASSERT_EQ(p.partitions.size(), 3u) << p.error;
  EXPECT_EQ(p.partitions[0], (PlacedPartition{1, PlacedKind::kPrimary, 2048, 616447}));
  EXPECT_EQ(p.partitions[1], (PlacedPartition{2, PlacedKind::kPrimary, 616448, 821247}));
  EXPECT_EQ(p.partitions[2], (PlacedPartition{3, PlacedKind::kPrimary, 821248, 2095103}));
  // Four partitions on msdos: the fourth becomes an extended one; not modelled, and said so.
  LayoutPrediction dos =
      InstallerLayout(Installer::kBlivet, t, NewestKnownVersions(),
                      {LabelType::kDos, {100 * kMiB, 100 * kMiB, 100 * kMiB, std::nullopt}});
  EXPECT_TRUE(dos.partitions.empty());
  EXPECT_EQ(dos.omitted.size(), 4u);
  EXPECT_FALSE(dos.omitted[0].modelled);
}

// Ubuntu: curtin v1 places each partition right after the previous one; the rest is subiquity's
// gap; a partition past the disk makes sgdisk fail, and the ones before stay.
TEST(InstallerLayoutTest, UbuntuSizesTheRestAsSubiquitysGap) {
  Topology t = test::kRowA.topology();
  t.size_bytes = 1ull << 30;
  LayoutPrediction p = InstallerLayout(Installer::kCurtin, t, NewestKnownVersions(),
                                       {LabelType::kGpt, {1536 * kKiB, std::nullopt}});
  ASSERT_EQ(p.partitions.size(), 2u) << p.error;
  EXPECT_EQ(p.partitions[0], (PlacedPartition{1, PlacedKind::kPrimary, 2048, 2048 + 3072 - 1}));
  // The gap runs from 1 MiB + 2 MiB (1.5 MiB rounded up) to 1 GiB - 1 MiB.
  EXPECT_EQ(p.partitions[1].start_sector, 5120u);
  EXPECT_EQ(p.partitions[1].end_sector, 5120u + ((1ull << 30) - 4 * kMiB) / 512 - 1);
  LayoutPrediction big = InstallerLayout(Installer::kCurtin, t, NewestKnownVersions(),
                                         {LabelType::kGpt, {512 * kMiB, 600 * kMiB}});
  ASSERT_EQ(big.partitions.size(), 1u);
  EXPECT_NE(big.error.find("partition 2: "), std::string::npos) << big.error;
  EXPECT_NE(big.error.find("sgdisk --new fails"), std::string::npos) << big.error;
}

// Issue #30 item 2: a 64 MiB disk behind the JMicron bridge, partitions of 1 MiB and 60 MiB.
// The YaST row showed partition 1 only, with no word about partition 2; every row shows both
// partitions or says why not. YaST's grain is the bridge's 65535 sectors, and its Partitioner
// takes no custom size below one grain (issue #31's whole-layout model): it places neither, and
// says so for partition 1.
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
    EXPECT_TRUE(yast->partitions.empty()) << yast->error;
    EXPECT_EQ(yast->error.rfind("partition 1: YaST's Partitioner takes a custom size from 32.00 "
                                "MiB (the optimal grain)",
                                0),
              0u)
        << yast->error;
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
