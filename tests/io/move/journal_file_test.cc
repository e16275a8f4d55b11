// SPDX-License-Identifier: GPL-3.0-or-later
// The journal's lock waits for a holder that is going away (RetryWhileBusy): a partalign killed
// with I/O in flight keeps its files and locks for milliseconds after it is reaped. A lock
// taken through another open file description stands for that holder. No root needed.
#include "io/move/journal_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "io/device/in_use.h"
#include "io/util/unique_fd.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

TEST(LockJournalTest, ALockLetGoSoonIsWaitedForAndOneThatStaysIsReported) {
  test::TempDir dir;
  const std::string path = dir.File("move.journal");
  UniqueFd holder(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  ASSERT_TRUE(holder.valid());
  UniqueFd mine(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  ASSERT_TRUE(mine.valid());

  ASSERT_EQ(::flock(holder.get(), LOCK_EX | LOCK_NB), 0);
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::flock(holder.get(), LOCK_UN);
  });
  Status waited = LockJournal(mine.get(), path);
  release.join();
  ASSERT_TRUE(waited) << waited.error().message;
  ::flock(mine.get(), LOCK_UN);

  ASSERT_EQ(::flock(holder.get(), LOCK_EX | LOCK_NB), 0);
  const auto start = std::chrono::steady_clock::now();
  Status held = LockJournal(mine.get(), path);
  const auto waited_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  ASSERT_FALSE(held);
  EXPECT_EQ(held.error().errno_value, EWOULDBLOCK);
  EXPECT_NE(held.error().message.find("in use by another partalign process"), std::string::npos)
      << held.error().message;
  EXPECT_GE(waited_ms, kBusyWaitMilliseconds);
}

}  // namespace
}  // namespace partalign
