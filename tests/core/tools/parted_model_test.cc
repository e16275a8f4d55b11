// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/parted_model.h"
#include "partalign/tools/parted_disk.h"

#include <gtest/gtest.h>

#include "core/tools/section6_cases.h"

namespace partalign {
namespace {

using test::Section6Row;

const ToolVersion kParted35{3, 5, 0, 2};

PartedModel Model(const Topology& t, ToolVersion v = kParted35) {
  Result<PartedModel> m = MakePartedModel(t, v);
  EXPECT_TRUE(m.has_value()) << (m ? "" : m.error().message);
  return *m;
}

// One §6 row as parted 3.5 runs it: alignments, `mkpart primary 0% 100%` on gpt and msdos, and
// `mkpart primary 1MiB 100%` on gpt (start and warning arithmetic, "" = no warning).
struct PartedCase {
  Section6Row row;
  PartedMode mode;
  SectorAlignment alignment;
  int64_t gpt_start;
  int64_t msdos_start;
  const char* warning_at_1mib;
};

// gtest (and ctest's test names) print the case by row and mode instead of its bytes.
void PrintTo(const PartedCase& c, std::ostream* os) {
  *os << c.row.name() << " " << ToString(c.mode);
}

class PartedSection6Test : public testing::TestWithParam<PartedCase> {};

TEST_P(PartedSection6Test, MatchesTheTable) {
  const PartedCase& c = GetParam();
  PartedModel m = Model(c.row.topology());
  EXPECT_EQ(m.For(c.mode), c.alignment) << c.row.name();
  MkpartOutcome gpt = PredictMkpart(m, c.mode, LabelType::kGpt, "0%", "100%");
  ASSERT_TRUE(gpt.created) << gpt.error;
  EXPECT_EQ(gpt.start_sector, c.gpt_start) << c.row.name();
  EXPECT_FALSE(gpt.warning) << *gpt.warning;
  MkpartOutcome dos = PredictMkpart(m, c.mode, LabelType::kDos, "0%", "100%");
  ASSERT_TRUE(dos.created) << dos.error;
  EXPECT_EQ(dos.start_sector, c.msdos_start) << c.row.name();
  MkpartOutcome mib = PredictMkpart(m, c.mode, LabelType::kGpt, "1MiB", "100%");
  ASSERT_TRUE(mib.created) << mib.error;
  EXPECT_EQ(mib.start_sector, int64_t{1048576} / static_cast<int64_t>(c.row.lbs));
  std::string expected = c.warning_at_1mib;
  if (expected.empty()) {
    EXPECT_FALSE(mib.warning) << c.row.name() << ": " << *mib.warning;
  } else {
    ASSERT_TRUE(mib.warning) << c.row.name();
    EXPECT_EQ(*mib.warning,
              "The resulting partition is not properly aligned for best performance: " + expected);
  }
  // align-check agrees with the warning.
  AlignCheckOutcome check = PredictAlignCheck(m, c.mode, 1, mib.start_sector);
  EXPECT_EQ(check.script_exit_status, expected.empty() ? 0 : 1);
  if (!expected.empty()) {
    EXPECT_EQ(check.output, "1 not aligned: " + expected);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Section6, PartedSection6Test,
    testing::Values(
        PartedCase{test::kRowA, PartedMode::kOptimal, {0, 2048}, 2048, 2048, ""},
        PartedCase{test::kRowA, PartedMode::kMinimal, {0, 1}, 34, 1, ""},
        PartedCase{test::kRowB, PartedMode::kOptimal, {0, 2048}, 2048, 2048, ""},
        PartedCase{test::kRowB, PartedMode::kMinimal, {0, 8}, 40, 8, ""},
        PartedCase{
            test::kRowC, PartedMode::kOptimal, {0, 65535}, 65535, 65535, "2048s % 65535s != 0s"},
        PartedCase{test::kRowC, PartedMode::kMinimal, {0, 8}, 40, 8, ""},
        PartedCase{test::kRowD, PartedMode::kOptimal, {0, 2048}, 2048, 2048, ""},
        PartedCase{test::kRowD, PartedMode::kMinimal, {0, 8}, 40, 8, ""},
        PartedCase{test::kRowE, PartedMode::kOptimal, {0, 2048}, 2048, 2048, ""},
        PartedCase{test::kRowE, PartedMode::kMinimal, {0, 128}, 128, 128, ""},
        PartedCase{test::kRowF, PartedMode::kOptimal, {7, 2048}, 2055, 7, "2048s % 2048s != 7s"},
        PartedCase{test::kRowF, PartedMode::kMinimal, {7, 8}, 39, 7, "2048s % 8s != 7s"},
        PartedCase{test::kRowG, PartedMode::kOptimal, {0, 256}, 256, 256, ""},
        PartedCase{test::kRowG, PartedMode::kMinimal, {0, 1}, 6, 1, ""},
        PartedCase{test::kRowH, PartedMode::kOptimal, {0, 384}, 384, 384, "2048s % 384s != 0s"},
        PartedCase{test::kRowH, PartedMode::kMinimal, {0, 128}, 128, 128, ""},
        PartedCase{
            test::kRowI, PartedMode::kOptimal, {0, 65535}, 65535, 65535, "2048s % 65535s != 0s"},
        PartedCase{test::kRowI, PartedMode::kMinimal, {0, 1}, 34, 1, ""},
        PartedCase{test::kRowJ, PartedMode::kOptimal, {0, 8192}, 8192, 8192, "2048s % 8192s != 0s"},
        PartedCase{test::kRowJ, PartedMode::kMinimal, {0, 1}, 34, 1, ""},
        PartedCase{test::kRowK, PartedMode::kOptimal, {0, 384}, 384, 384, "2048s % 384s != 0s"},
        PartedCase{test::kRowK, PartedMode::kMinimal, {0, 384}, 384, 384, "2048s % 384s != 0s"}),
    [](const testing::TestParamInfo<PartedCase>& c) {
      return c.param.row.name() + "_" + std::string(ToString(c.param.mode));
    });

TEST(PartedModelTest, OneMegabyteOnMsdosIsARangeOfAboutOneUnit) {
  // §6: `mkpart 1MB` (msdos) gives 1953 plus a warning on C, 1920 on H, 2055 on F.
  MkpartOutcome c = PredictMkpart(Model(test::kRowC.topology()), PartedMode::kOptimal,
                                  LabelType::kDos, "1MB", "100%");
  EXPECT_EQ(c.start_sector, 1953);
  ASSERT_TRUE(c.warning);
  EXPECT_NE(c.warning->find("1953s % 65535s != 0s"), std::string::npos);
  MkpartOutcome h = PredictMkpart(Model(test::kRowH.topology()), PartedMode::kOptimal,
                                  LabelType::kDos, "1MB", "100%");
  EXPECT_EQ(h.start_sector, 1920);
  EXPECT_FALSE(h.warning);
  MkpartOutcome f = PredictMkpart(Model(test::kRowF.topology()), PartedMode::kOptimal,
                                  LabelType::kDos, "1MB", "100%");
  EXPECT_EQ(f.start_sector, 2055);
}

TEST(PartedModelTest, ImageFilesUseTheDefaultsWhateverTheTopologySays) {
  Topology t = test::kRowC.topology();
  t.origin = TopologyOrigin::kDefault;
  t.physical_sector_size = t.minimum_io_size = 512;
  PartedModel m = Model(t);
  EXPECT_EQ(m.optimum, (SectorAlignment{0, 2048}));
  EXPECT_EQ(m.minimum, (SectorAlignment{0, 1}));
  EXPECT_FALSE(m.device.has_topology);
}

TEST(PartedModelTest, Parted23UsesOptimalIoWheneverItIsReported) {
  // The 2.2/2.3 rule: D (opt 1 MiB) and E (opt 128 KiB) get their optimal I/O, not 1 MiB; F
  // (offset, opt 0) gets the minimum alignment.
  const ToolVersion v23{2, 3, 0, 2};
  EXPECT_EQ(Model(test::kRowD.topology(), v23).optimum, (SectorAlignment{0, 2048}));
  EXPECT_EQ(Model(test::kRowE.topology(), v23).optimum, (SectorAlignment{0, 256}));
  EXPECT_EQ(Model(test::kRowF.topology(), v23).optimum, (SectorAlignment{7, 8}));
  EXPECT_EQ(Model(test::kRowB.topology(), v23).optimum, (SectorAlignment{0, 2048}));
  // MiB positions are still ranges of a whole unit (2048 +- 2047), so the start snaps to the
  // edge of the free area (34) and the nearest aligned sector is 384: on H `1MiB` gives 384
  // without a warning, where parted 3.5 keeps 2048 and warns.
  MkpartOutcome o = PredictMkpart(Model(test::kRowH.topology(), v23), PartedMode::kOptimal,
                                  LabelType::kGpt, "1MiB", "100%");
  EXPECT_EQ(o.start_sector, 384);
  EXPECT_FALSE(o.warning);
}

TEST(PartedModelTest, WarningTextBeforeParted33HasNoArithmetic) {
  MkpartOutcome o = PredictMkpart(Model(test::kRowC.topology(), ToolVersion{3, 2, 0, 2}),
                                  PartedMode::kOptimal, LabelType::kGpt, "1MiB", "100%");
  ASSERT_TRUE(o.warning);
  EXPECT_EQ(*o.warning, "The resulting partition is not properly aligned for best performance.");
  AlignCheckOutcome c = PredictAlignCheck(Model(test::kRowC.topology(), ToolVersion{3, 2, 0, 2}),
                                          PartedMode::kOptimal, 1, 2048);
  EXPECT_EQ(c.output, "1 not aligned");
}

TEST(PartedModelTest, MsdosRefusesPartitionsLongerThan32Bits) {
  Topology t = test::kRowA.topology();
  t.size_bytes = 4ull << 40;
  MkpartOutcome o = PredictMkpart(Model(t), PartedMode::kOptimal, LabelType::kDos, "0%", "100%");
  EXPECT_FALSE(o.created);
  EXPECT_NE(o.error.find("msdos-partition-table-imposed maximum"), std::string::npos);
  EXPECT_TRUE(PredictMkpart(Model(t), PartedMode::kOptimal, LabelType::kGpt, "0%", "100%").created);
}

TEST(PartedModelTest, TinyDiskWithAHugeGrainFallsBackAndWarns) {
  // 16 MiB: 0% accepts sectors 0..162, no multiple of 65535 fits, so parted takes the first
  // usable sector exactly and warns.
  Topology t = test::kRowC.topology();
  t.size_bytes = 16ull << 20;
  MkpartOutcome o = PredictMkpart(Model(t), PartedMode::kOptimal, LabelType::kGpt, "0%", "100%");
  ASSERT_TRUE(o.created) << o.error;
  EXPECT_EQ(o.start_sector, 34);
  ASSERT_TRUE(o.warning);
  EXPECT_NE(o.warning->find("34s % 65535s != 0s"), std::string::npos);
}

TEST(PartedModelTest, PositionsParseLikeParted) {
  PartedModel m = Model(test::kRowA.topology());
  PartedPosition p = *ParsePartedPosition(m, "0%");
  EXPECT_EQ(p.sector, 0);
  EXPECT_EQ(p.range_start, 0);
  EXPECT_EQ(p.range_end, 83885);  // ceil(85899345 / 512) / 2 - 1
  p = *ParsePartedPosition(m, "100%");
  EXPECT_EQ(p.sector, 16777215);
  p = *ParsePartedPosition(m, "1MiB");
  EXPECT_EQ(p.sector, 2048);
  EXPECT_EQ(p.range_start, 2048);
  EXPECT_EQ(p.range_end, 2048);
  p = *ParsePartedPosition(m, "-1s");
  EXPECT_EQ(p.sector, 16777215);
  EXPECT_FALSE(ParsePartedPosition(m, "3cyl").has_value());
  EXPECT_FALSE(ParsePartedPosition(m, "abc").has_value());
}

TEST(PartedModelTest, VersionsBeforeTwoPointTwoAreNotModelled) {
  EXPECT_FALSE(MakePartedModel(test::kRowA.topology(), ToolVersion{2, 1, 0, 2}).has_value());
}

TEST(PartedModelTest, ReasonsNameTheValuesTheyUse) {
  PartedModel m = Model(test::kRowC.topology());
  std::string all;
  for (const std::string& r : m.optimum_reasons) all += r + "\n";
  EXPECT_NE(all.find("33553920"), std::string::npos) << all;
  EXPECT_NE(all.find("65535"), std::string::npos) << all;
}

}  // namespace
}  // namespace partalign
