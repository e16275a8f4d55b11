// SPDX-License-Identifier: GPL-3.0-or-later
// partalign explain end to end: the human and JSON output on images and hypothetical disks (no
// root), and the oracle tests: for every topology of alignment-heuristics.md §6 (and a few 4Kn
// ones), the real parted, sfdisk/fdisk, sgdisk and systemd-repart run on a loop device under
// the LD_PRELOAD topology simulator, and what they did must equal what explain predicts.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "partalign/tools/libfdisk_model.h"
#include "partalign/tools/parted_disk.h"
#include "partalign/tools/parted_model.h"
#include "support/device_test.h"
#include "support/loop_device.h"
#include "support/run_command.h"
#include "support/temp_dir.h"
#include "support/tool_oracle.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::RunPartalign;

constexpr unsigned long long kImageBytes = 64ull << 20;
// Large enough for parted's `0%` (a range of 0.5% of the disk) to reach 1 MiB.
constexpr unsigned long long kLargeImageBytes = 1ull << 30;
constexpr uint64_t kOracleDiskBytes = 8ull << 30;  // the §6 disk
constexpr uint64_t k100MiB = 100ull << 20;
constexpr uint64_t kOneMiB = 1ull << 20;

nlohmann::json ExplainJson(const std::vector<std::string>& args,
                           const std::map<std::string, std::string>& env = {}) {
  std::vector<std::string> full{"explain", "--json"};
  full.insert(full.end(), args.begin(), args.end());
  CommandResult r = RunPartalign(full, "", env);
  EXPECT_EQ(r.exit_code, 0) << test::Describe(full, r);
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  return j;
}

const nlohmann::json& Prediction(const nlohmann::json& j, const std::string& tool) {
  for (const nlohmann::json& p : j["predictions"]) {
    if (p["tool"] == tool) return p;
  }
  static const nlohmann::json kMissing;
  ADD_FAILURE() << "no prediction for " << tool;
  return kMissing;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return lines;
}

// ---- no root: hypothetical disks and image files ------------------------------------------------

