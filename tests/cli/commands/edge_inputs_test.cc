// SPDX-License-Identifier: GPL-3.0-or-later
// Issue #11, the inputs that are not partition tables, through the real binary: every file a
// command reads (plan, backup, journal, benchmark results) is refused at once when it is a
// FIFO, a device or a directory, and when it is too large; impossible --assume topologies and
// wrapping sizes are refused with the reason; an image too small for a table says so. Each
// refusal is one line on stderr and exit 1, and a command never hangs (each runs under
// timeout(1): a hang shows as exit 124, not as a stuck test).
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::RunCommand;
using test::TempDir;

// Generous: each command answers in milliseconds; the limit only turns a hang into a failure.
constexpr const char* kTimeoutSeconds = "30";

CommandResult RunPartalign(const std::vector<std::string>& args, const std::string& state_dir) {
  std::vector<std::string> argv{"timeout", "-k", "5", kTimeoutSeconds, PARTALIGN_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  // The journal registry of this test only (resume and move read it).
  return RunCommand(argv, "", {{"PARTALIGN_STATE_DIR", state_dir}});
}

class EdgeInputsTest : public testing::Test {
 protected:
  // One line on stderr that contains `words`, nothing on stdout, exit 1.
  void ExpectOneLineRefusal(const std::vector<std::string>& args, const std::string& words) {
    CommandResult r = RunPartalign(args, state_.path());
    const std::string what = test::Describe(args, r);
    EXPECT_EQ(r.exit_code, 1) << what;
    EXPECT_TRUE(r.out.empty()) << what;
    ASSERT_FALSE(r.err.empty()) << what;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "more than one line: " << what;
    EXPECT_NE(r.err.find(words), std::string::npos) << what;
  }

  void SetUp() override {
    fifo_ = dir_.File("fifo");
    ASSERT_EQ(::mkfifo(fifo_.c_str(), 0600), 0);
    huge_ = dir_.File("huge.json");
    test::CreateSparseFile(huge_, 1ull << 40);
    image_ = dir_.File("disk.img");
    test::CreateSparseFile(image_, 64ull << 20);
  }

  TempDir dir_;
  TempDir state_;
  TempDir journals_;  // not next to the images: the journal placement rule
  std::string fifo_;
  std::string huge_;
  std::string image_;
};

// Issue #11 item 6: a FIFO as PLAN, BACKUP or JOURNAL blocked forever; /dev/zero as PLAN or
// BACKUP was read until memory ran out.
TEST_F(EdgeInputsTest, PlanThatIsNotARegularFileIsRefusedAtOnce) {
  ExpectOneLineRefusal({"apply", "--yes", fifo_}, "plan '" + fifo_ + "' is a FIFO");
  ExpectOneLineRefusal({"apply", "--dry-run", "/dev/zero"},
                       "plan '/dev/zero' is a character device");
  ExpectOneLineRefusal({"apply", "--dry-run", dir_.path()}, "is a directory");
  ExpectOneLineRefusal({"apply", "--dry-run", huge_}, "a plan file is at most 16 MiB");
}

TEST_F(EdgeInputsTest, BackupThatIsNotARegularFileIsRefusedAtOnce) {
  ExpectOneLineRefusal({"restore", "--check", fifo_}, "backup '" + fifo_ + "' is a FIFO");
  ExpectOneLineRefusal({"restore", "--yes", "--target", image_, "/dev/zero"},
                       "backup '/dev/zero' is a character device");
  ExpectOneLineRefusal({"restore", "--check", huge_}, "a backup file is at most 16 MiB");
}

TEST_F(EdgeInputsTest, JournalThatIsNotARegularFileIsRefusedAtOnce) {
  ExpectOneLineRefusal({"resume", "--yes", fifo_}, "journal '" + fifo_ + "' is a FIFO");
  ExpectOneLineRefusal({"resume", "--yes", "/dev/zero"},
                       "journal '/dev/zero' is a character device");
  ExpectOneLineRefusal({"resume", "--rollback", "--yes", fifo_}, "is a FIFO");
}

TEST_F(EdgeInputsTest, BenchmarkResultsThatAreNotRegularFilesAreRefused) {
  ExpectOneLineRefusal({"bench", "--compare", fifo_, "/dev/zero"}, "is a FIFO");
}

// Issue #11 items 7 and 9 on the command line.
TEST_F(EdgeInputsTest, ImpossibleAssumedTopologiesAreRefusedWithTheReason) {
  struct Case {
    const char* spec;
    const char* words;
  };
  for (const Case& c : {
           Case{"min-io=18446744073709551615", "minimum I/O size 18446744073709551615 is larger"},
           Case{"size=0", "size=0"},
           Case{"phys=256", "physical sector size 256 is smaller than the logical sector size"},
           Case{"phys=1000", "physical sector size 1000 is not a power of two"},
           Case{"min-io=100", "minimum I/O size 100 is not a multiple of the logical sector"},
           Case{"min-io=0", "min-io=0"},
       }) {
    for (const char* command : {"probe", "audit", "plan", "explain"}) {
      ExpectOneLineRefusal({command, "--assume", c.spec, image_}, c.words);
    }
  }
}

TEST_F(EdgeInputsTest, LayoutSizeThatWrapsIsRefused) {
  // A bare number counts sectors, as in sfdisk; with "B", bytes.
  ExpectOneLineRefusal({"plan", "--layout", "size=18446744073709551615", image_},
                       "18446744073709551615 sectors is too large for any disk");
  ExpectOneLineRefusal({"plan", "--layout", "size=18446744073709551615B", image_},
                       "more than the whole disk");
  ExpectOneLineRefusal({"plan", "--layout", "size=1M;size=18446744073709551104B", image_},
                       "partition 2 is 18446744073709551104 bytes, more than the whole disk");
  // The largest count accepted (UINT64_MAX >> 16: times 64 KiB sectors it stays in 64 bits)
  // reaches the disk check without wrapping.
  ExpectOneLineRefusal({"plan", "--layout", "size=1M;size=281474976710655", image_},
                       "partition 2 is 281474976710655 sectors of 512 bytes, more than the "
                       "whole disk");
  ExpectOneLineRefusal({"plan", "--layout", "size=1M;size=281474976710656", image_},
                       "281474976710656 sectors is too large for any disk");
}

TEST_F(EdgeInputsTest, ExplainSizeThatIsNotAWholeNumberOfSectorsIsRefused) {
  ExpectOneLineRefusal({"explain", "--size", "18446744073709551615"},
                       "is not a multiple of the logical sector size");
}

// Issue #11 item 8: a 511-byte image said "libfdisk cannot read ...: Invalid argument".
TEST_F(EdgeInputsTest, ImageSmallerThanASectorIsTooSmall) {
  const std::string tiny = dir_.File("tiny.img");
  test::CreateSparseFile(tiny, 511);
  for (const char* command : {"probe", "audit", "plan", "explain"}) {
    ExpectOneLineRefusal({command, tiny}, "'" + tiny +
                                              "' is too small for a partition table: "
                                              "511 bytes, less than one 512-byte sector");
  }
  // One sector of 512 is not one of 4096.
  const std::string one = dir_.File("one.img");
  test::CreateSparseFile(one, 4095);
  ExpectOneLineRefusal({"audit", "--sector-size", "4096", one}, "less than one 4096-byte sector");
}

TEST_F(EdgeInputsTest, MoveTableRangeIsCheckedBeforeItIsRead) {
  const std::string scratch = dir_.File("scratch.img");
  test::CreateSparseFile(scratch, 64ull << 20);
  const std::string journal = journals_.File("journal");
  // 1 PiB would have been allocated before the range was checked against the disk.
  ExpectOneLineRefusal({"move", "--yes", image_, "--from", "1M", "--to", "2M", "--length", "1M",
                        "--journal", journal, "--table-range", "0:1P", "--new-table", scratch},
                       "--table-range 0:1125899906842624 ends beyond the end of");
  ExpectOneLineRefusal(
      {"move", "--yes", image_, "--from", "1M", "--to", "2M", "--length", "1M", "--journal",
       journal, "--table-range", "18446744073709551104:1024", "--new-table", scratch},
      "ends beyond the end of");
}

}  // namespace
}  // namespace partalign
