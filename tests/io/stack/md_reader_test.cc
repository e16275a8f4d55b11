// SPDX-License-Identifier: GPL-3.0-or-later
// MD superblocks written by the test helper (the kernel here has no md driver, so mdadm cannot
// create arrays) and read back by partalign; `mdadm --examine` is the oracle that the helper
// writes what mdadm itself would accept.
#include "io/stack/md_reader.h"

#include <gtest/gtest.h>

#include <regex>

#include "io/device/target.h"
#include "support/md_superblock_writer.h"
#include "support/run_command.h"
#include "support/stack_tools.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::MdMemberSpec;

// "Data Offset : 2048 sectors" -> 2048; `absent` when mdadm does not print the field (it
// leaves out a data offset of 0, as 1.0 members have).
uint64_t ExamineNumber(const std::string& text, const std::string& field,
                       uint64_t absent = ~uint64_t{0}) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(field + R"( : (\d+))"))) return absent;
  return std::stoull(m[1]);
}

class MdReaderTest : public testing::TestWithParam<MdMemberSpec> {};

}  // namespace
}  // namespace partalign

namespace partalign::test {
// gtest prints the member by its shape instead of its bytes.
void PrintTo(const MdMemberSpec& s, std::ostream* os) {
  *os << "raid" << s.level << " " << s.version << " role " << s.role;
}
}  // namespace partalign::test

namespace partalign {
namespace {

TEST_P(MdReaderTest, ReadsWhatMdadmExamines) {
  const MdMemberSpec& spec = GetParam();
  test::TempDir dir;
  const std::string image = dir.File("member.img");
  test::CreateSparseFile(image, spec.member_size_bytes);
  test::WriteBytesAt(image, test::MdSuperblockPosition(spec), test::MakeMdSuperblock(spec));

  test::CommandResult examine = test::RunCommand({test::MdadmPath(), "--examine", image});
  ASSERT_EQ(examine.exit_code, 0) << examine.out << examine.err;
  EXPECT_NE(examine.out.find("Checksum : "), std::string::npos);
  EXPECT_NE(examine.out.find(" - correct"), std::string::npos) << examine.out;
  EXPECT_NE(examine.out.find("Version : " + spec.version), std::string::npos) << examine.out;

  Result<Target> t = OpenTarget(image);
  ASSERT_TRUE(t);
  Result<MdSuperblock> sb = ReadMdSuperblock(t->fd.get(), image, 0, t->size_bytes);
  ASSERT_TRUE(sb) << sb.error().message;
  EXPECT_EQ(ToString(sb->version), spec.version);
  EXPECT_EQ(sb->data_offset_bytes / 512, ExamineNumber(examine.out, "Data Offset", 0));
  EXPECT_EQ(sb->raid_disks, ExamineNumber(examine.out, "Raid Devices"));
  if (sb->striped()) {
    // "Chunk Size : 64K"
    EXPECT_NE(examine.out.find("Chunk Size : " + std::to_string(sb->chunk_bytes / 1024) + "K"),
              std::string::npos)
        << examine.out;
  }
  EXPECT_NE(examine.out.find("Raid Level : " + sb->level_name()), std::string::npos) << examine.out;
  EXPECT_EQ(sb->role, spec.role);
  EXPECT_NE(examine.out.find("Device Role : Active device " + std::to_string(spec.role)),
            std::string::npos)
      << examine.out;
}

MdMemberSpec Spec(std::string version, int32_t level, uint32_t chunk, uint32_t disks,
                  uint64_t data_offset, uint32_t role) {
  MdMemberSpec s;
  s.version = std::move(version);
  s.level = level;
  s.layout = level == 5 ? 2 : level == 10 ? 0x102 : 0;
  s.chunk_bytes = chunk;
  s.raid_disks = disks;
  s.data_offset_bytes = data_offset;
  s.role = role;
  return s;
}

INSTANTIATE_TEST_SUITE_P(Members, MdReaderTest,
                         testing::Values(Spec("1.2", 5, 65536, 3, 1 << 20, 1),
                                         Spec("1.2", 0, 524288, 2, 2 << 20, 0),
                                         Spec("1.1", 10, 65536, 4, 1 << 20, 3),
                                         Spec("1.0", 1, 0, 2, 0, 0),
                                         Spec("1.2", 6, 131072, 5, 264 * 512, 4)));

TEST(MdReaderTest2, SaysWhenThereIsNone) {
  test::TempDir dir;
  const std::string image = dir.File("empty.img");
  test::CreateSparseFile(image, 16 << 20);
  Result<Target> t = OpenTarget(image);
  ASSERT_TRUE(t);
  Result<MdSuperblock> sb = ReadMdSuperblock(t->fd.get(), image, 0, t->size_bytes);
  ASSERT_FALSE(sb);
  EXPECT_NE(sb.error().message.find("no MD version-1 superblock"), std::string::npos);
}

}  // namespace
}  // namespace partalign
