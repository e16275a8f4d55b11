// SPDX-License-Identifier: GPL-3.0-or-later
// The measurement a move starts with (io/move/device_costs.h): two rates from a probe file
// beside the journal, the probe removed; a probe name already taken is refused, not
// overwritten.
#include "io/move/device_costs.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

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