TEST(ExplainCommandTest, JMicronBridgeOnAHypotheticalDisk) {
  CommandResult r = RunPartalign({"explain", "--assume", "usb-jmicron-0xffff", "--size", "2TB"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines[0],
            "parted will want 65535-sector alignment here and warns at 1 MiB; fdisk, gdisk and "
            "systemd-repart will start at 2048.");
  EXPECT_EQ(lines[1], "why:");
  EXPECT_NE(lines[2].find("parted: "), std::string::npos) << lines[2];
  EXPECT_NE(lines[2].find("optimal 33553920"), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find("controller error"), std::string::npos) << lines[3];
  EXPECT_NE(r.out.find("TOOL"), std::string::npos);
  EXPECT_NE(r.out.find("2048s % 65535s != 0s"), std::string::npos);
  EXPECT_EQ(r.out.find("cross-check"), std::string::npos) << "a hypothetical disk has no library";
}

TEST(ExplainCommandTest, JsonOnAHypotheticalDisk) {
  nlohmann::json j = ExplainJson({"--assume", "raid5-3x64k", "--size", "1TiB"});
  EXPECT_EQ(j["topology"]["device"], nullptr);
  EXPECT_EQ(j["topology"]["size_bytes"], 1ull << 40);
  EXPECT_EQ(j["topology"]["source"], "assumed");
  EXPECT_EQ(j["cross_check"], nullptr);
  ASSERT_EQ(j["predictions"].size(), 6u);
  const nlohmann::json& parted = Prediction(j, "parted-optimal");
  EXPECT_EQ(parted["grain_sectors"], 384);
  EXPECT_EQ(parted["warns_at_1mib"], true);
  EXPECT_EQ(parted["warning_at_1mib"],
            "The resulting partition is not properly aligned for best performance: 2048s % 384s "
            "!= 0s");
  EXPECT_EQ(Prediction(j, "sgdisk")["first_start_dos"], nullptr);
  EXPECT_EQ(Prediction(j, "partalign")["grain_sectors"], 6144);
}

TEST(ExplainCommandTest, ToolVersionSelectsAnotherEra) {
  nlohmann::json j = ExplainJson({"--assume", "usb-jmicron-0xffff-512", "--size", "8GiB",
                                  "--tool-version", "sfdisk=2.36", "--tool-version", "parted=2.3"});
  const nlohmann::json& sfdisk = Prediction(j, "sfdisk");
  EXPECT_EQ(sfdisk["version"], "2.36");
  EXPECT_EQ(sfdisk["version_source"], "--tool-version");
  EXPECT_EQ(sfdisk["era"], "util-linux 2.36");
  EXPECT_EQ(sfdisk["first_start_gpt"], 65535);
  EXPECT_EQ(Prediction(j, "systemd-repart")["first_start_gpt"], 65536);
  EXPECT_EQ(Prediction(j, "parted-optimal")["era"], "parted 2.2-2.3");
}

TEST(ExplainCommandTest, DosLabelSentenceSaysWhoWritesGptOnly) {
  CommandResult r =
      RunPartalign({"explain", "--label", "dos", "--assume", "xp-jumper", "--size", "8GiB"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string first = Lines(r.out).front();
  EXPECT_NE(first.find("parted and fdisk both start the first partition at 7 here"),
            std::string::npos)
      << first;
  EXPECT_NE(first.find("gdisk and systemd-repart write GPT only"), std::string::npos) << first;
}

TEST(ExplainCommandTest, ImageFileIsCrossCheckedAgainstTheLinkedLibraries) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kLargeImageBytes);
  // No topology on an image: every tool uses its defaults, and libparted/libfdisk agree.
  nlohmann::json j = ExplainJson({image});
  EXPECT_EQ(j["topology"]["source"], "default");
  for (const char* tool : {"parted-optimal", "sfdisk", "sgdisk", "systemd-repart"}) {
    EXPECT_EQ(Prediction(j, tool)["first_start_gpt"], 2048) << tool;
  }
  EXPECT_EQ(Prediction(j, "parted-minimal")["first_start_gpt"], 34);
  ASSERT_TRUE(j["cross_check"].is_object());
  EXPECT_GE(j["cross_check"]["items"].size(), 10u) << j["cross_check"].dump(2);
  EXPECT_EQ(j["cross_check"]["mismatches"], 0) << j["cross_check"].dump(2);
  EXPECT_TRUE(j["cross_check"]["errors"].empty()) << j["cross_check"].dump(2);
  // --assume does not reach the libraries: the check is labelled and still about the defaults.
  // (--size: at 1 GiB `0%` cannot reach sector 65535 either.)
  nlohmann::json a = ExplainJson({"--assume", "usb-jmicron-0xffff", "--size", "64GiB", image});
  EXPECT_EQ(Prediction(a, "parted-optimal")["first_start_gpt"], 65535);
  EXPECT_EQ(a["cross_check"]["mismatches"], 0);
  EXPECT_EQ(a["cross_check"]["topology"]["optimal_io_size"], 0);
  EXPECT_NE(a["cross_check"]["note"].get<std::string>().find("--assume"), std::string::npos);
}

TEST(ExplainCommandTest, SmallImagePartedCannotReachOneMebibyteWithZeroPercent) {
  // On 64 MiB `0%` accepts sectors 0..654 only: no multiple of 2048, so parted starts at the
  // first usable sector and warns. The real parted works on image files, so ask it too.
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kImageBytes);
  nlohmann::json j = ExplainJson({image});
  const nlohmann::json& p = Prediction(j, "parted-optimal");
  EXPECT_EQ(p["first_start_gpt"], 34);
  EXPECT_NE(p["warnings"].dump().find("34s % 2048s != 0s"), std::string::npos) << p.dump(2);
  CommandResult r = test::RunCommand({"parted", "-m", "-s", image, "mklabel", "gpt", "mkpart", "p",
                                      "0%", "100%", "unit", "s", "print"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\n1:34s:"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("34s % 2048s != 0s"), std::string::npos) << r.err;
}

TEST(ExplainCommandTest, ExistingGptFeedsGdisksInference) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kImageBytes);
  CommandResult s = test::RunCommand({"sfdisk", "--quiet", image},
                                     "label: gpt\nfirst-lba: 34\nstart=63,size=10M\n");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  nlohmann::json j = ExplainJson({image});
  std::string reasons = Prediction(j, "sgdisk")["reasons"].dump();
  EXPECT_NE(reasons.find("starts 63"), std::string::npos) << reasons;
  EXPECT_NE(reasons.find("alignment of 1 sectors"), std::string::npos) << reasons;
}

