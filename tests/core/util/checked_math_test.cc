// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/util/checked_math.h"

#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

namespace partalign {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

TEST(CheckedMathTest, AddDetectsWrapAtTheTopOfTheRange) {
  EXPECT_EQ(CheckedAdd(kMax - 1, 1), kMax);
  EXPECT_EQ(CheckedAdd(kMax, 1), std::nullopt);
  EXPECT_EQ(CheckedAdd(1ULL << 63, 1ULL << 63), std::nullopt);
}

TEST(CheckedMathTest, SubRefusesNegativeResults) {
  EXPECT_EQ(CheckedSub(5, 5), 0u);
  EXPECT_EQ(CheckedSub(4, 5), std::nullopt);
}

TEST(CheckedMathTest, MulDetectsWrap) {
  EXPECT_EQ(CheckedMul(1ULL << 32, 1ULL << 31), 1ULL << 63);
  EXPECT_EQ(CheckedMul(1ULL << 32, 1ULL << 32), std::nullopt);
  EXPECT_EQ(CheckedMul(0, kMax), 0u);
}

TEST(CheckedMathTest, AnLbaAtTwoToTheSixtyThreeIsNotByteZero) {
  // 2^63 * 512 wraps to 0 in plain arithmetic: the bug that made such a partition "aligned".
  EXPECT_EQ(LbaToBytes(1ULL << 63, 512), std::nullopt);
  EXPECT_EQ(LbaToBytes(2048, 4096), 2048u * 4096u);
}

TEST(CheckedMathTest, LastSectorOfAnExtent) {
  EXPECT_EQ(LastSector(2048, 1), 2048u);
  EXPECT_EQ(LastSector(2048, 0), std::nullopt);
  EXPECT_EQ(LastSector(kMax, 1), kMax);
  EXPECT_EQ(LastSector(kMax, 2), std::nullopt);
}

}  // namespace
}  // namespace partalign
