// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/migrate/verify_report.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace partalign {
namespace {

constexpr uint64_t kDisk = 8ull << 30;

Partition Part(uint32_t number, uint64_t start, uint64_t size, std::string uuid) {
  Partition p;
  p.number = number;
  p.start_sector = start;
  p.size_sectors = size;
  p.type_code = "0FC63DAF-8483-4772-8E79-3D69D8477DE4";
  p.uuid = std::move(uuid);
  p.contents = {.fs_type = "ext4",
                .fs_uuid = "fs-" + std::to_string(number),
                .fs_block_size = 4096,
                .proof = ContentProof::kSignature};
  return p;
}

// A disk behind a JMicron bridge (optimal I/O 0xFFFF x 512) with partitions parted placed on
// multiples of 65535 sectors, and the same disk on SATA.
Snapshot OnBridge() {
  Snapshot s;
  s.created = "2026-11-23T10:00:00Z";
  s.identity.path = "/dev/sdc";
  s.identity.transport = Transport::kUsb;
  s.identity.wwn = "0x5000c500a1b2c3d4";
  s.identity.usb_bridge = UsbBridge{"152d", "0578", "JMicron", "USB to ATA/ATAPI Bridge", "uas"};
  s.topology = {512, 4096, 4096, 33553920, 0, kDisk, TopologyOrigin::kKernel};
  s.table.label = LabelType::kGpt;
  s.table.sector_size = 512;
  s.table.disk_size_sectors = kDisk / 512;
  s.table.disk_id = "AAAAAAAA-0000-0000-0000-000000000001";
  s.table.fingerprint = "xxh64:1111111111111111";
  s.table.partitions = {Part(1, 65535, 2 * 65535, "P1"), Part(2, 3 * 65535, 4 * 65535, "P2")};
  s.table_written_for = 512;
  for (const Partition& p : s.table.partitions) {
    s.digests.push_back({p.start_sector * 512, 65536, "xxh64:" + std::to_string(p.number)});
  }
  return s;
}

Snapshot OnSata() {
  Snapshot s = OnBridge();
  s.identity.path = "/dev/sda";
  s.identity.transport = Transport::kSata;
  s.identity.usb_bridge.reset();
  s.topology = {512, 4096, 4096, 0, 0, kDisk, TopologyOrigin::kKernel};
  return s;
}

const VerifyChange* Find(const VerifyReport& r, const std::string& field) {
  for (const VerifyChange& c : r.changes) {
    if (c.field == field) return &c;
  }
  return nullptr;
}

std::vector<ContentDigest> Heads(const Snapshot& s) { return s.digests; }

TEST(VerifyReportTest, BridgeToSataNamesWhatEachPartitionerNowDoes) {
  Snapshot before = OnBridge();
  Snapshot now = OnSata();
  VerifyReport r = CompareSnapshots(before, now, Heads(before), NewestKnownVersions());
  ASSERT_TRUE(r.same_disk);
  EXPECT_EQ(r.matched_by, "wwn");
  const VerifyChange* opt = Find(r, "optimal_io_size");
  ASSERT_NE(opt, nullptr);
  EXPECT_EQ(opt->before, 33553920);
  EXPECT_EQ(opt->after, 0);
  EXPECT_NE(opt->consequence.find("Parted now aligns to 2048 sectors (1 MiB) instead of 65535 "
                                  "sectors"),
            std::string::npos)
      << opt->consequence;
  EXPECT_NE(opt->consequence.find("partitions 1 and 2 now fail parted's align-check"),
            std::string::npos)
      << opt->consequence;
  ASSERT_NE(Find(r, "partitions[1].parted_align_check_opt"), nullptr);
  EXPECT_EQ(Find(r, "partitions[1].parted_align_check_opt")->after, false);
  ASSERT_NE(Find(r, "transport"), nullptr);
  ASSERT_NE(Find(r, "usb_bridge"), nullptr);
  // 65535-sector starts were never on 1 MiB: partalign says to re-plan either way.
  EXPECT_EQ(r.actions, std::vector<std::string>{"plan"});
  EXPECT_TRUE(r.action_needed());
}

TEST(VerifyReportTest, TableWrittenFor4096ReadOn512AsksForTranslate) {
  Snapshot before = OnBridge();
  before.identity.wwn.clear();
  before.topology = {4096, 4096, 4096, 0, 0, kDisk, TopologyOrigin::kKernel};
  before.table.sector_size = 4096;
  before.table.partitions = {Part(1, 256, 2560, "P1"), Part(2, 2816, 8192, "P2")};
  before.table_written_for = 4096;
  Snapshot now = before;
  now.identity.transport = Transport::kSata;
  now.identity.usb_bridge.reset();
  now.topology.logical_sector_size = 512;
  now.topology.physical_sector_size = 512;
  now.topology.minimum_io_size = 512;
  // Now: the table is still read with 4096 (what it was written for), the disk has 512.
  VerifyReport r = CompareSnapshots(before, now, Heads(before), NewestKnownVersions());
  ASSERT_TRUE(r.same_disk);
  EXPECT_EQ(r.matched_by, "table_guids");
  const VerifyChange* lss = Find(r, "logical_sector_size");
  ASSERT_NE(lss, nullptr);
  EXPECT_EQ(lss->before, 4096);
  EXPECT_EQ(lss->after, 512);
  EXPECT_NE(lss->consequence.find("written for 4096-byte sectors"), std::string::npos);
  EXPECT_NE(lss->consequence.find("1/8 of its place"), std::string::npos);
  EXPECT_EQ(r.actions, std::vector<std::string>{"translate"});

  // Translated: the same partitions in 512-byte sectors. Nothing left to do.
  Snapshot translated = now;
  translated.table.sector_size = 512;
  for (Partition& p : translated.table.partitions) {
    p.start_sector *= 8;
    p.size_sectors *= 8;
  }
  translated.table_written_for = 512;
  translated.table.fingerprint = "xxh64:2222222222222222";
  r = CompareSnapshots(before, translated, Heads(before), NewestKnownVersions());
  EXPECT_EQ(r.actions, std::vector<std::string>{"none"});
  EXPECT_FALSE(r.action_needed());
  ASSERT_NE(Find(r, "table_sector_size"), nullptr);
  EXPECT_EQ(Find(r, "partitions[1].extent"), nullptr) << "same bytes: not a move";
}

TEST(VerifyReportTest, AnotherSerialOnTheSameAttachmentIsAnotherDisk) {
  Snapshot before = OnSata();
  before.identity.wwn.clear();
  before.identity.serial = "S1";
  Snapshot now = before;
  now.identity.serial = "S2";  // a clone: same table, same data, another drive
  VerifyReport r = CompareSnapshots(before, now, Heads(before), NewestKnownVersions());
  EXPECT_FALSE(r.same_disk);
  EXPECT_TRUE(r.changes.empty());
  EXPECT_NE(r.identity.front().find("serial S1, now S2: another disk"), std::string::npos);
  // Through a bridge, a serial that differs decides nothing: the GUIDs do.
  now.identity.transport = Transport::kUsb;
  r = CompareSnapshots(before, now, Heads(before), NewestKnownVersions());
  EXPECT_TRUE(r.same_disk);
  EXPECT_EQ(r.matched_by, "table_guids");
}

TEST(VerifyReportTest, ContentsIdentifyADiskWhoseTableWasReplaced) {
  Snapshot before = OnSata();
  before.identity.wwn.clear();
  Snapshot now = before;
  now.table.disk_id = "BBBBBBBB-0000-0000-0000-000000000002";
  now.table.partitions = {};  // gdisk made a new, empty GPT
  now.digests = {};
  now.table.fingerprint = "xxh64:3333333333333333";
  VerifyReport r = CompareSnapshots(before, now, Heads(before), NewestKnownVersions());
  ASSERT_TRUE(r.same_disk);
  EXPECT_EQ(r.matched_by, "content_digests");
  const VerifyChange* gone = Find(r, "partitions[2]");
  ASSERT_NE(gone, nullptr);
  EXPECT_NE(gone->consequence.find("its data is still at byte 100661760"), std::string::npos)
      << gone->consequence;
  // Nothing recognisable at all: not the same disk.
  std::vector<ContentDigest> other = Heads(before);
  for (ContentDigest& d : other) d.xxh64 = "xxh64:ffff";
  for (Partition& p : now.table.partitions) p.contents.fs_uuid = "x";
  r = CompareSnapshots(before, now, other, NewestKnownVersions());
  EXPECT_FALSE(r.same_disk);
}

TEST(VerifyReportTest, JsonHasTheDocumentedKeys) {
  Snapshot before = OnBridge();
  VerifyReport r = CompareSnapshots(before, OnSata(), Heads(before), NewestKnownVersions());
  nlohmann::json j = VerifyJson(r, "/dev/sda", "snap", before);
  for (const char* key : {"schema_version", "same_disk", "matched_by", "changes", "actions"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["changes"][0].size(), 4u);
  std::vector<std::string> lines = VerifyLines(r, "/dev/sda", before);
  EXPECT_NE(std::find_if(lines.begin(), lines.end(),
                         [](const std::string& l) { return l.rfind("action: plan", 0) == 0; }),
            lines.end());
}

TEST(TableInSectorsTest, KeepsBytesAndLeavesOutWhatDoesNotFit) {
  PartitionTable t;
  t.sector_size = 512;
  t.partitions = {Part(1, 2048, 2048, "a"), Part(2, 4097, 8, "b")};
  std::vector<uint32_t> left_out;
  PartitionTable v = TableInSectors(t, 4096, &left_out);
  ASSERT_EQ(v.partitions.size(), 1u);
  EXPECT_EQ(v.partitions[0].start_sector, 256u);
  EXPECT_EQ(v.partitions[0].size_sectors, 256u);
  EXPECT_EQ(left_out, std::vector<uint32_t>{2});
}

}  // namespace
}  // namespace partalign