TEST(ExplainCommandTest, TheBridgeNamesWhatEachInstallerWillDo) {
  CommandResult r = RunPartalign({"explain", "--assume", "usb-jmicron-0xffff", "--size", "2TB"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* want :
       {"YaST (libstorage-ng 4.5.338): first partition at 65535 (GPT), not on a physical sector "
        "boundary",
        "Anaconda (blivet 3.14.0): first partition at 65535 (GPT)",
        "Calamares (kpmcore 26.4.3): first partition at 4096 (UEFI, GPT) / 2048 (BIOS, msdos)",
        "Ubuntu's installer (curtin 24.0.0): first partition at 2048 (GPT) / 2048 (msdos)",
        "INSTALLER"}) {
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  }
  nlohmann::json j =
      ExplainJson({"--assume", "usb-jmicron-0xffff", "--size", "2TB", "--installer-version",
                   "calamares=25.8", "--installer-version", "anaconda=3.1"});
  ASSERT_EQ(j["installer_predictions"].size(), 4u);
  const nlohmann::json& calamares = j["installer_predictions"][2];
  EXPECT_EQ(calamares["tool"], "calamares");
  EXPECT_EQ(calamares["version_source"], "--installer-version");
  EXPECT_EQ(calamares["era"], "kpmcore 24.08-25.08");
  EXPECT_EQ(j["installer_predictions"][1]["era"], "blivet 1.16-3.1");
  EXPECT_EQ(j["installer_predictions"][0]["grain_sectors"], 65535);
}

void ExpectOneLineError(const std::vector<std::string>& args, const std::string& part) {
  CommandResult r = RunPartalign(args);
  EXPECT_EQ(r.exit_code, 1) << test::Describe(args, r);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find(part), std::string::npos) << r.err;
}

TEST(ExplainCommandTest, BadInputIsAOneLineError) {
  ExpectOneLineError({"explain"}, "TARGET is required");
  ExpectOneLineError({"explain", "--size", "1TB", "--tool-version", "parted=1.8"},
                     "older than the oldest modelled version");
  ExpectOneLineError({"explain", "--size", "1TB", "--tool-version", "mkfs=1"}, "unknown tool");
  ExpectOneLineError({"explain", "--size", "1TB", "--installer-version", "yast=2.0"},
                     "older than the oldest modelled version");
  ExpectOneLineError({"explain", "--size", "1TB", "--installer-version", "d-i=1"},
                     "unknown installer");
  ExpectOneLineError({"explain", "--size", "lots"}, "--size");
  ExpectOneLineError({"explain", "--size", "1TB", "--assume", "size=2TB"}, "disagree");
  ExpectOneLineError({"explain", "--size", "1TB", "--label", "sun"}, "--label");
  ExpectOneLineError({"explain", "/nonexistent/disk.img"}, "cannot open '/nonexistent/disk.img'");
}

// ---- root: the real tools as oracles ----------------------------------------------------------

struct OracleRow {
  const char* name;
  uint64_t lbs, pbs, min_io, opt_io, align_off;
};

// gtest prints the row by name instead of its bytes.
void PrintTo(const OracleRow& r, std::ostream* os) { *os << r.name; }

std::string AssumeSpec(const OracleRow& r) {
  return fmt::format("log={},phys={},min-io={},opt-io={},align-offset={}", r.lbs, r.pbs, r.min_io,
                     r.opt_io, r.align_off);
}

Topology RowTopology(const OracleRow& r) {
  Topology t;
  t.logical_sector_size = r.lbs;
  t.physical_sector_size = r.pbs;
  t.minimum_io_size = r.min_io;
  t.optimal_io_size = r.opt_io;
  t.alignment_offset = r.align_off;
  t.size_bytes = kOracleDiskBytes;
  t.origin = TopologyOrigin::kAssumed;
  return t;
}

