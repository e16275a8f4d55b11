// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/gdisk_model.h"

#include <gtest/gtest.h>

#include "core/tools/section6_cases.h"

namespace partalign {
namespace {

const ToolVersion k109{1, 0, 9, 3};
constexpr uint64_t k100MiBAt512 = (100ull << 20) / 512;

GdiskPrediction Predict(const Topology& t, std::vector<uint64_t> existing = {},
                        ToolVersion v = k109) {
  Result<GdiskPrediction> p = PredictGdisk(t, v, existing, (100ull << 20) / t.logical_sector_size);
  EXPECT_TRUE(p.has_value());
  return *p;
}

TEST(GdiskModelTest, Section6FirstAndSecondStarts) {
  // §6: 2048 on every 512-byte row (F physically misaligned, verify silent), 256 on 4Kn.
  for (const test::Section6Row& row :
       {test::kRowA, test::kRowB, test::kRowC, test::kRowD, test::kRowE, test::kRowF, test::kRowH,
        test::kRowI, test::kRowJ, test::kRowK}) {
    GdiskPrediction p = Predict(row.topology());
    EXPECT_EQ(p.alignment_sectors, 2048u) << row.name();
    EXPECT_EQ(p.first_start, 2048u) << row.name();
    EXPECT_EQ(p.second_start, 2048u + k100MiBAt512) << row.name();
    EXPECT_FALSE(p.verify_warning) << row.name();
    EXPECT_EQ(p.first_usable_lba, 34u);
  }
  GdiskPrediction g = Predict(test::kRowG.topology());
  EXPECT_EQ(g.alignment_sectors, 256u);
  EXPECT_EQ(g.first_start, 256u);
  EXPECT_EQ(g.second_start, 25856u);
  EXPECT_EQ(g.first_usable_lba, 6u);
}

TEST(GdiskModelTest, InferenceFromExistingStarts) {
  // §4 [run]: a partition at 63 on an 8 GiB disk gives 1; on a 400 GB disk 8.
  EXPECT_EQ(GdiskComputeAlignment(k109, 512, (8ull << 30) / 512, {63}), 1u);
  EXPECT_EQ(GdiskComputeAlignment(k109, 512, 400000000000ull / 512, {63}), 8u);
  EXPECT_EQ(GdiskComputeAlignment(k109, 512, (8ull << 30) / 512, {2048, 206848}), 2048u);
  EXPECT_EQ(GdiskComputeAlignment(k109, 512, (8ull << 30) / 512, {2048, 4096 + 256}), 256u);
  EXPECT_EQ(GdiskComputeAlignment(k109, 4096, (8ull << 30) / 4096, {}), 256u);
  // Before 0.7.0 the large-disk threshold was 1250263728 sectors.
  EXPECT_EQ(GdiskComputeAlignment(ToolVersion{0, 6, 14, 3}, 512, 400000000000ull / 512, {63}), 1u);
  GdiskPrediction p = Predict(test::kRowA.topology(), {63});
  EXPECT_EQ(p.existing_table_alignment, 1u);
  EXPECT_EQ(p.first_start, 2048u);  // -o clears the table first
}

TEST(GdiskModelTest, OldVersionsKeep2048SectorsOn4Kn) {
  GdiskPrediction p = Predict(test::kRowG.topology(), {}, ToolVersion{0, 6, 11, 3});
  EXPECT_EQ(p.alignment_sectors, 2048u);
  EXPECT_EQ(p.first_start, 2048u);
}

TEST(GdiskModelTest, VerifyWarnsOnlyWhenTheStartMissesTheBoundary) {
  Topology t = test::kRowB.topology();
  EXPECT_FALSE(GdiskVerifyBeginWarning(t, 2048, 1, 2048));
  std::optional<std::string> w = GdiskVerifyBeginWarning(t, 1, 1, 63);
  ASSERT_TRUE(w);
  EXPECT_NE(w->find("doesn't begin on a 8-sector boundary"), std::string::npos);
}

}  // namespace
}  // namespace partalign
