// SPDX-License-Identifier: GPL-3.0-or-later
// Reading user-named files: a FIFO, a device, a directory or an oversized file is refused at
// once with one line naming the file; regular files are read whole.
#include "io/util/text_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::TempDir;

TEST(TextFileTest, ReadsARegularFile) {
  TempDir dir;
  test::WriteFile(dir.File("plan.json"), "{\"a\": 1}\n");
  Result<std::string> text = ReadWholeFile(dir.File("plan.json"), "plan");
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(*text, "{\"a\": 1}\n");
}

TEST(TextFileTest, ReadsAnEmptyFile) {
  TempDir dir;
  test::WriteFile(dir.File("empty"), "");
  Result<std::string> text = ReadWholeFile(dir.File("empty"), "plan");
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(*text, "");
}

TEST(TextFileTest, ReadsAFileOfExactlyTheLimit) {
  TempDir dir;
  test::WriteFile(dir.File("f"), std::string(4096, 'x'));
  Result<std::string> text = ReadWholeFile(dir.File("f"), "plan", 4096);
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(text->size(), 4096u);
}

TEST(TextFileTest, MissingFileNamesTheFileAndTheReason) {
  TempDir dir;
  Result<std::string> text = ReadWholeFile(dir.File("nope"), "backup");
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().message,
            "cannot open backup '" + dir.File("nope") + "': No such file or directory");
}

TEST(TextFileTest, FifoIsRefusedAtOnceWithoutWaitingForAWriter) {
  TempDir dir;
  const std::string fifo = dir.File("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  Result<std::string> text = ReadWholeFile(fifo, "plan");
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().message, "plan '" + fifo + "' is a FIFO, not a regular file");
  // Not a timing target: a blocking open would never return at all.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(TextFileTest, CharacterDeviceIsRefusedBeforeReading) {
  Result<std::string> text = ReadWholeFile("/dev/zero", "backup");
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().message, "backup '/dev/zero' is a character device, not a regular file");
}

TEST(TextFileTest, DirectoryIsRefused) {
  TempDir dir;
  Result<std::string> text = ReadWholeFile(dir.path(), "plan");
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().message, "plan '" + dir.path() + "' is a directory, not a regular file");
}

TEST(TextFileTest, OversizedFileIsRefusedWithoutReadingIt) {
  TempDir dir;
  // Sparse: 1 TiB costs nothing on disk, and reading it would take hours.
  test::CreateSparseFile(dir.File("huge"), 1ull << 40);
  Result<std::string> text = ReadWholeFile(dir.File("huge"), "plan");
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().message, "plan '" + dir.File("huge") +
                                      "' is 1099511627776 bytes; a plan file is at most 16 MiB");
}

TEST(TextFileTest, LimitIsTheCallersOne) {
  TempDir dir;
  test::WriteFile(dir.File("f"), std::string(4097, 'x'));
  Result<std::string> text = ReadWholeFile(dir.File("f"), "snapshot", 4096);
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message.find("a snapshot file is at most 4 KiB"), std::string::npos)
      << text.error().message;
}

TEST(TextFileTest, OpenRegularFileKeepsTheCallersFlagsAndClearsNonBlock) {
  TempDir dir;
  test::WriteFile(dir.File("journal"), "x");
  Result<UniqueFd> fd = OpenRegularFile(dir.File("journal"), "journal", O_RDWR);
  ASSERT_TRUE(fd) << fd.error().message;
  const int flags = ::fcntl(fd->get(), F_GETFL);
  EXPECT_EQ(flags & O_ACCMODE, O_RDWR);
  EXPECT_EQ(flags & O_NONBLOCK, 0);
  EXPECT_NE(::fcntl(fd->get(), F_GETFD) & FD_CLOEXEC, 0);
}

TEST(TextFileTest, OpenRegularFileRefusesAFifoOpenedForWriting) {
  TempDir dir;
  const std::string fifo = dir.File("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Result<UniqueFd> fd = OpenRegularFile(fifo, "journal", O_RDWR);
  ASSERT_FALSE(fd);
  EXPECT_EQ(fd.error().message, "journal '" + fifo + "' is a FIFO, not a regular file");
}

}  // namespace
}  // namespace partalign