nlohmann::json StartOrNull(const std::vector<uint64_t>& starts, size_t i) {
  return i < starts.size() ? nlohmann::json(starts[i]) : nlohmann::json(nullptr);
}

class ExplainOracleTest : public testing::TestWithParam<OracleRow> {};

TEST_P(ExplainOracleTest, RealToolsDoWhatExplainPredicts) {
  PARTALIGN_REQUIRE_DEVICES();
  std::string missing;
  ASSERT_TRUE(test::OracleToolsInstalled(&missing)) << missing << " is not installed";
  const OracleRow& row = GetParam();
  const Topology t = RowTopology(row);
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kOracleDiskBytes);
  test::LoopDevice loop(image, static_cast<unsigned>(row.lbs));
  const std::string dev = loop.path();

  nlohmann::json j = ExplainJson({"--assume", AssumeSpec(row), dev});
  ASSERT_EQ(j["topology"]["optimal_io_size"], row.opt_io);

  // partalign itself under the simulator: its libblkid probe and the libparted/libfdisk of the
  // cross-check see the simulated topology, and the models must agree with those libraries.
  nlohmann::json shimmed = ExplainJson({dev}, test::ShimEnvironment(dev, t));
  EXPECT_EQ(shimmed["topology"]["source"], "kernel");
  EXPECT_EQ(shimmed["topology"]["physical_sector_size"], row.pbs);
  EXPECT_EQ(shimmed["topology"]["alignment_offset"], row.align_off);
  EXPECT_EQ(shimmed["cross_check"]["mismatches"], 0) << shimmed["cross_check"].dump(2);
  EXPECT_GE(shimmed["cross_check"]["items"].size(), 12u) << shimmed["cross_check"].dump(2);
  EXPECT_EQ(shimmed["predictions"], j["predictions"]);

  // parted: mkpart primary 0% 100% in both modes on both labels; 1MiB on gpt with align-check.
  Result<PartedModel> model = MakePartedModel(t, *ParseToolVersion("3.5"));
  ASSERT_TRUE(model.has_value());
  for (PartedMode mode : {PartedMode::kOptimal, PartedMode::kMinimal}) {
    const nlohmann::json& p = Prediction(j, fmt::format("parted-{}", ToString(mode)));
    for (LabelType label : {LabelType::kGpt, LabelType::kDos}) {
      test::PartedResult r = test::RunParted(dev, t, mode, label, "0%", "100%", false);
      SCOPED_TRACE(
          fmt::format("parted -a {} {} 0%: {}", ToString(mode), PartedLabelName(label), r.raw.err));
      EXPECT_EQ(r.ran ? nlohmann::json(r.start) : nlohmann::json(nullptr),
                p[label == LabelType::kGpt ? "first_start_gpt" : "first_start_dos"]);
      EXPECT_EQ(r.logical, static_cast<int64_t>(row.lbs));
      EXPECT_EQ(r.physical, static_cast<int64_t>(row.pbs));
    }
    test::PartedResult r = test::RunParted(dev, t, mode, LabelType::kGpt, "1MiB", "100%", true);
    SCOPED_TRACE(fmt::format("parted -a {} gpt 1MiB: {}", ToString(mode), r.raw.err));
    ASSERT_TRUE(r.ran);
    EXPECT_EQ(r.start, static_cast<int64_t>(kOneMiB / row.lbs));
    EXPECT_EQ(!r.warning.empty(), p["warns_at_1mib"].get<bool>());
    EXPECT_EQ(r.warning.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.warning),
              p["warning_at_1mib"]);
    EXPECT_EQ(r.align_check_output, p["align_check_at_1mib"].get<std::string>());
    EXPECT_EQ(r.align_check_exit, p["warns_at_1mib"].get<bool>() ? 1 : 0);
  }
  // The 1MB (decimal, a range of +-976 sectors) cells of §6, msdos.
  {
    test::PartedResult r =
        test::RunParted(dev, t, PartedMode::kOptimal, LabelType::kDos, "1MB", "100%", false);
    MkpartOutcome m = PredictMkpart(*model, PartedMode::kOptimal, LabelType::kDos, "1MB", "100%");
    EXPECT_EQ(r.start, m.start_sector) << r.raw.err;
    EXPECT_EQ(r.warning, m.warning.value_or("")) << r.raw.err;
  }

  // sfdisk: `,100M` and `,` on both labels; fdisk -l on the result; an explicit 1 MiB start.
  const nlohmann::json& sf = Prediction(j, "sfdisk");
  Result<LibfdiskContext> cxt = DiscoverLibfdisk(t, *ParseToolVersion("2.38.1"));
  ASSERT_TRUE(cxt.has_value());
  for (LabelType label : {LabelType::kGpt, LabelType::kDos}) {
    const bool gpt = label == LabelType::kGpt;
    test::SfdiskResult r = test::RunSfdisk(dev, t, label, {",100M", ","}, true);
    SCOPED_TRACE(fmt::format("sfdisk {}: {}", gpt ? "gpt" : "dos", r.error));
    ASSERT_TRUE(r.ran);
    EXPECT_EQ(StartOrNull(r.starts, 0), sf[gpt ? "first_start_gpt" : "first_start_dos"]);
    EXPECT_EQ(StartOrNull(r.starts, 1), sf[gpt ? "second_start_gpt" : "second_start_dos"]);
    Result<LibfdiskLabel> l = CreateLibfdiskLabel(*cxt, label);
    ASSERT_TRUE(l.has_value());
    if (gpt) {
      EXPECT_EQ(r.first_lba, l->first_usable_lba);
    }
    EXPECT_EQ(r.fdisk_min_io, cxt->min_io_size);
    EXPECT_EQ(r.fdisk_opt_io, cxt->optimal_io_size ? cxt->optimal_io_size : cxt->io_size);
    EXPECT_EQ(r.fdisk_alignment_offset, cxt->alignment_offset);
    std::vector<int> expected_warnings;
    for (size_t i = 0; i < r.starts.size(); ++i) {
      if (!FdiskLbaIsPhyAligned(l->cxt, r.starts[i])) {
        expected_warnings.push_back(static_cast<int>(i + 1));
      }
    }
    EXPECT_EQ(r.not_phys_aligned, expected_warnings);
    const std::string warning = std::string(gpt ? "GPT: " : "DOS: ") + FdiskPhysBoundaryWarning(1);
    bool predicted = sf["warnings"].dump().find(warning) != std::string::npos;
    EXPECT_EQ(!r.not_phys_aligned.empty() && r.not_phys_aligned.front() == 1, predicted);
  }
  {
    // DOS: a script start below the first LBA is accepted there (GPT would refuse it when the
    // topology moves FirstUsableLBA beyond 1 MiB).
    test::SfdiskResult r = test::RunSfdisk(
        dev, t, LabelType::kDos,
        {fmt::format("start={},size={}", kOneMiB / row.lbs, k100MiB / row.lbs)}, true);
    ASSERT_TRUE(r.ran) << r.error;
    EXPECT_EQ(!r.not_phys_aligned.empty(), sf["warns_at_1mib"].get<bool>());
  }

  // sgdisk -o -n 1:0:+100M -n 2:0:0, sgdisk -v.
  {
    const nlohmann::json& sg = Prediction(j, "sgdisk");
    test::SgdiskResult r = test::RunSgdisk(dev, t, {"-n", "1:0:+100M", "-n", "2:0:0"}, true);
    ASSERT_TRUE(r.ran) << r.error;
    EXPECT_EQ(StartOrNull(r.starts, 0), sg["first_start_gpt"]);
    EXPECT_EQ(StartOrNull(r.starts, 1), sg["second_start_gpt"]);
    EXPECT_EQ(r.logical, row.lbs);
    EXPECT_EQ(r.physical, row.pbs);
    EXPECT_EQ(r.verify_begin_warnings.empty(), sg["warnings"].empty());
  }

  // systemd-repart --empty=force with a 100 MiB definition and one for the rest.
  {
    const nlohmann::json& rp = Prediction(j, "systemd-repart");
    test::RepartResult r = test::RunRepart(dev, t, dir.File("repart.d"), k100MiB);
    ASSERT_TRUE(r.ran) << r.error;
    EXPECT_EQ(StartOrNull(r.starts, 0), rp["first_start_gpt"]);
    EXPECT_EQ(StartOrNull(r.starts, 1), rp["second_start_gpt"]);
  }
  test::WipeDevice(dev);
}

