// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/libfdisk_model.h"

#include <gtest/gtest.h>

#include "core/tools/section6_cases.h"

namespace partalign {
namespace {

using test::Section6Row;

const ToolVersion k2381{2, 38, 1, 3};
constexpr uint64_t k100MiB = 100ull << 20;

LibfdiskContext Discover(const Topology& t, ToolVersion v = k2381,
                         std::optional<uint64_t> user_sector = {}) {
  Result<LibfdiskContext> c = DiscoverLibfdisk(t, v, user_sector);
  EXPECT_TRUE(c.has_value());
  return *c;
}

SfdiskPlacement Place(const LibfdiskContext& c, LabelType label) {
  Result<LibfdiskLabel> l = CreateLibfdiskLabel(c, label);
  EXPECT_TRUE(l.has_value());
  return PredictSfdisk(*l, k100MiB / c.sector_size);
}

// §6 as sfdisk 2.38.1 runs `label: gpt|dos`, `,100M`, `,`: grain, GPT FirstUsableLBA, p1 and
// p2 on both labels, and whether fdisk -l warns about p1.
struct SfdiskCase {
  Section6Row row;
  uint64_t grain_sectors;
  uint64_t gpt_first_usable;
  uint64_t gpt_p1, gpt_p2, dos_p1, dos_p2;
  bool p1_warns;
};

// gtest (and ctest's test names) print the case by row instead of its bytes.
void PrintTo(const SfdiskCase& c, std::ostream* os) { *os << c.row.name(); }

class SfdiskSection6Test : public testing::TestWithParam<SfdiskCase> {};

TEST_P(SfdiskSection6Test, MatchesTheTable) {
  const SfdiskCase& c = GetParam();
  LibfdiskContext cxt = Discover(c.row.topology());
  EXPECT_EQ(cxt.grain_bytes / cxt.sector_size, c.grain_sectors) << c.row.name();
  Result<LibfdiskLabel> gpt = CreateLibfdiskLabel(cxt, LabelType::kGpt);
  ASSERT_TRUE(gpt.has_value());
  EXPECT_EQ(gpt->first_usable_lba, c.gpt_first_usable) << c.row.name();
  SfdiskPlacement g = Place(cxt, LabelType::kGpt);
  SfdiskPlacement d = Place(cxt, LabelType::kDos);
  ASSERT_TRUE(g.first_start && d.first_start) << g.error << d.error;
  EXPECT_EQ(*g.first_start, c.gpt_p1) << c.row.name();
  EXPECT_EQ(g.second_start, c.gpt_p2) << c.row.name();
  EXPECT_EQ(*d.first_start, c.dos_p1) << c.row.name();
  EXPECT_EQ(d.second_start, c.dos_p2) << c.row.name();
  EXPECT_EQ(!g.first_start_phys_aligned, c.p1_warns) << c.row.name();
}

INSTANTIATE_TEST_SUITE_P(
    Section6, SfdiskSection6Test,
    testing::Values(SfdiskCase{test::kRowA, 2048, 2048, 2048, 206848, 2048, 206848, false},
                    SfdiskCase{test::kRowB, 2048, 2048, 2048, 206848, 2048, 206848, false},
                    SfdiskCase{test::kRowC, 2048, 2048, 2048, 206848, 2048, 206848, false},
                    SfdiskCase{test::kRowD, 2048, 2048, 2048, 206848, 2048, 206848, false},
                    SfdiskCase{test::kRowE, 2048, 2048, 2048, 206848, 2048, 206848, false},
                    SfdiskCase{test::kRowF, 2048, 34, 2047, 206847, 7, 204807, false},
                    SfdiskCase{test::kRowG, 256, 256, 256, 25856, 256, 25856, false},
                    SfdiskCase{test::kRowH, 2048, 2048, 2048, 206848, 2048, 206848, false},
                    SfdiskCase{test::kRowI, 2048, 2048, 2048, 206848, 2048, 206848, false},
                    SfdiskCase{test::kRowJ, 8192, 8192, 8192, 212992, 8192, 212992, false},
                    SfdiskCase{test::kRowK, 2048, 2048, 2048, 206848, 2048, 206848, true}),
    [](const testing::TestParamInfo<SfdiskCase>& c) { return c.param.row.name(); });

TEST(LibfdiskModelTest, BridgeValueIsKeptBefore237) {
  // util-linux 2.27-2.36 on I (pbs 512): 33553920 is a multiple of 512, so it is the grain and
  // the first LBA is 65535 (commit 68a8648ce's message); on C (pbs 4096) 2.27 already drops it.
  LibfdiskContext i = Discover(test::kRowI.topology(), ToolVersion{2, 36, 0, 2});
  EXPECT_EQ(i.io_size, 33553920u);
  EXPECT_EQ(i.grain_bytes, 33553920u);
  EXPECT_EQ(i.first_lba, 65535u);
  LibfdiskContext c = Discover(test::kRowC.topology(), ToolVersion{2, 27, 0, 2});
  EXPECT_EQ(c.io_size, 4096u);
  EXPECT_EQ(c.first_lba, 2048u);
  // util-linux <= 2.26 keeps it on C too: first LBA 65535 with a 33553920-byte grain, and the
  // bit-mask arithmetic accepts 65535 as aligned.
  LibfdiskContext old = Discover(test::kRowC.topology(), ToolVersion{2, 26, 0, 2});
  EXPECT_EQ(old.grain_bytes, 33553920u);
  EXPECT_EQ(old.first_lba, 65535u);
  EXPECT_EQ(*Place(old, LabelType::kGpt).first_start, 65535u);
}

TEST(LibfdiskModelTest, UserSectorSizeResetsTheIoSize) {
  // §3.1: J gives first LBA 8192 normally, 2048 after fdisk_save_user_sector_size(c, 0, 512).
  EXPECT_EQ(Discover(test::kRowJ.topology()).first_lba, 8192u);
  LibfdiskContext reset = Discover(test::kRowJ.topology(), k2381, 512);
  EXPECT_EQ(reset.first_lba, 2048u);
  EXPECT_EQ(reset.grain_bytes, 1048576u);
}

TEST(LibfdiskModelTest, ExplicitStartAtOneMebibyteWarnsWithAnAlignmentOffset) {
  // §6 F: start=2048 gives "does not start on physical sector boundary".
  LibfdiskContext f = Discover(test::kRowF.topology());
  EXPECT_FALSE(FdiskLbaIsPhyAligned(f, 2048));
  EXPECT_TRUE(FdiskLbaIsPhyAligned(f, 2047));
  EXPECT_TRUE(FdiskLbaIsPhyAligned(Discover(test::kRowB.topology()), 2048));
  EXPECT_EQ(FdiskPhysBoundaryWarning(1), "Partition 1 does not start on physical sector boundary.");
}

TEST(LibfdiskModelTest, AlignmentOffsetCompensationLandsOneSectorLow) {
  LibfdiskContext f = Discover(test::kRowF.topology());
  f.first_lba = 34;
  EXPECT_EQ(FdiskAlignLba(f, 34, AlignDirection::kUp), 2047u);
  EXPECT_EQ(FdiskAlignLba(f, 2055, AlignDirection::kUp), 2055u);  // already aligned
  EXPECT_EQ(FdiskAlignLba(f, 206846, AlignDirection::kNearest), 206847u);
}

TEST(LibfdiskModelTest, ImageFileGetsTheDefaults) {
  Topology t = test::kRowC.topology();
  t.origin = TopologyOrigin::kDefault;
  LibfdiskContext c = Discover(t);
  EXPECT_EQ(c.phy_sector_size, 512u);
  EXPECT_EQ(c.min_io_size, 512u);
  EXPECT_EQ(c.optimal_io_size, 0u);
  EXPECT_EQ(c.first_lba, 2048u);
}

// §3.2 small-device rules: at most 4 grains, the grain is the physical sector; at most 4 first
// LBAs, the first LBA is one physical sector.
struct SmallCase {
  Section6Row row;
  uint64_t size_bytes;
  uint64_t grain_bytes, first_lba, gpt_p1, dos_p1;
};

void PrintTo(const SmallCase& c, std::ostream* os) {
  *os << c.row.name() << " " << c.size_bytes << " bytes";
}

class SmallDeviceTest : public testing::TestWithParam<SmallCase> {};

TEST_P(SmallDeviceTest, UsesThePhysicalSector) {
  const SmallCase& c = GetParam();
  Topology t = c.row.topology();
  t.size_bytes = c.size_bytes;
  LibfdiskContext cxt = Discover(t);
  EXPECT_EQ(cxt.grain_bytes, c.grain_bytes);
  EXPECT_EQ(cxt.first_lba, c.first_lba);
  EXPECT_EQ(*Place(cxt, LabelType::kGpt).first_start, c.gpt_p1);
  EXPECT_EQ(*Place(cxt, LabelType::kDos).first_start, c.dos_p1);
}

INSTANTIATE_TEST_SUITE_P(
    Thresholds, SmallDeviceTest,
    testing::Values(
        // 4 MiB 512e: grain 4096, first LBA 8 (GPT p1 40, DOS 8); 5 MiB is normal.
        SmallCase{test::kRowB, 4ull << 20, 4096, 8, 40, 8},
        SmallCase{test::kRowB, 5ull << 20, 1 << 20, 2048, 2048, 2048},
        // Optimal I/O 4 MiB: the threshold is 16 MiB; above it the 4 MiB grain and 8192 apply.
        SmallCase{test::kRowJ, 16ull << 20, 512, 1, 34, 1},
        SmallCase{test::kRowJ, 17ull << 20, 4u << 20, 8192, 8192, 8192}));

}  // namespace
}  // namespace partalign
