// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/table/table_backup.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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
  b.identity.tables = {{"saved", LabelType::kDos, "0x1234abcd", {}},
                       {"applied", LabelType::kDos, "0x1234abcd", {}}};
  b.identity.partitions = {
      {"saved", 5, 32000 * 512, 10000 * 512, "ext4", "0b3e", "root", 65536, "xxh64:8"},
      {"applied", 5, 32768 * 512, 10000 * 512, "", "", "", 65536, ""},
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
      {edit([](nlohmann::json& j) { j["format_version"] = 4; }),
       "format_version 4 is not supported (this partalign reads 3)"},
      {edit([](nlohmann::json& j) { j.erase("context"); }), "context: missing"},
      {edit([](nlohmann::json& j) { j.erase("identity"); }), "identity: missing"},
      {edit([](nlohmann::json& j) { j["identity"]["tables"][1]["table"] = "other"; }),
       "identity.tables[1].table: 'other' is not saved or applied"},
      {edit([](nlohmann::json& j) { j["identity"]["tables"][0]["label"] = "none"; }),
       "identity.tables[0].label: 'none' is not gpt or dos"},
      {edit([](nlohmann::json& j) { j["identity"]["tables"][0]["partition_guids"] = {7}; }),
       "identity.tables[0].partition_guids[0]: not a string"},
      {edit(
           [](nlohmann::json& j) { j["identity"]["partitions"][0]["length_bytes"] = 64ull << 20; }),
       "identity.partitions[0]: not a range inside the disk"},
      {edit([](nlohmann::json& j) { j["identity"]["partitions"][1]["head_bytes"] = 65537; }),
       "identity.partitions[1].head_bytes: 65537 is more than the partition's first 65536"},
      {edit([](nlohmann::json& j) { j["identity"]["partitions"][0].erase("number"); }),
       "identity.partitions[0].number: missing"},
      {edit([](nlohmann::json& j) { j["ranges"][1]["offset_bytes"] = 64ull << 20; }),
       "ranges[1]: 512 bytes at byte 67108864 are not whole sectors inside the disk"},
      {edit([](nlohmann::json& j) { j["ranges"][1]["offset_bytes"] = 100; }),
       "ranges[1]: 512 bytes at byte 100 are not whole sectors"},
      {edit([](nlohmann::json& j) {
         j["context"] = {
             {{"offset_bytes", 18446744073709551000ull}, {"length_bytes", 4096}, {"xxh64", "x"}}};
       }),
       "context[0]: not a range inside the disk"},
      {edit([](nlohmann::json& j) { j["device"].erase("size_bytes"); }),
       "device.size_bytes: missing"},
      {edit([](nlohmann::json& j) { j["label"] = "sun"; }), "label: 'sun' is not gpt, dos or none"},
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

TEST(TableBackupTest, VersionOneAndTwoFilesAreStillRead) {
  nlohmann::json j = BackupToJson(Example());
  EXPECT_EQ(j["format_version"], 3);
  j["format_version"] = 2;
  j.erase("identity");
  Result<TableBackup> b = BackupFromJson(j.dump());
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(b->format_version, 2);
  EXPECT_EQ(b->identity, BackupIdentity{});
  EXPECT_EQ(b->ranges, Example().ranges);
  j["format_version"] = 1;
  j.erase("context");
  b = BackupFromJson(j.dump());
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(b->format_version, 1);
  EXPECT_TRUE(b->context.empty());
  EXPECT_EQ(b->ranges, Example().ranges);
}

TEST(TableBackupTest, PartitionPlacesAreRecordedOnceInOffsetOrder) {
  PartitionTable saved;
  saved.label = LabelType::kDos;
  saved.sector_size = 512;
  auto partition = [](uint32_t n, PartitionKind kind, uint64_t start, uint64_t size) {
    Partition p;
    p.number = n;
    p.kind = kind;
    p.start_sector = start;
    p.size_sectors = size;
    return p;
  };
  saved.partitions = {partition(1, PartitionKind::kPrimary, 2048, 64),
                      partition(2, PartitionKind::kExtended, 4096, 10000),
                      partition(5, PartitionKind::kLogical, 4160, 100)};
  PartitionTable applied = saved;
  applied.partitions[0].start_sector = 63;  // moved down; 5 stays where it was
  std::vector<BackupPartition> p = BackupPartitionPlaces(&saved, &applied);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].table, "applied");
  EXPECT_EQ(p[0].offset_bytes, 63 * 512u);
  EXPECT_EQ(p[0].head_bytes, 64 * 512u);  // the whole partition: smaller than 64 KiB
  EXPECT_EQ(p[1].table, "saved");
  EXPECT_EQ(p[1].number, 1u);
  EXPECT_EQ(p[2].number, 5u);
  EXPECT_EQ(p[2].table, "saved");
  EXPECT_EQ(p[2].head_bytes, 100 * 512u);
  EXPECT_EQ(BackupPartitionPlaces(nullptr, &applied).size(), 2u);
}

