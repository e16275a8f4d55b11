// SPDX-License-Identifier: GPL-3.0-or-later
// libcryptsetup on headers written by the real cryptsetup luksFormat (image files: no
// device-mapper and no root needed to format or read a header), checked against luksDump.
#include "io/stack/luks_header.h"

#include <gtest/gtest.h>

#include "io/device/target.h"
#include "support/run_command.h"
#include "support/stack_tools.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CopyBytes;
using test::CreateSparseFile;
using test::LuksDumpDataOffset;
using test::LuksFormat;
using test::TempDir;

constexpr uint64_t kImageBytes = 64ull << 20;

LuksHeaderInfo ReadWhole(const std::string& image, uint64_t offset = 0,
                         uint64_t size = kImageBytes) {
  Result<Target> t = OpenTarget(image);
  EXPECT_TRUE(t) << (t ? "" : t.error().message);
  Result<LuksHeaderInfo> info = ReadLuksHeader(t->fd.get(), image, offset, size);
  EXPECT_TRUE(info) << (info ? "" : info.error().message);
  return info ? *info : LuksHeaderInfo{};
}

struct Case {
  const char* name;
  std::vector<std::string> args;
  int version;
};

class LuksHeaderTest : public testing::TestWithParam<Case> {};

TEST_P(LuksHeaderTest, ReadsThePayloadOffsetLuksDumpPrints) {
  TempDir dir;
  const std::string image = dir.File("luks.img");
  CreateSparseFile(image, kImageBytes);
  test::CommandResult r = LuksFormat(image, GetParam().args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const uint64_t expected = LuksDumpDataOffset(image);
  LuksHeaderInfo info = ReadWhole(image);
  EXPECT_EQ(info.version, GetParam().version);
  EXPECT_EQ(info.data_offset_bytes, expected) << GetParam().name;
}

INSTANTIATE_TEST_SUITE_P(
    Formats, LuksHeaderTest,
    testing::Values(
        Case{"LUKS2 default", {}, 2}, Case{"LUKS2 --offset 4104", {"--offset", "4104"}, 2},
        Case{"LUKS1 default", {"--type", "luks1"}, 1},
        // 4046 sectors: not even 4 KiB-aligned (the audit's odd-offset fixture)
        Case{"LUKS1 --align-payload 7", {"--type", "luks1", "--align-payload", "7"}, 1}));

TEST(LuksHeaderTest2, ReadsAHeaderInsideALargerImage) {
  TempDir dir;
  const std::string luks = dir.File("luks.img"), disk = dir.File("disk.img");
  CreateSparseFile(luks, kImageBytes);
  ASSERT_EQ(LuksFormat(luks, {}).exit_code, 0);
  CreateSparseFile(disk, kImageBytes + (1 << 20));
  CopyBytes(luks, 0, disk, 1 << 20, 1 << 20);  // the binary and JSON copies: 2 x 16 KiB
  LuksHeaderInfo info = ReadWhole(disk, 1 << 20, kImageBytes);
  EXPECT_EQ(info.version, 2);
  EXPECT_EQ(info.data_offset_bytes, 16u << 20);
  EXPECT_EQ(info.encryption_sector_bytes, 4096u);
}

// libcryptsetup repairs a damaged LUKS2 header copy when it can write; partalign hands it a
// sealed copy, so the disk stays as it is.
TEST(LuksHeaderTest2, NeverWritesEvenWhenACopyIsDamaged) {
  TempDir dir;
  const std::string image = dir.File("luks.img");
  CreateSparseFile(image, kImageBytes);
  ASSERT_EQ(LuksFormat(image, {}).exit_code, 0);
  test::WriteBytesAt(image, 16384 + 100, std::vector<uint8_t>(64, 0xAA));  // secondary header
  const std::string before = dir.File("before.img");
  test::RunOrThrow({"cp", "--sparse=always", image, before});
  LuksHeaderInfo info = ReadWhole(image);
  EXPECT_EQ(info.data_offset_bytes, 16u << 20);
  EXPECT_EQ(test::RunCommand({"cmp", image, before}).exit_code, 0);
}

TEST(LuksHeaderTest2, RefusesGarbageWithOneLine) {
  TempDir dir;
  const std::string image = dir.File("bad.img");
  CreateSparseFile(image, 1 << 20);
  // A LUKS2 magic with a header size LUKS2 does not allow.
  std::vector<uint8_t> head{'L', 'U', 'K', 'S', 0xba, 0xbe, 0, 2, 0, 0, 0, 0, 0, 0, 0x12, 0x34};
  test::WriteBytesAt(image, 0, head);
  Result<Target> t = OpenTarget(image);
  ASSERT_TRUE(t);
  Result<LuksHeaderInfo> info = ReadLuksHeader(t->fd.get(), image, 0, 1 << 20);
  ASSERT_FALSE(info);
  EXPECT_NE(info.error().message.find("header size"), std::string::npos) << info.error().message;
  EXPECT_EQ(info.error().message.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace partalign
