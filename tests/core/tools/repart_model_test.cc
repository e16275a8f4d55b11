// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/repart_model.h"

#include <gtest/gtest.h>

#include "core/tools/section6_cases.h"

namespace partalign {
namespace {

const ToolVersion k252{252, 0, 0, 1};
const ToolVersion k257{257, 0, 0, 1};
const ToolVersion k2381{2, 38, 1, 3};
const ToolVersion k236{2, 36, 0, 2};

RepartPrediction Predict(const Topology& t, ToolVersion systemd = k252,
                         ToolVersion util_linux = k2381) {
  Result<RepartPrediction> p = PredictRepart(t, systemd, util_linux, {}, 100ull << 20);
  EXPECT_TRUE(p.has_value());
  return *p;
}

TEST(RepartModelTest, Section6WithV252) {
  struct Case {
    test::Section6Row row;
    uint64_t p1, p2;
  };
  for (const Case& c : {Case{test::kRowA, 2048, 206848}, Case{test::kRowB, 2048, 206848},
                        Case{test::kRowC, 2048, 206848}, Case{test::kRowD, 2048, 206848},
                        Case{test::kRowE, 2048, 206848}, Case{test::kRowF, 40, 204840},
                        Case{test::kRowG, 256, 25856}, Case{test::kRowH, 2048, 206848},
                        Case{test::kRowI, 2048, 206848}, Case{test::kRowJ, 8192, 212992},
                        Case{test::kRowK, 2048, 206848}}) {
    RepartPrediction p = Predict(c.row.topology());
    EXPECT_EQ(p.first_start, c.p1) << c.row.name();
    EXPECT_EQ(p.second_start, c.p2) << c.row.name();
  }
  EXPECT_EQ(Predict(test::kRowA.topology()).grain_bytes, 4096u);
  EXPECT_EQ(Predict(test::kRowG.topology()).grain_bytes, 4096u);
}

TEST(RepartModelTest, CurrentRepartResetsTheIoSize) {
  // §5: J gives 8192 with v252 but 2048 with a repart that saves the sector size; F stays 40.
  EXPECT_EQ(Predict(test::kRowJ.topology(), k257).first_start, 2048u);
  EXPECT_EQ(Predict(test::kRowF.topology(), k257).first_start, 40u);
}

TEST(RepartModelTest, OldLibfdiskMovesRepartToo) {
  // §5: with libfdisk 2.27-2.36 and I (512/512/512/33553920/0) the first LBA is 65535, so
  // repart starts at 65536.
  EXPECT_EQ(Predict(test::kRowI.topology(), k252, k236).first_start, 65536u);
}

TEST(RepartModelTest, UserGrainSize) {
  Result<RepartPrediction> p =
      PredictRepart(test::kRowF.topology(), k257, k2381, /*grain_size_bytes=*/1 << 20);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->first_start, 2048u);
}

TEST(RepartModelTest, TooSmallDiskFails) {
  Topology t = test::kRowA.topology();
  t.size_bytes = 8ull << 20;  // 8 MiB minus the first MiB is less than the 10 MiB minimum
  RepartPrediction p = Predict(t);
  EXPECT_FALSE(p.first_start.has_value());
  EXPECT_FALSE(p.error.empty());
}

}  // namespace
}  // namespace partalign
