#include "partalign/table/table_backup.h"

#include <gtest/gtest.h>

#include <functional>

namespace partalign {
namespace {

TableBackup Example() {
  TableBackup b;
  b.partalign_version = "0.1.0";
  b.created = "2026-11-21T10:15:00Z";
  b.command = "apply";
  b.device.disk = {"/dev/loop3", 64ull << 20, 512, "", ""};
  b.device.is_block_device = true;
  b.device.major = 7;
  b.device.minor = 3;
  b.device.kernel_name = "loop3";
  b.device.backing_file = "/tmp/disk.img";
  b.label = LabelType::kDos;
  b.sector_size = 512;
  b.table_fingerprint = "xxh64:00000000000000aa";
  b.applied_table_fingerprint = "xxh64:00000000000000bb";
  b.sfdisk_dump = "label: dos\n";
  b.ranges = {
      {TableAreaRole::kEbr, 43008 * 512, 512, std::nullopt, 1, std::vector<uint8_t>(512, 0),
       "xxh64:1", "xxh64:2"},
      {TableAreaRole::kEbr, 30000 * 512, 512, 0, 0, std::vector<uint8_t>(512, 7), "xxh64:3",
       "xxh64:4"},
      {TableAreaRole::kMbr, 0, 512, 0, 0, std::vector<uint8_t>(512, 9), "xxh64:5", "xxh64:6"},
      {TableAreaRole::kEbr, 44999 * 512, 512, 1, std::nullopt, std::vector<uint8_t>(512, 5),
       "xxh64:7", "xxh64:7"},
  };
  return b;
}

TEST(TableBackupTest, JsonRoundTripsExactly) {
  TableBackup b = Example();
  nlohmann::json j = BackupToJson(b);
  EXPECT_EQ(j["format"], "partalign-table-backup");
  EXPECT_EQ(j["ranges"][0]["area"], "EBR of partition 6 (new place)");
  EXPECT_TRUE(j["ranges"][0]["old_index"].is_null());
  EXPECT_TRUE(j["device"]["serial"].is_null());
  Result<TableBackup> back = BackupFromJson(j.dump());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, b);
}

TEST(TableBackupTest, RejectsBrokenFilesNamingTheKey) {
  const std::string good = BackupToJson(Example()).dump();
  auto edit = [&](std::function<void(nlohmann::json&)> change) {
    nlohmann::json j = nlohmann::json::parse(good);
    change(j);
    return j.dump();
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {good.substr(0, good.size() / 3), "not valid JSON (truncated or corrupt?)"},
      {edit([](nlohmann::json& j) { j["format"] = "partalign-plan"; }),
       "format is 'partalign-plan'"},
      {edit([](nlohmann::json& j) { j["format_version"] = 2; }), "format_version 2"},
      {edit([](nlohmann::json& j) { j["device"].erase("size_bytes"); }),
       "device.size_bytes: missing"},
      {edit([](nlohmann::json& j) { j["label"] = "sun"; }), "label: 'sun' is not gpt or dos"},
      {edit([](nlohmann::json& j) { j["sector_size"] = 4096; }),
       "sector_size and device.logical_sector_size differ"},
      {edit([](nlohmann::json& j) { j["ranges"] = nlohmann::json::array(); }), "ranges: empty"},
      {edit([](nlohmann::json& j) { j["ranges"][2]["role"] = "vtoc"; }),
       "ranges[2].role: unknown value 'vtoc'"},
      {edit([](nlohmann::json& j) { j["ranges"][1]["data_base64"] = "AAA"; }),
       "ranges[1].data_base64: not valid base64"},
      {edit([](nlohmann::json& j) { j["ranges"][1]["length_bytes"] = 4096; }),
       "ranges[1].data_base64: 512 bytes, length_bytes says 4096"},
      {edit([](nlohmann::json& j) { j["ranges"][3].erase("xxh64"); }), "ranges[3].xxh64: missing"},
  };
  for (const auto& [text, message] : cases) {
    Result<TableBackup> b = BackupFromJson(text);
    ASSERT_FALSE(b) << message;
    EXPECT_NE(b.error().message.find(message), std::string::npos)
        << message << " / " << b.error().message;
  }
}

TEST(TableBackupTest, AnotherDiskIsNamed) {
  BackupDevice saved = Example().device;
  BackupDevice now = saved;
  now.major = 8;  // device numbers change across boots: not identity
  now.disk.path = "/dev/loop9";
  EXPECT_TRUE(BackupDeviceMismatches(saved, now).empty());
  now.backing_file = "/tmp/other.img";
  now.disk.size_bytes = 128ull << 20;
  std::vector<std::string> m = BackupDeviceMismatches(saved, now);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0], "size: backup 67108864 bytes, disk 134217728 bytes");
  EXPECT_EQ(m[1], "loop backing file: backup '/tmp/disk.img', disk '/tmp/other.img'");
}

TEST(TableBackupTest, RestoreTransitionGoesBackwards) {
  TableBackup b = Example();
  std::vector<std::vector<uint8_t>> current;
  for (const BackupRange& r : b.ranges) current.push_back(std::vector<uint8_t>(r.length_bytes, 1));
  Result<TableTransition> t = RestoreTransition(b, current);
  ASSERT_TRUE(t) << t.error().message;
  // Backwards: 44999 (only the saved table used it) first, 43008 (only the applied) last.
  std::vector<uint64_t> order;
  for (const TableRange& r : t->ranges) order.push_back(r.offset_bytes / 512);
  EXPECT_EQ(order, (std::vector<uint64_t>{44999, 30000, 0, 43008}));
  EXPECT_EQ(t->ranges[0].new_bytes, std::vector<uint8_t>(512, 5));
  EXPECT_EQ(t->ranges[0].old_bytes, std::vector<uint8_t>(512, 1));
  current.pop_back();
  EXPECT_FALSE(RestoreTransition(b, current));
}

TEST(TableBackupTest, FileNameIsSafe) {
  EXPECT_EQ(BackupFileName("loop3", "20261121T101500Z", "xxh64:0123456789abcdef"),
            "loop3-20261121T101500Z-xxh64-0123456789abcdef.partalign-backup");
  EXPECT_EQ(BackupFileName("a/b", "T", "x"), "a_b-T-x.partalign-backup");
}

}  // namespace
}  // namespace partalign
