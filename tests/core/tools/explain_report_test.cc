// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/explain_report.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/tools/section6_cases.h"
#include "partalign/topology/probe_report.h"

namespace partalign {
namespace {

ToolVersions Debian12() {
  ToolVersions v;
  v.parted = {*ParseToolVersion("3.5"), VersionSource::kInstalled};
  v.util_linux = {*ParseToolVersion("2.38.1"), VersionSource::kInstalled};
  v.gptfdisk = {*ParseToolVersion("1.0.9"), VersionSource::kInstalled};
  v.systemd = {*ParseToolVersion("252"), VersionSource::kInstalled};
  return v;
}

DeviceInfo Device(const Topology& t) {
  DeviceInfo d;
  d.topology = t;
  d.identity.path = "disk.img";
  return d;
}

const ToolPrediction& Get(const ExplainReport& r, std::string_view tool) {
  for (const ToolPrediction& p : r.predictions) {
    if (p.tool == tool) return p;
  }
  ADD_FAILURE() << "no prediction for " << tool;
  return r.predictions.front();
}

TEST(ExplainReportTest, JMicronBridgeSentence) {
  Topology t = test::kRowC.topology();
  t.size_bytes = 2000000000000ull;
  ExplainReport r = BuildExplainReport(Device(t), Debian12());
  EXPECT_EQ(r.sentence,
            "parted will want 65535-sector alignment here and warns at 1 MiB; fdisk, gdisk and "
            "systemd-repart will start at 2048.");
  ASSERT_GE(r.why.size(), 2u);
  EXPECT_NE(r.why[0].find("parted"), std::string::npos);
  EXPECT_NE(r.why[0].find("33553920"), std::string::npos) << r.why[0];
  EXPECT_NE(r.why[1].find("controller error"), std::string::npos) << r.why[1];
  EXPECT_EQ(Get(r, "parted-optimal").warning_at_1mib,
            "The resulting partition is not properly aligned for best performance: 2048s % "
            "65535s != 0s");
  EXPECT_EQ(Get(r, "parted-optimal").align_check_at_1mib, "1 not aligned: 2048s % 65535s != 0s");
}

TEST(ExplainReportTest, AgreementSentence) {
  ExplainReport r = BuildExplainReport(Device(test::kRowA.topology()), Debian12());
  EXPECT_EQ(r.sentence,
            "parted, fdisk, gdisk and systemd-repart all start the first partition at 2048 here.");
}

TEST(ExplainReportTest, AlignmentOffsetSentenceNamesThePhysicallyMisalignedTools) {
  ExplainReport r = BuildExplainReport(Device(test::kRowF.topology()), Debian12());
  EXPECT_NE(r.sentence.find("parted will start at 2055 and warns at 1 MiB"), std::string::npos)
      << r.sentence;
  EXPECT_NE(r.sentence.find("fdisk will start at 2047"), std::string::npos) << r.sentence;
  EXPECT_NE(r.sentence.find("gdisk will start at 2048 (not on a physical sector boundary)"),
            std::string::npos)
      << r.sentence;
  EXPECT_NE(r.sentence.find("systemd-repart will start at 40 (not on a physical sector boundary)"),
            std::string::npos)
      << r.sentence;
}

TEST(ExplainReportTest, EveryToolHasARowAndTheJsonHasTheDocumentedKeys) {
  ExplainReport r = BuildExplainReport(Device(test::kRowH.topology()), Debian12());
  std::vector<std::string> tools;
  for (const ToolPrediction& p : r.predictions) tools.push_back(p.tool);
  EXPECT_EQ(tools, (std::vector<std::string>{"parted-optimal", "parted-minimal", "sfdisk", "sgdisk",
                                             "systemd-repart", "partalign"}));
  nlohmann::json j = ExplainJson(r);
  EXPECT_EQ(j["schema_version"], kJsonSchemaVersion);
  EXPECT_EQ(j["topology"]["optimal_io_size"], 196608);
  ASSERT_EQ(j["predictions"].size(), 6u);
  for (const nlohmann::json& p : j["predictions"]) {
    for (const char* key : {"tool", "version", "grain_sectors", "offset_sectors", "first_start_gpt",
                            "first_start_dos", "warns_at_1mib", "reasons"}) {
      EXPECT_TRUE(p.contains(key)) << p["tool"] << " lacks " << key;
    }
    EXPECT_FALSE(p["reasons"].empty()) << p["tool"];
  }
  EXPECT_EQ(j["predictions"][0]["grain_sectors"], 384);
  EXPECT_EQ(j["predictions"][0]["first_start_gpt"], 384);
  EXPECT_EQ(j["predictions"][3]["first_start_dos"], nullptr);  // sgdisk: GPT only
  EXPECT_EQ(j["predictions"][4]["warns_at_1mib"], nullptr);    // repart: no explicit starts
  EXPECT_EQ(j["cross_check"], nullptr);
  // partalign: 1 MiB raised to the stripe: lcm(1 MiB, 192 KiB) = 3 MiB.
  EXPECT_EQ(j["predictions"][5]["grain_sectors"], 6144);
  EXPECT_EQ(j["predictions"][5]["first_start_gpt"], 6144);
}

TEST(ExplainReportTest, PartalignNeverUsesTheBridgeValue) {
  ExplainReport r = BuildExplainReport(Device(test::kRowC.topology()), Debian12());
  const ToolPrediction& p = Get(r, "partalign");
  EXPECT_EQ(p.grain_sectors, 2048);
  EXPECT_EQ(p.first_start_gpt, 2048u);
  EXPECT_EQ(p.first_start_dos, 2048u);
  EXPECT_EQ(p.warns_at_1mib, false);
  // The report outlives the reference into it (a temporary would not: ASan's use-after-free).
  const ExplainReport row_f = BuildExplainReport(Device(test::kRowF.topology()), Debian12());
  const ToolPrediction& f = Get(row_f, "partalign");
  EXPECT_EQ(f.first_start_gpt, 2055u);
  EXPECT_EQ(f.warns_at_1mib, true);
}

TEST(ExplainReportTest, OlderErasChangeThePredictions) {
  ToolVersions v = Debian12();
  v.util_linux.version = *ParseToolVersion("2.36");
  v.util_linux.source = VersionSource::kUserOverride;
  ExplainReport r = BuildExplainReport(Device(test::kRowI.topology()), v);
  EXPECT_EQ(Get(r, "sfdisk").first_start_gpt, 65535u);
  EXPECT_EQ(Get(r, "systemd-repart").first_start_gpt, 65536u);
}

TEST(ExplainReportTest, TableRowsAndDetails) {
  ExplainReport r = BuildExplainReport(Device(test::kRowC.topology()), Debian12());
  std::vector<std::vector<std::string>> rows = ExplainTableRows(r);
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"parted-optimal", "3.5", "65535", "0", "65535",
                                               "65535", "yes"}));
  EXPECT_EQ(rows[3][5], "-");
  std::vector<std::string> details = ExplainDetailLines(r);
  ASSERT_FALSE(details.empty());
  EXPECT_EQ(details[0], "parted-optimal: parted 3.5 (installed, parted >= 3.3)");
  EXPECT_EQ(details[1].rfind("  ", 0), 0u);
}

