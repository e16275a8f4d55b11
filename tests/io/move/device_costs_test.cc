// SPDX-License-Identifier: GPL-3.0-or-later
// The measurement a move starts with (io/move/device_costs.h): two rates from a probe file
// beside the journal, the probe removed; a probe name already taken is refused, not
// overwritten.
#include "io/move/device_costs.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace partalign {
namespace {

TEST(DeviceCostsTest, MeasuresBothPatternsAndLeavesNothingBehind) {
  test::TempDir dir;
  const std::string journal = dir.File("move.journal");
  Result<DeviceCosts> costs = MeasureDeviceCosts(journal, 128 * 1024);
  ASSERT_TRUE(costs) << costs.error().message;
  EXPECT_GT(costs->stream_bytes_per_second, 0);
  EXPECT_GT(costs->ordered_bytes_per_second, 0);
  EXPECT_EQ(costs->ordered_chunk_bytes, 128u * 1024);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  // No chunk: the stream alone.
  Result<DeviceCosts> stream = MeasureDeviceCosts(journal, 0);
  ASSERT_TRUE(stream) << stream.error().message;
  EXPECT_GT(stream->stream_bytes_per_second, 0);
  EXPECT_EQ(stream->ordered_bytes_per_second, 0);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(DeviceCostsTest, TheOrderedPatternEndsWhereTheWayIsDecided) {
  test::TempDir dir;
  const std::string journal = dir.File("move.journal");
  // 128 KiB chunks: 64 of them unless the way is decided; asked after every 4 but the last.
  std::vector<uint64_t> asked_at;
  auto never = [&](const DeviceCosts& so_far) {
    EXPECT_GT(so_far.stream_bytes_per_second, 0);
    EXPECT_GT(so_far.ordered_bytes_per_second, 0);
    asked_at.push_back(so_far.ordered_cycles);
    return false;
  };
  Result<DeviceCosts> all = MeasureDeviceCosts(journal, 128 * 1024, never);
  ASSERT_TRUE(all) << all.error().message;
  EXPECT_EQ(all->ordered_cycles, 64u);
  EXPECT_EQ(asked_at,
            (std::vector<uint64_t>{4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60}));
  Result<DeviceCosts> early =
      MeasureDeviceCosts(journal, 128 * 1024, [](const DeviceCosts&) { return true; });
  ASSERT_TRUE(early) << early.error().message;
  EXPECT_EQ(early->ordered_cycles, 4u);
  EXPECT_GT(early->ordered_bytes_per_second, 0);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  // Without a question, the whole pattern.
  Result<DeviceCosts> plain = MeasureDeviceCosts(journal, 128 * 1024);
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(plain->ordered_cycles, 64u);
}

// The question is asked once, after the ordered pattern, with one stream sample; only a yes
// measures the stream a second time (which of the two rates is kept is not seen from here).
TEST(DeviceCostsTest, TheStreamIsMeasuredAgainOnlyWhenTheOrderedWayWouldBeTaken) {
  test::TempDir dir;
  const std::string journal = dir.File("move.journal");
  for (bool ordered : {false, true}) {
    SCOPED_TRACE(ordered);
    std::vector<uint64_t> asked_at;
    auto cheaper = [&](const DeviceCosts& so_far) {
      EXPECT_GT(so_far.stream_bytes_per_second, 0);
      EXPECT_GT(so_far.ordered_bytes_per_second, 0);
      EXPECT_EQ(so_far.stream_samples, 1u);
      asked_at.push_back(so_far.ordered_cycles);
      return ordered;
    };
    Result<DeviceCosts> costs = MeasureDeviceCosts(
        journal, 128 * 1024, [](const DeviceCosts&) { return false; }, cheaper);
    ASSERT_TRUE(costs) << costs.error().message;
    EXPECT_EQ(asked_at, std::vector<uint64_t>{64});
    EXPECT_EQ(costs->stream_samples, ordered ? 2u : 1u);
    EXPECT_GT(costs->stream_bytes_per_second, 0);
    EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  }
  // No ordered pattern (no chunk): nothing to ask.
  bool asked = false;
  Result<DeviceCosts> stream = MeasureDeviceCosts(journal, 0, {}, [&](const DeviceCosts&) {
    asked = true;
    return true;
  });
  ASSERT_TRUE(stream) << stream.error().message;
  EXPECT_FALSE(asked);
  EXPECT_EQ(stream->stream_samples, 1u);
}

TEST(DeviceCostsTest, AProbeNameThatExistsIsRefusedAndKept) {
  test::TempDir dir;
  const std::string journal = dir.File("move.journal");
  std::ofstream(journal + ".probe") << "someone's file";
  Result<DeviceCosts> costs = MeasureDeviceCosts(journal, 4096);
  ASSERT_FALSE(costs);
  EXPECT_EQ(costs.error().message, "cannot create '" + journal +
                                       ".probe': it exists (a move killed while it measured "
                                       "leaves it behind; remove it)");
  std::ifstream kept(journal + ".probe");
  std::string text;
  std::getline(kept, text);
  EXPECT_EQ(text, "someone's file");
  // A directory that does not exist: the error names the probe.
  Result<DeviceCosts> missing = MeasureDeviceCosts(dir.File("no/such/j"), 4096);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("no/such/j.probe"), std::string::npos);
}

}  // namespace
}  // namespace partalign
