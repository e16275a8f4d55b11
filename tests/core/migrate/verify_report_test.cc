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
  EXPECT_NE(lss->consequence.find("every LBA in it lands at 1/8 of the byte it was written for"),
            std::string::npos)
      << lss->consequence;
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
  // The advice is a command that puts the entry back as it was (sfdisk -N; run by
  // tests/cli/commands/migrate_advice_test.cc).
  EXPECT_NE(gone->consequence.find("echo 'start=196605, size=262140, "
                                   "type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, uuid=P2' | sfdisk "
                                   "-N 2 /dev/sda"),
            std::string::npos)
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

// Issue #30 item 7: a table written for 512-byte sectors read at 4096 says what that does: no
// "8 times of its place", and no "(translated)" without the danger.
TEST(VerifyReportTest, ATableReadWithLargerSectorsSaysWhereItsLbasLand) {
  Snapshot before = OnSata();
  before.identity.wwn.clear();
  Snapshot now = before;
  now.topology.logical_sector_size = 4096;
  now.topology.physical_sector_size = 4096;
  now.topology.minimum_io_size = 4096;
  VerifyReport r = CompareSnapshots(before, now, Heads(before), NewestKnownVersions());
  const VerifyChange* lss = Find(r, "logical_sector_size");
  ASSERT_NE(lss, nullptr);
  EXPECT_NE(lss->consequence.find("every LBA in it lands 8 times as far into the disk as the "
                                  "byte it was written for, so the kernel, fdisk and gdisk find "
                                  "no GPT"),
            std::string::npos)
      << lss->consequence;
  EXPECT_EQ(lss->consequence.find("times of its place"), std::string::npos);

  // Translated for 4096 behind a bridge, snapshotted, translated back for 512 elsewhere, and
  // verified at 4096 again: the table changed, and it is the wrong one for this disk.
  Snapshot at4096 = now;
  at4096.table_written_for = 4096;
  Snapshot back = now;
  back.table_written_for = 512;
  r = CompareSnapshots(at4096, back, Heads(at4096), NewestKnownVersions());
  const VerifyChange* table = Find(r, "table_sector_size");
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->consequence.find("(translated)"), std::string::npos) << table->consequence;
  EXPECT_NE(table->consequence.find("is not written for the disk's 4096-byte sectors"),
            std::string::npos)
      << table->consequence;
  EXPECT_NE(table->consequence.find("translate it"), std::string::npos) << table->consequence;
  EXPECT_EQ(r.actions, std::vector<std::string>{"translate"});
}

// Issue #30 item 7: every topology field's consequences are judged against the whole new
// topology, not against a half-changed one. Here the minimum I/O size alone would make parted
// align to 24 sectors (partition 1 fails), and the optimal I/O size alone back to 2048 (it
// passes again): together parted does what it did, and says nothing about it.
TEST(VerifyReportTest, TopologyFieldsAreJudgedAgainstTheWholeNewTopology) {
  Snapshot before = OnSata();
  before.identity.wwn.clear();
  before.table.partitions = {Part(1, 2048, 2048 * 100, "P1")};
  before.digests = {{2048 * 512, 65536, "xxh64:1"}};
  Snapshot now = before;
  now.topology.minimum_io_size = 12288;
  now.topology.optimal_io_size = 1048576;
  VerifyReport r = CompareSnapshots(before, now, Heads(before), NewestKnownVersions());
  const VerifyChange* min_io = Find(r, "minimum_io_size");
  const VerifyChange* opt_io = Find(r, "optimal_io_size");
  ASSERT_NE(min_io, nullptr);
  ASSERT_NE(opt_io, nullptr);
  for (const VerifyChange* c : {min_io, opt_io}) {
    EXPECT_EQ(c->consequence.find("parted's align-check"), std::string::npos) << c->consequence;
    EXPECT_EQ(c->consequence.find("Parted now aligns"), std::string::npos) << c->consequence;
  }
  // What does change - fdisk's physical-sector check: max(physical, minimum I/O) no longer
  // divides 1 MiB - is said once, under the field that causes it.
  EXPECT_NE(min_io->consequence.find("partition 1 now fails fdisk's physical-sector check"),
            std::string::npos)
      << min_io->consequence;
  EXPECT_EQ(opt_io->consequence.find("fdisk"), std::string::npos) << opt_io->consequence;
  EXPECT_EQ(opt_io->consequence, "No partitioner changes what it does, in bytes");
}

// Issue #30 item 7: "see the fields below" only when there are fields below.
TEST(VerifyReportTest, ATransportChangeWithTheSameTopologySaysSo) {
  Snapshot before = OnSata();
  Snapshot now = before;
  now.identity.transport = Transport::kNvme;
  VerifyReport r = CompareSnapshots(before, now, Heads(before), NewestKnownVersions());
  const VerifyChange* t = Find(r, "transport");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->consequence.find("below"), std::string::npos) << t->consequence;
  EXPECT_NE(t->consequence.find("its topology is the same as before"), std::string::npos);
  VerifyReport moved = CompareSnapshots(OnBridge(), OnSata(), Heads(before), NewestKnownVersions());
  EXPECT_NE(Find(moved, "transport")->consequence.find("the topology fields below"),
            std::string::npos);
}

// Issue #30 item 4: verify does not advise a translate that would refuse; it says why and what
// to do instead, or the --accept that lets it through.
TEST(VerifyReportTest, TranslateAdviceSaysWhenTranslateWouldRefuse) {
  Snapshot before = OnSata();
  before.identity.wwn.clear();
  Snapshot now = before;
  now.topology.logical_sector_size = 4096;
  now.topology.physical_sector_size = 4096;
  now.topology.minimum_io_size = 4096;
  TranslateOutlook refused;
  refused.refusals = {"partition 1: its vfat filesystem has 512-byte sectors"};
  VerifyReport r = CompareSnapshots(before, now, Heads(before), NewestKnownVersions(), refused);
  ASSERT_EQ(r.actions, std::vector<std::string>{"translate"});
  EXPECT_NE(r.action_reasons[0].find("'partalign translate /dev/sda' refuses it: partition 1: "
                                     "its vfat filesystem has 512-byte sectors. Instead: use the "
                                     "disk where it has 512-byte sectors"),
            std::string::npos)
      << r.action_reasons[0];
  TranslateOutlook ntfs;
  ntfs.refusals = {"partition 2: its NTFS boot sector says 512 bytes per sector"};
  ntfs.acceptable = {2};
  ntfs.only_acceptable = true;
  r = CompareSnapshots(before, now, Heads(before), NewestKnownVersions(), ntfs);
  EXPECT_NE(r.action_reasons[0].find("'partalign translate --accept 2 /dev/sda' rewrites it"),
            std::string::npos)
      << r.action_reasons[0];
  nlohmann::json j = VerifyJson(r, "/dev/sda", "snap", before);
  EXPECT_EQ(j["translate_accept"], nlohmann::json::array({2}));
  EXPECT_EQ(j["translate_refusals"].size(), 1u);
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