// §6 rows A-K, then 4Kn variants of the bridge, 4 MiB and RAID-5 rows.
INSTANTIATE_TEST_SUITE_P(
    Section6, ExplainOracleTest,
    testing::Values(
        OracleRow{"A", 512, 512, 512, 0, 0}, OracleRow{"B", 512, 4096, 4096, 0, 0},
        OracleRow{"C", 512, 4096, 4096, 33553920, 0}, OracleRow{"D", 512, 4096, 4096, 1048576, 0},
        OracleRow{"E", 512, 512, 65536, 131072, 0}, OracleRow{"F", 512, 4096, 4096, 0, 3584},
        OracleRow{"G", 4096, 4096, 4096, 0, 0}, OracleRow{"H", 512, 4096, 65536, 196608, 0},
        OracleRow{"I", 512, 512, 512, 33553920, 0}, OracleRow{"J", 512, 512, 512, 4194304, 0},
        OracleRow{"K", 512, 512, 196608, 0, 0}, OracleRow{"C4k", 4096, 4096, 4096, 33553920, 0},
        OracleRow{"J4k", 4096, 4096, 4096, 4194304, 0},
        OracleRow{"H4k", 4096, 4096, 65536, 196608, 0}),
    [](const testing::TestParamInfo<OracleRow>& row) { return std::string(row.param.name); });

