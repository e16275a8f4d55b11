// SPDX-License-Identifier: GPL-3.0-or-later
// The registry of journals in PARTALIGN_STATE_DIR: what a killed registration leaves behind.
#include "io/move/journal_registry.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "support/temp_dir.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;

class JournalRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override { ::setenv("PARTALIGN_STATE_DIR", state_.path().c_str(), 1); }
  void TearDown() override { ::unsetenv("PARTALIGN_STATE_DIR"); }

  static RegistryEntry Entry(uint8_t id) {
    RegistryEntry entry;
    entry.journal_path = "/var/tmp/disk.partalign-journal";
    entry.uuid.fill(id);
    entry.device.path = "/dev/loop7";
    entry.starting = true;
    return entry;
  }

  static std::vector<std::string> Files() {
    std::vector<std::string> names;
    for (const fs::directory_entry& f : fs::directory_iterator(JournalRegistryDir())) {
      names.push_back(f.path().filename().string());
    }
    return names;
  }

  test::TempDir state_;
};

// bench-apply-move-kill, seed 11 run 11: apply killed while it rewrote its "starting"
// registration (after the temporary file's write, before its rename). resume finished the move
// and unregistered the journal, and "<uuid>.journal.json.tmp" stayed in the registry for good.
TEST_F(JournalRegistryTest, UnregisteringRemovesTheTemporaryFileOfAKilledRegistration) {
  const RegistryEntry entry = Entry(0x5a);
  ASSERT_TRUE(RegisterJournal(entry));
  ASSERT_EQ(Files().size(), 1u);
  const std::string registered = JournalRegistryDir() + "/" + Files()[0];
  // The rewrite killed before its rename: the temporary file holds the new text.
  std::ofstream(registered + ".tmp") << "{\"half\": ";
  Result<std::vector<RegisteredJournal>> listed = ListRegisteredJournals();
  ASSERT_TRUE(listed) << listed.error().message;
  ASSERT_EQ(listed->size(), 1u);  // the temporary file is never read as an entry
  EXPECT_EQ(listed->front().entry, entry);
  ASSERT_TRUE(UnregisterJournal(entry.uuid));
  EXPECT_TRUE(Files().empty()) << Files().front();
  // Another journal's files stay.
  const RegistryEntry other = Entry(0x11);
  ASSERT_TRUE(RegisterJournal(other));
  ASSERT_TRUE(RegisterJournal(entry));
  ASSERT_TRUE(UnregisterJournal(entry.uuid));
  ASSERT_EQ(Files().size(), 1u);
  ASSERT_TRUE(ListRegisteredJournals());
  EXPECT_EQ(ListRegisteredJournals()->front().entry, other);
  // Nothing registered: no error.
  EXPECT_TRUE(UnregisterJournal(entry.uuid));
}

}  // namespace
}  // namespace partalign
