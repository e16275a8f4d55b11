// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/migrate/snapshot.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace partalign {
namespace {

Snapshot Sample() {
  Snapshot s;
  s.partalign_version = "0.1.0";
  s.created = "2026-11-23T10:00:00Z";
  s.identity.path = "/dev/sdb";
  s.identity.kernel_name = "sdb";
  s.identity.is_block_device = true;
  s.identity.transport = Transport::kUsb;
  s.identity.model = "WD Elements 25A3";
  s.identity.serial = "WX12";
  s.identity.usb_bridge = UsbBridge{"1058", "25a3", "Western Digital", "Elements", "uas"};
  s.topology = {4096, 4096, 4096, 0, 0, 64ull << 20, TopologyOrigin::kKernel};
  s.table.label = LabelType::kGpt;
  s.table.sector_size = 4096;
  s.table.disk_size_sectors = 16384;
  s.table.first_usable_lba = 256;
  s.table.last_usable_lba = 16378;
  s.table.disk_id = "AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE";
  s.table.fingerprint = "xxh64:0123456789abcdef";
  Partition p;
  p.number = 1;
  p.start_sector = 256;
  p.size_sectors = 5120;
  p.type_code = "0FC63DAF-8483-4772-8E79-3D69D8477DE4";
  p.type_name = "Linux filesystem";
  p.name = "data \"quoted\"";
  p.uuid = "11111111-2222-3333-4444-555555555555";
  p.contents = {.fs_type = "ext4",
                .fs_label = "root",
                .fs_uuid = "u-1",
                .fs_block_size = 4096,
                .proof = ContentProof::kSignature};
  s.table.partitions.push_back(p);
  s.table_written_for = 4096;
  s.table_written_for_reason = "GPT header found at LBA 1 (byte 4096)";
  s.digests.push_back({256 * 4096, 65536, "xxh64:fedcba9876543210"});
  s.verdicts.push_back({1, true, {{"grain", true}, {"optimal_io", std::nullopt}}});
  s.predictions.push_back({"parted-optimal", "3.5", 256, 0, 256, 256, false, ""});
  return s;
}

TEST(SnapshotTest, JsonRoundTripKeepsEveryField) {
  const Snapshot s = Sample();
  nlohmann::json j = SnapshotToJson(s);
  EXPECT_EQ(j["format"], "partalign-snapshot");
  EXPECT_EQ(j["table"]["partitions"][0]["start_bytes"], 256u * 4096);
  EXPECT_EQ(j["table"]["partitions"][0]["content"]["head_xxh64"], "xxh64:fedcba9876543210");
  Result<Snapshot> back = SnapshotFromJson(j.dump());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(SnapshotToJson(*back), j);
  EXPECT_EQ(back->identity, s.identity);
  EXPECT_EQ(back->topology, s.topology);
  EXPECT_EQ(back->table.partitions, s.table.partitions);
  EXPECT_EQ(back->digests, s.digests);
  EXPECT_EQ(back->verdicts, s.verdicts);
  EXPECT_EQ(back->predictions, s.predictions);
}

TEST(SnapshotTest, BrokenFilesNameWhatIsWrong) {
  nlohmann::json j = SnapshotToJson(Sample());
  EXPECT_NE(SnapshotFromJson(j.dump().substr(0, 100)).error().message.find("not valid JSON"),
            std::string::npos);
  nlohmann::json other = j;
  other["format"] = "partalign-plan";
  EXPECT_NE(SnapshotFromJson(other.dump()).error().message.find("format is 'partalign-plan'"),
            std::string::npos);
  nlohmann::json missing = j;
  missing["table"]["partitions"][0].erase("start_sector");
  EXPECT_EQ(SnapshotFromJson(missing.dump()).error().message,
            "table.partitions[0].start_sector: missing");
  nlohmann::json huge = j;
  huge["table"]["partitions"][0]["start_sector"] = UINT64_MAX / 2;
  EXPECT_NE(SnapshotFromJson(huge.dump()).error().message.find("beyond 2^64 bytes"),
            std::string::npos);
  nlohmann::json transport = j;
  transport["device"]["transport"] = "carrier-pigeon";
  EXPECT_EQ(SnapshotFromJson(transport.dump()).error().message,
            "device.transport: unknown value 'carrier-pigeon'");
}

// verify reads the digested bytes from the disk: an edited file must not make it read more than
// a snapshot records (found by tests/fuzz/snapshot_fuzz.cc).
TEST(SnapshotTest, ADigestLongerThanASnapshotRecordsIsRefused) {
  nlohmann::json j = SnapshotToJson(Sample());
  nlohmann::json& content = j["table"]["partitions"][0]["content"];
  for (const uint64_t bytes : {uint64_t{0}, kContentDigestBytes + 1, uint64_t{1} << 40}) {
    content["head_bytes"] = bytes;
    EXPECT_EQ(SnapshotFromJson(j.dump()).error().message,
              fmt::format("table.partitions[0].content.head_bytes: {} is not 1 to 65536", bytes));
  }
  nlohmann::json small = j;
  small["table"]["partitions"][0]["size_sectors"] = 2;
  small["table"]["partitions"][0]["content"]["head_bytes"] = 8193;
  EXPECT_EQ(SnapshotFromJson(small.dump()).error().message,
            "table.partitions[0].content.head_bytes: 8193 is not 1 to 8192");
  content["head_bytes"] = kContentDigestBytes;
  Result<Snapshot> whole = SnapshotFromJson(j.dump());
  ASSERT_TRUE(whole) << whole.error().message;
  EXPECT_EQ(whole->digests.at(0).length_bytes, kContentDigestBytes);
}

// verify pairs partitions by number: a file naming one number twice had a partition of an
// unchanged disk reported moved (found by tests/fuzz/snapshot_fuzz.cc).
TEST(SnapshotTest, TwoPartitionsOfOneNumberAreRefused) {
  nlohmann::json j = SnapshotToJson(Sample());
  nlohmann::json second = j["table"]["partitions"][0];
  second["start_sector"] = 6000;
  second["start_bytes"] = 6000 * 4096;
  j["table"]["partitions"].push_back(second);
  EXPECT_EQ(SnapshotFromJson(j.dump()).error().message,
            "table.partitions[1].number: 1 is partitions[0]'s too");
  j["table"]["partitions"][1]["number"] = 2;
  Result<Snapshot> two = SnapshotFromJson(j.dump());
  ASSERT_TRUE(two) << two.error().message;
  EXPECT_EQ(two->table.partitions.size(), 2u);
}

TEST(SnapshotTest, FileNameNamesTheDiskAndTheTime) {
  Identity id = Sample().identity;
  EXPECT_EQ(SnapshotFileName(id, "20261123T100000Z"),
            "sdb-WD_Elements_25A3-WX12-20261123T100000Z.partalign-snapshot");
  Identity loop;
  loop.path = "/dev/loop3";
  loop.kernel_name = "loop3";
  loop.backing_file = "/var/tmp/x/disk.img";
  EXPECT_EQ(SnapshotFileName(loop, "T"), "loop3-disk.img-T.partalign-snapshot");
  Identity file;
  file.path = "../images/../a b.img";
  EXPECT_EQ(SnapshotFileName(file, "T"), "a_b.img-T.partalign-snapshot");
}

}  // namespace
}  // namespace partalign