TEST(TableBackupTest, ContentsProveTheDiskByASignatureOrTheFirstBytes) {
  const std::vector<BackupPartition> recorded = {
      {"saved", 1, 1 << 20, 8 << 20, "ext4", "u1", "", 65536, "xxh64:a"},
      {"saved", 2, 9 << 20, 8 << 20, "", "", "", 65536, "xxh64:b"},
      {"saved", 3, 17 << 20, 8 << 20, "", "", "", 65536, ""},
  };
  // Nothing recognisable at any place (zeros, or the middle of another disk's filesystem).
  ContentEvidence e = CompareContents(recorded, std::vector<PartitionSeen>(3));
  EXPECT_FALSE(e.proven());
  EXPECT_TRUE(e.other.empty());
  // The same ext4 (its superblock's counters changed since: the first bytes differ).
  e = CompareContents(recorded, {{"ext4", "u1", "", "xxh64:c"}, {}, {}});
  EXPECT_TRUE(e.proven());
  ASSERT_EQ(e.same.size(), 1u);
  EXPECT_EQ(e.same[0], "partition 1 (of the saved table) at byte 1048576: ext4 UUID u1");
  // The same raw bytes where no filesystem was.
  EXPECT_TRUE(CompareContents(recorded, {{}, {"", "", "", "xxh64:b"}, {}}).proven());
  // Another filesystem where the backup saw one, or one where it saw none: another disk,
  // whatever else matches.
  e = CompareContents(recorded, {{"ext4", "u2", "", "xxh64:a"}, {"", "", "", "xxh64:b"}, {}});
  EXPECT_FALSE(e.proven());
  ASSERT_EQ(e.other.size(), 1u);
  EXPECT_EQ(e.other[0],
            "partition 1 (of the saved table) at byte 1048576: the backup saw ext4 UUID u1 "
            "there, the disk holds ext4 UUID u2");
  e = CompareContents(recorded, {{"ext4", "u1", "", ""}, {}, {"vfat", "AB-CD", "", ""}});
  EXPECT_FALSE(e.proven());
  ASSERT_EQ(e.other.size(), 1u);
  EXPECT_NE(e.other[0].find("the backup saw no signature there, the disk holds vfat UUID AB-CD"),
            std::string::npos)
      << e.other[0];
}

TEST(TableBackupTest, ContextIsTheBytesAroundTheRangesOutsidePartitions) {
  // A GPT on 1000 sectors: PMBR 0, header 1, entries 2-33, partition 100-899, backup entries
  // 966-997, backup header 999 (998 free).
  auto range = [](uint64_t sector, uint64_t sectors) {
    BackupRange r;
    r.offset_bytes = sector * 512;
    r.length_bytes = sectors * 512;
    return r;
  };
  std::vector<BackupRange> ranges = {range(0, 1), range(1, 1), range(2, 32), range(966, 32),
                                     range(999, 1)};
  std::vector<BackupContext> c = ContextPlaces(ranges, 512, 1000 * 512, {{100 * 512, 800 * 512}});
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].offset_bytes, 34 * 512u);  // after the entries, up to the partition
  EXPECT_EQ(c[0].length_bytes, 66 * 512u);
  EXPECT_EQ(c[1].offset_bytes, 900 * 512u);  // after the partition, before the backup entries
  EXPECT_EQ(c[1].length_bytes, 66 * 512u);
  EXPECT_EQ(c[2].offset_bytes, 998 * 512u);  // between the backup entries and header
  EXPECT_EQ(c[2].length_bytes, 512u);
  // Far from anything: at most kContextWindowBytes on each side.
  std::vector<BackupContext> wide = ContextPlaces({range(100000, 1)}, 512, 1ull << 30, {});
  ASSERT_EQ(wide.size(), 2u);
  EXPECT_EQ(wide[0].length_bytes, kContextWindowBytes);
  EXPECT_EQ(wide[1].offset_bytes, 100001 * 512u);
}

