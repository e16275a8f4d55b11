// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/installers/installer_report.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/tools/section6_cases.h"
#include "partalign/tools/explain_report.h"

namespace partalign {
namespace {

const ToolPrediction& Row(const std::vector<ToolPrediction>& all, std::string_view name) {
  for (const ToolPrediction& p : all) {
    if (p.tool == name) return p;
  }
  ADD_FAILURE() << "no row " << name;
  return all.front();
}

// The usb-jmicron-0xffff profile: 512/4096/4096/33553920/0, here on a 2 TB disk.
Topology Bridge() {
  Topology t = test::kRowC.topology();
  t.size_bytes = 2000000000000ull;
  return t;
}

TEST(InstallerReportTest, TheBridgeNamesWhatEachInstallerDoesAndWhy) {
  std::vector<ToolPrediction> all =
      PredictInstallers(Bridge(), NewestKnownInstallerVersions(), ToolVersion{3, 5, 0, 2});
  ASSERT_EQ(all.size(), 4u);
  const ToolPrediction& yast = Row(all, "yast");
  EXPECT_EQ(yast.grain_sectors, 65535);
  EXPECT_EQ(yast.first_start_gpt, 65535u);
  EXPECT_EQ(yast.first_start_dos, 65535u);
  // A 100 MiB partition's end is aligned down: the next slot is 4 x 65535.
  EXPECT_EQ(yast.second_start_gpt, 4u * 65535);
  EXPECT_NE(yast.key_reason.find("without any sanity check"), std::string::npos);
  // parted, which YaST runs at commit, agrees on 65535 and warns at 1 MiB.
  EXPECT_EQ(yast.warns_at_1mib, true);

  const ToolPrediction& anaconda = Row(all, "anaconda");
  EXPECT_EQ(anaconda.grain_sectors, 65535);
  EXPECT_EQ(anaconda.first_start_gpt, 65535u);
  EXPECT_NE(anaconda.key_reason.find("libparted"), std::string::npos);

  const ToolPrediction& calamares = Row(all, "calamares");
  EXPECT_EQ(calamares.grain_sectors, 2048);
  EXPECT_EQ(calamares.first_start_gpt, 4096u);  // UEFI: 2 MiB
  EXPECT_EQ(calamares.first_start_dos, 2048u);  // BIOS: 1 MiB
  EXPECT_EQ(calamares.warns_at_1mib, false);

  const ToolPrediction& ubuntu = Row(all, "ubuntu");
  EXPECT_EQ(ubuntu.first_start_gpt, 2048u);
  EXPECT_EQ(ubuntu.second_start_gpt, 2048u + 204800);

  std::vector<std::string> lines = InstallerSummaryLines(all, Bridge());
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[0].find("YaST (libstorage-ng"), std::string::npos);
  EXPECT_NE(lines[0].find("65535 (GPT), not on a physical sector boundary"), std::string::npos)
      << lines[0];
  EXPECT_NE(lines[2].find("4096 (UEFI, GPT)"), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find("never reads the topology"), std::string::npos) << lines[3];
}

TEST(InstallerReportTest, ExplainJsonHasInstallerPredictionsInThePredictionsShape) {
  DeviceInfo device;
  device.topology = Bridge();
  ExplainReport r = BuildExplainReport(device, NewestKnownVersions());
  nlohmann::json j = ExplainJson(r);
  ASSERT_TRUE(j.contains("installer_predictions"));
  ASSERT_EQ(j["installer_predictions"].size(), 4u);
  for (const nlohmann::json& p : j["installer_predictions"]) {
    for (auto it = j["predictions"][0].begin(); it != j["predictions"][0].end(); ++it) {
      EXPECT_TRUE(p.contains(it.key())) << it.key();
    }
    EXPECT_EQ(p.size(), j["predictions"][0].size());
  }
  EXPECT_EQ(j["installer_predictions"][0]["tool"], "yast");
  EXPECT_EQ(j["installer_predictions"][0]["first_start_gpt"], 65535);
}

TEST(InstallerReportTest, AnOverriddenVersionChangesTheEra) {
  InstallerVersions v = NewestKnownInstallerVersions();
  v.kpmcore = {ToolVersion{25, 8, 0, 2}, VersionSource::kInstallerOverride};
  Topology t = test::kRowG.topology();  // 4Kn
  std::vector<ToolPrediction> all = PredictInstallers(t, v, ToolVersion{3, 5, 0, 2});
  const ToolPrediction& calamares = Row(all, "calamares");
  EXPECT_EQ(calamares.grain_sectors, 2048);  // 8 MiB on 4Kn before 25.12
  EXPECT_EQ(calamares.warns_at_1mib, true);
  EXPECT_EQ(calamares.era, "kpmcore 24.08-25.08");
  v.kpmcore = {ToolVersion{25, 12, 0, 2}, VersionSource::kInstallerOverride};
  all = PredictInstallers(t, v, ToolVersion{3, 5, 0, 2});
  EXPECT_EQ(Row(all, "calamares").grain_sectors, 256);
}

TEST(InstallerReportTest, KpmcoreVerdictIsTheScanWarning) {
  Topology t = test::kRowA.topology();
  ToolVerdict bad = KpmcoreVerdict(t, 1, 63, 2047);
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.message, "Partition 1 is not properly aligned (first sector: 63, modulo: 63).");
  EXPECT_TRUE(KpmcoreVerdict(t, 2, 2048, 4095).ok);
}

TEST(InstallerVersionTest, OverridesNameAnInstallerAndAModelledVersion) {
  Result<std::pair<Installer, ToolVersion>> o = ParseInstallerVersionOverride("yast=4.1");
  ASSERT_TRUE(o);
  EXPECT_EQ(o->first, Installer::kLibstorageNg);
  EXPECT_FALSE(ParseInstallerVersionOverride("anaconda=0.20"));  // older than modelled
  EXPECT_FALSE(ParseInstallerVersionOverride("debian-installer=1.0"));
  EXPECT_FALSE(ParseInstallerVersionOverride("curtin"));
}

}  // namespace
}  // namespace partalign
