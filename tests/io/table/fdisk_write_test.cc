// SPDX-License-Identifier: GPL-3.0-or-later
// WriteSfdiskScript and DumpSfdiskScript against the real sfdisk on image files (no root).
#include "io/table/fdisk_write.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "io/table/fdisk_table.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::RunCommand;

constexpr unsigned long long kImageBytes = 128ull << 20;

TEST(FdiskWriteTest, ScriptIsAppliedAsSfdiskWouldApplyIt) {
  test::TempDir dir;
  const std::string ours = dir.File("ours.img");
  const std::string theirs = dir.File("theirs.img");
  test::CreateSparseFile(ours, kImageBytes);
  test::CreateSparseFile(theirs, kImageBytes);
  const std::string script =
      "label: gpt\n"
      "label-id: 3A0B3E5C-7F37-4B43-8C2E-1D7A0F5E9B11\n"
      "first-lba: 34\n"
      "start=63, size=20000, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, "
      "uuid=11111111-2222-3333-4444-555555555555, name=\"root\"\n"
      "start=65535, size=40960, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, "
      "uuid=66666666-7777-8888-9999-AAAAAAAAAAAA, name=\"esp\"\n";
  Result<std::vector<std::string>> written = WriteSfdiskScript(ours, script);
  ASSERT_TRUE(written) << written.error().message;
  CommandResult r =
      RunCommand({"sfdisk", "--quiet", "--no-reread", "--no-tell-kernel", theirs}, script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Same script, same disk: byte-identical tables (header CRCs, backup GPT included).
  EXPECT_EQ(test::ReadFile(ours), test::ReadFile(theirs));

  Result<std::string> dump = DumpSfdiskScript(ours);
  ASSERT_TRUE(dump) << dump.error().message;
  CommandResult d = RunCommand({"sfdisk", "--dump", ours});
  ASSERT_EQ(d.exit_code, 0);
  // sfdisk prints the device path it was given; ours names the same file.
  EXPECT_EQ(*dump, d.out);
}

TEST(FdiskWriteTest, DosWithLogicalPartitionsRoundTrips) {
  test::TempDir dir;
  const std::string image = dir.File("dos.img");
  test::CreateSparseFile(image, kImageBytes);
  Result<std::vector<std::string>> written = WriteSfdiskScript(
      image,
      "label: dos\nstart=2048, size=4096, type=83\nstart=8192, size=100000, type=5\n"
      "start=10240, size=4096, type=83\nstart=16384, size=4096, type=82\n");
  ASSERT_TRUE(written) << written.error().message;
  Result<TableRead> read = ReadPartitionTable(image);
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_EQ(read->table.partitions.size(), 4u);
  EXPECT_EQ(read->table.partitions[2].number, 5u);
  EXPECT_EQ(read->table.partitions[2].start_sector, 10240u);
  EXPECT_EQ(read->table.partitions[3].start_sector, 16384u);
}

TEST(FdiskWriteTest, FourKSectorsAreUsedWhenAsked) {
  test::TempDir dir;
  const std::string image = dir.File("4k.img");
  test::CreateSparseFile(image, kImageBytes);
  Result<std::vector<std::string>> written =
      WriteSfdiskScript(image, "label: gpt\nstart=256, size=2560\n", {.sector_size = 4096});
  ASSERT_TRUE(written) << written.error().message;
  CommandResult r = RunCommand({"parted", "-m", "-s", image, "unit", "s", "print"}, "",
                               {{"PARTED_SECTOR_SIZE", "4096"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\n1:256s:2815s:2560s:"), std::string::npos) << r.out;
}

// libfdisk 2.38 (and upstream since) writes an extended partition without logical partitions an
// empty EBR from a 512-byte buffer on its stack, but writes a whole sector: on a disk of
// 4096-byte sectors the sector's other 3584 bytes are whatever lay on the stack above it (found
// by ASan in the plan-mutation sweep). The sector reads as libfdisk means it: zeros and the
// boot signature.
TEST(FdiskWriteTest, AnEmptyExtendedPartitionsEbrHoldsNoStackBytesOnFourKSectors) {
  test::TempDir dir;
  const std::string image = dir.File("4k-dos.img");
  constexpr uint64_t kSector = 4096;
  constexpr uint64_t kExtendedStart = 2048;  // sectors
  // What was there before: non-zero bytes, which an empty EBR replaces.
  test::WriteFile(image, std::string(kImageBytes, '\xab'));
  Result<std::vector<std::string>> written = WriteSfdiskScript(
      image, "label: dos\nstart=256, size=1024, type=83\nstart=2048, size=8192, type=5\n",
      {.sector_size = kSector});
  ASSERT_TRUE(written) << written.error().message;
  const std::string ebr = test::ReadFile(image).substr(kExtendedStart * kSector, kSector);
  std::string expected(kSector, '\0');
  expected[510] = '\x55';
  expected[511] = '\xaa';
  for (size_t i = 0; i < kSector; ++i) {
    ASSERT_EQ(ebr[i], expected[i]) << "byte " << i << " of the empty EBR";
  }
  // And the readers agree: an extended partition with nothing in it.
  Result<TableRead> read = ReadPartitionTable(image, {.sector_size = kSector});
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_EQ(read->table.partitions.size(), 2u);
}

TEST(FdiskWriteTest, BadScriptsAreErrorsAndWriteNothing) {
  test::TempDir dir;
  const std::string image = dir.File("x.img");
  test::CreateSparseFile(image, kImageBytes);
  for (const char* script : {"label: gpt\nstart=2048, size=99999999999\n",
                             "label: nonsense\n,10M\n", "label: gpt\nstart=x\n"}) {
    Result<std::vector<std::string>> written = WriteSfdiskScript(image, script);
    EXPECT_FALSE(written) << script;
    EXPECT_EQ(test::ReadFile(image), std::string(kImageBytes, '\0')) << script;
  }
}

}  // namespace
}  // namespace partalign