TEST(TableBackupTest, RangesMustBeTheTablesAreasOrHoldWhatTheWriteLeft) {
  TableBackup b = Example();
  PartitionTable saved;
  saved.label = LabelType::kDos;
  saved.sector_size = 512;
  saved.areas = {{"MBR", 0, 512}, {"EBR", 30000 * 512, 512}, {"EBR", 44999 * 512, 512}};
  // Range 0 (43008, only the applied table's) holds what the apply wrote: fine.
  std::vector<std::string> now = {"xxh64:2", "other", "other", "other"};
  EXPECT_TRUE(BackupRangeProblems(b, saved, now).empty());
  now[0] = "xxh64:1";  // still the saved bytes: fine too
  EXPECT_TRUE(BackupRangeProblems(b, saved, now).empty());
  now[0] = "something else";  // data, not what either table put there
  std::vector<std::string> bad = BackupRangeProblems(b, saved, now);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].rfind("ranges[0] (512 bytes at byte 22020096) is not part of the table", 0), 0u)
      << bad[0];
}

TEST(TableBackupTest, TranslateRangesMustStayClearOfThePartitions) {
  // translate's ranges are the table at two sector sizes, cut where the old and the new areas
  // begin and end: they match no single area, and a write killed inside one leaves neither its
  // saved nor its applied bytes. Such a range goes back as long as no partition of the saved
  // table has data there.
  TableBackup b = Example();
  b.table_sector_size = 4096;  // the saved table: written for 4096-byte sectors
  PartitionTable saved;
  saved.label = LabelType::kGpt;
  saved.sector_size = 4096;
  Partition p;
  p.number = 1;
  p.start_sector = 5376;  // bytes 22020096-22024191: ranges[0] of Example() lies inside
  p.size_sectors = 1;
  saved.partitions = {p};
  const std::vector<std::string> torn(b.ranges.size(), "torn");
  std::vector<std::string> bad = BackupRangeProblems(b, saved, torn);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].rfind("ranges[0] (512 bytes at byte 22020096) is not part of the table", 0), 0u)
      << bad[0];
  saved.partitions[0].start_sector = 6000;  // the partition elsewhere: every range may go back
  EXPECT_TRUE(BackupRangeProblems(b, saved, torn).empty());
}

TEST(TableBackupTest, TableIdentityNamesWhatDiffers) {
  PartitionTable saved;
  saved.label = LabelType::kGpt;
  saved.disk_id = "AAAAAAAA-0000-4000-8000-000000000001";
  Partition p;
  p.number = 1;
  p.uuid = "BBBBBBBB-0000-4000-8000-000000000001";
  saved.partitions = {p};
  TableScan now;
  EXPECT_TRUE(TableIdentityMismatches(saved, now).empty());  // no identity: contents decide
  now.label = LabelType::kGpt;
  now.disk_id = "aaaaaaaa-0000-4000-8000-000000000001";
  now.partitions = {
      {1, PartitionKind::kPrimary, 2048, 100, "", "bbbbbbbb-0000-4000-8000-000000000001"}};
  EXPECT_TRUE(TableIdentityMismatches(saved, now).empty());
  now.partitions[0].uuid = "CCCCCCCC-0000-4000-8000-000000000001";
  now.disk_id = "DDDDDDDD-0000-4000-8000-000000000001";
  std::vector<std::string> m = TableIdentityMismatches(saved, now);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0],
            "disk GUID: backup AAAAAAAA-0000-4000-8000-000000000001, disk "
            "DDDDDDDD-0000-4000-8000-000000000001");
  EXPECT_EQ(m[1],
            "partition 1 GUID CCCCCCCC-0000-4000-8000-000000000001: not in the backup's "
            "table");
  now.label = LabelType::kDos;
  now.disk_id = "0x12345678";
  EXPECT_EQ(TableIdentityMismatches(saved, now).front(),
            "the disk holds a dos table, the backup a gpt table");
}