// Issue 40, item 11: on a 3 MiB disk `mkpart primary 1MiB 100%` fails and the real parted 3.5
// prints its error and no warning; explain says "no" warning (and why it fails), never null.
TEST(ExplainTinyDiskTest, PartedPrintsNoWarningAtOneMebibyteOnAThreeMebibyteDisk) {
  PARTALIGN_REQUIRE_DEVICES();
  std::string missing;
  ASSERT_TRUE(test::OracleToolsInstalled(&missing)) << missing << " is not installed";
  for (const OracleRow& row :
       {OracleRow{"A", 512, 512, 512, 0, 0}, OracleRow{"C", 512, 4096, 4096, 33553920, 0}}) {
    SCOPED_TRACE(row.name);
    Topology t = RowTopology(row);
    t.size_bytes = 3ull << 20;
    test::TempDir dir;
    const std::string image = dir.File("disk.img");
    test::CreateSparseFile(image, t.size_bytes);
    test::LoopDevice loop(image, static_cast<unsigned>(row.lbs));
    const std::string dev = loop.path();
    nlohmann::json j = ExplainJson({dev}, test::ShimEnvironment(dev, t));
    for (PartedMode mode : {PartedMode::kOptimal, PartedMode::kMinimal}) {
      const nlohmann::json& p = Prediction(j, fmt::format("parted-{}", ToString(mode)));
      test::PartedResult r = test::RunParted(dev, t, mode, LabelType::kGpt, "1MiB", "100%", false);
      SCOPED_TRACE(fmt::format("parted -a {} gpt 1MiB 100%: {}", ToString(mode), r.raw.err));
      EXPECT_FALSE(r.ran);
      EXPECT_EQ(r.warning, "");
      EXPECT_EQ(p["warns_at_1mib"], false) << p.dump(2);
      ASSERT_TRUE(p["error_at_1mib"].is_string()) << p.dump(2);
      EXPECT_NE(r.raw.err.find("You requested a partition from"), std::string::npos);
      test::WipeDevice(dev);
    }
    // The text table says so too.
    std::vector<std::string> args{"explain", dev};
    CommandResult text = RunPartalign(args, "", test::ShimEnvironment(dev, t));
    ASSERT_EQ(text.exit_code, 0) << test::Describe(args, text);
    EXPECT_NE(text.out.find("no (refuses)"), std::string::npos) << text.out;
  }
}

}  // namespace
}  // namespace partalign
