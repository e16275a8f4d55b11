// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/at_boot/next_boot_stage.h"

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

namespace partalign {
namespace {

NextBootStage Example() {
  NextBootStage stage;
  stage.disk_path = "/dev/sda";
  stage.table_fingerprint = "xxh64:0123456789abcdef";
  stage.journal = {2, "0a1b2c3d-4e5f-6789-abcd-ef0123456789", "ext4"};
  stage.consent.discard = {3, 5};
  stage.consent.make_room = true;
  stage.consent.copy_all = false;
  stage.consent.allow_reinstall_bootloader = true;
  stage.consent.assume = "ssd";
  stage.consent.sector_size = "";
  stage.staged_at = "2026-12-03T02:40:00Z";
  return stage;
}

TEST(NextBootStageTest, RoundTripsExactly) {
  const NextBootStage stage = Example();
  Result<NextBootStage> back = NextBootStageFromJson(NextBootStageToJson(stage));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, stage);
}

// stage.json is read at boot from a filesystem anyone with root (or a live USB) may have
// edited: every key is checked, and the error names it.
TEST(NextBootStageTest, RejectsBrokenRecordsNamingTheKey) {
  const std::string good = NextBootStageToJson(Example());
  struct Case {
    std::function<void(nlohmann::json&)> change;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {[](nlohmann::json& j) { j["format"] = "partalign-plan"; }, "format"},
      {[](nlohmann::json& j) { j["format_version"] = 2; }, "format_version"},
      {[](nlohmann::json& j) { j.erase("disk_path"); }, "disk_path"},
      {[](nlohmann::json& j) { j["disk_path"] = "sda"; }, "disk_path: 'sda' is not an absolute"},
      {[](nlohmann::json& j) { j["table_fingerprint"] = ""; }, "table_fingerprint: empty"},
      {[](nlohmann::json& j) { j["journal_partition"]["number"] = 0; }, "number: is 0"},
      {[](nlohmann::json& j) { j["journal_partition"]["number"] = 1ull << 33; },
       "number: too large"},
      {[](nlohmann::json& j) { j["journal_partition"]["fs_uuid"] = "x; rm -rf /"; },
       "fs_uuid: 'x; rm -rf /' is not a filesystem UUID"},
      {[](nlohmann::json& j) { j["journal_partition"]["fs_type"] = "xfs"; },
       "fs_type: 'xfs' is not one the initramfs mounts"},
      {[](nlohmann::json& j) { j["consent"]["discard"] = {0}; }, "consent.discard[0]"},
      {[](nlohmann::json& j) { j["consent"].erase("make_room"); }, "consent.make_room"},
  };
  for (const Case& c : cases) {
    nlohmann::json j = nlohmann::json::parse(good);
    c.change(j);
    Result<NextBootStage> r = NextBootStageFromJson(j.dump());
    ASSERT_FALSE(r) << c.expected;
    EXPECT_NE(r.error().message.find(c.expected), std::string::npos) << r.error().message;
  }
  EXPECT_FALSE(NextBootStageFromJson("{"));
  EXPECT_FALSE(NextBootStageFromJson(""));
}

// next-boot.conf is sourced by a shell in the initramfs: plain words only.
TEST(NextBootStageTest, TheConfNamesTheJournalFilesystemAndNothingElse) {
  Result<std::string> conf = NextBootConf({2, "1234-ABCD", "vfat"});
  ASSERT_TRUE(conf) << conf.error().message;
  std::vector<std::string> settings;
  size_t from = 0;
  for (size_t nl; (nl = conf->find('\n', from)) != std::string::npos; from = nl + 1) {
    const std::string line = conf->substr(from, nl - from);
    if (!line.empty() && line[0] != '#') settings.push_back(line);
  }
  EXPECT_EQ(from, conf->size()) << "the last line ends with a newline";
  EXPECT_EQ(settings, (std::vector<std::string>{"PARTALIGN_JOURNAL_UUID=1234-ABCD",
                                                "PARTALIGN_JOURNAL_FSTYPE=vfat"}));
  EXPECT_FALSE(NextBootConf({2, "1234-ABCD$(reboot)", "vfat"}));
  EXPECT_FALSE(NextBootConf({2, "", "ext4"}));
  EXPECT_FALSE(NextBootConf({2, "1234-ABCD", "ext4\nPATH=/tmp"}));
  EXPECT_FALSE(NextBootConf({2, "1234-ABCD", "btrfs"}));
}

TEST(NextBootStageTest, OnlyFilesystemsTheInitramfsMountsHoldTheJournal) {
  for (const char* fs : {"ext4", "ext3", "ext2", "vfat"}) EXPECT_TRUE(IsJournalFilesystem(fs));
  for (const char* fs : {"", "xfs", "btrfs", "ntfs", "swap", "EXT4"}) {
    EXPECT_FALSE(IsJournalFilesystem(fs)) << fs;
  }
}

}  // namespace
}  // namespace partalign