TEST(TableBackupTest, FileNameIsSafe) {
  EXPECT_EQ(BackupFileName("loop3", "20261121T101500Z", "xxh64:0123456789abcdef"),
            "loop3-20261121T101500Z-xxh64-0123456789abcdef.partalign-backup");
  EXPECT_EQ(BackupFileName("a/b", "T", "x"), "a_b-T-x.partalign-backup");
}

// A range of a backup as apply saves it: `before` (its bytes then, hashed as `old_hash`) and
// the hash of what the write put there.
BackupRange Saved(uint64_t sector, std::optional<uint32_t> old_index,
                  std::optional<uint32_t> new_index, uint8_t before, std::string old_hash,
                  std::string applied_hash) {
  BackupRange r;
  r.role = TableAreaRole::kEbr;
  r.offset_bytes = sector * 512;
  r.length_bytes = 512;
  r.old_index = old_index;
  r.new_index = new_index;
  r.bytes.assign(512, before);
  r.xxh64 = std::move(old_hash);
  r.applied_xxh64 = std::move(applied_hash);
  return r;
}

TEST(TableBackupTest, AnEbrAnApplyParkedInAGapGivesBackTheGapsBytes) {
  // Seed 43 cases 200, 361 and 504 of the sweep: step 1 of an apply parks an EBR in the gap
  // sector 29999 (it held bytes 0x5a, "gap"), step 2 rewrites it (another link: "ebr1" ->
  // "ebr2"), and the apply stops there (killed; resumed or rolled back). A later apply that
  // abandons the sector finds the gap's bytes through both backups, whichever EBR it holds.
  std::vector<TableBackup> backups(3);
  backups[0].ranges = {Saved(29999, std::nullopt, 1, 0x5a, "gap", "ebr1")};
  backups[1].ranges = {Saved(29999, 1, 1, 0x01, "ebr1", "ebr2")};
  // Another sector, and another disk's history of the same sector, change nothing.
  backups[2].ranges = {Saved(30000, std::nullopt, 1, 0x33, "gap", "ebr1"),
                       Saved(29999, std::nullopt, std::nullopt, 0x44, "other", "other2")};
  for (const char* now : {"ebr1", "ebr2"}) {
    std::optional<std::vector<uint8_t>> got = BytesBeforeOwnTables(backups, 29999 * 512, 512, now);
    ASSERT_TRUE(got) << now;
    EXPECT_EQ(*got, std::vector<uint8_t>(512, 0x5a)) << now;
  }
  // Bytes no backup wrote there (an EBR another tool wrote), or the gap's bytes already: none.
  EXPECT_FALSE(BytesBeforeOwnTables(backups, 29999 * 512, 512, "xp-ebr"));
  EXPECT_FALSE(BytesBeforeOwnTables(backups, 29999 * 512, 512, "gap"));
  // A range of another length is another range.
  EXPECT_FALSE(BytesBeforeOwnTables(backups, 29999 * 512, 4096, "ebr1"));
  // A history that loops (a sector written back and forth) ends without an answer.
  std::vector<TableBackup> loop(2);
  loop[0].ranges = {Saved(29999, 1, 1, 0x01, "a", "b")};
  loop[1].ranges = {Saved(29999, 1, 1, 0x02, "b", "a")};
  EXPECT_FALSE(BytesBeforeOwnTables(loop, 29999 * 512, 512, "a"));
}

}  // namespace
}  // namespace partalign
