// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/repart_layout.h"

#include <gtest/gtest.h>

#include "support/test_topology.h"

namespace partalign {
namespace {

const ToolVersion kSystemd252{252, 0, 0, 1};
const ToolVersion kUtilLinux2381{2, 38, 1, 3};
constexpr uint64_t kMiB = 1 << 20;

Topology Disk(uint64_t bytes) {
  return test::MakeTopology(512, 512, 512, 0, 0, TopologyOrigin::kKernel, bytes);
}

// systemd test/units/testsuite-58.sh (TEST-58-REPART), "copy_to": definitions of 10 MiB and
// 5 MiB and one taking the rest of a 60 MiB image give 2048+20480, 22528+10240, 32768+90072:
// the rest ends where the last usable LBA 122846 rounds down to the 4 KiB grain.
TEST(RepartLayoutTest, UpstreamTestsuite58SizesAndTheRest) {
  RepartLayout r = PredictRepartLayout(Disk(60 * kMiB), kSystemd252, kUtilLinux2381,
                                       {10 * kMiB, 5 * kMiB, std::nullopt});
  ASSERT_TRUE(r.error.empty()) << r.error;
  ASSERT_EQ(r.partitions.size(), 3u);
  EXPECT_EQ(r.partitions[0], (RepartPartition{1, 2048, 2048 + 20480 - 1}));
  EXPECT_EQ(r.partitions[1], (RepartPartition{2, 22528, 22528 + 10240 - 1}));
  EXPECT_EQ(r.partitions[2], (RepartPartition{3, 32768, 32768 + 90072 - 1}));
}

// testsuite-58.sh "size_auto_with_grain_size": --grain-size=2097152 starts the first
// partition at 2 MiB (libfdisk's 1 MiB first LBA rounded up); 10 MiB sizes follow on.
TEST(RepartLayoutTest, UpstreamTestsuite58GrainSize) {
  RepartLayout r = PredictRepartLayout(Disk(64 * kMiB), kSystemd252, kUtilLinux2381,
                                       {10 * kMiB, 10 * kMiB, 10 * kMiB}, 2 * kMiB);
  ASSERT_TRUE(r.error.empty()) << r.error;
  ASSERT_EQ(r.partitions.size(), 3u);
  EXPECT_EQ(r.partitions[0].start_sector, 4096u);
  EXPECT_EQ(r.partitions[1].start_sector, 24576u);
  EXPECT_EQ(r.partitions[2].start_sector, 45056u);
}

// A size that is not a multiple of the grain is rounded up, so the next start stays on it.
TEST(RepartLayoutTest, SizesRoundUpToTheGrain) {
  RepartLayout r = PredictRepartLayout(Disk(64 * kMiB), kSystemd252, kUtilLinux2381,
                                       {kMiB + 1000, std::nullopt});
  ASSERT_EQ(r.partitions.size(), 2u);
  EXPECT_EQ(r.partitions[0].end_sector, 2048u + 2048 + 8 - 1);  // 1 MiB + 4 KiB
  EXPECT_EQ(r.partitions[1].start_sector, 2048u + 2048 + 8);
}

// A definition without a size needs 10 MiB (DEFAULT_MIN_SIZE): repart refuses when it does
// not fit, and writes nothing.
TEST(RepartLayoutTest, TheRestNeedsTenMebibytes) {
  RepartLayout r =
      PredictRepartLayout(Disk(64 * kMiB), kSystemd252, kUtilLinux2381, {55 * kMiB, std::nullopt});
  EXPECT_TRUE(r.partitions.empty());
  EXPECT_NE(r.error.find("Can't fit requested partitions"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace partalign