TEST(ExplainReportTest, CrossCheckFlagsAMismatch) {
  LiveAlignment live;
  live.libparted_version = *ParseToolVersion("3.5");
  live.parted_optimum = SectorAlignment{0, 2048};
  live.parted_minimum = SectorAlignment{0, 8};
  live.libfdisk_version = *ParseToolVersion("2.38.1");
  live.fdisk_grain_bytes = 1048576;
  live.fdisk_first_lba = 2048;
  CrossCheck c = CompareWithModels(live, test::kRowC.topology());
  ASSERT_EQ(c.items.size(), 4u);
  EXPECT_EQ(c.mismatches(), 1);  // the model says parted's optimum is 65535 sectors on C
  EXPECT_FALSE(c.items[0].match);
  EXPECT_EQ(c.items[0].model, "grain 65535 offset 0");
  EXPECT_TRUE(c.items[1].match);
}

}  // namespace
}  // namespace partalign

namespace partalign {
namespace {

// On a disk of a few MiB `mkpart primary 1MiB 100%` fails (checked with parted 3.5 on 2 and 3
// MiB loop devices: "You requested a partition from 1049kB to 2097kB ... The closest location
// we can manage is ..."): explain says so instead of leaving the answer empty.
TEST(ExplainReportTest, PartedRefusesOneMebibyteOnATinyDisk) {
  Topology t = test::kRowC.topology();
  t.size_bytes = 2ull << 20;
  ExplainReport r = BuildExplainReport(Device(t), Debian12());
  const ToolPrediction& p = Get(r, "parted-optimal");
  EXPECT_EQ(p.warns_at_1mib, false);  // no warning: parted prints its error only
  ASSERT_TRUE(p.error_at_1mib);
  EXPECT_NE(p.error_at_1mib->find("You requested a partition from 1MiB to 100%"), std::string::npos)
      << *p.error_at_1mib;
  nlohmann::json j = ExplainJson(r);
  EXPECT_TRUE(j["predictions"][0]["error_at_1mib"].is_string());
  EXPECT_EQ(j["predictions"][0]["warns_at_1mib"], false);
  EXPECT_EQ(ExplainTableRows(r).front().back(), "no (refuses)");
  // At 4 MiB parted places it (2048..8158) and warns about the 65535-sector grain.
  t.size_bytes = 4ull << 20;
  ExplainReport four = BuildExplainReport(Device(t), Debian12());
  const ToolPrediction& q = Get(four, "parted-optimal");
  EXPECT_EQ(q.warns_at_1mib, true);
  EXPECT_FALSE(q.error_at_1mib);
}

}  // namespace
}  // namespace partalign
