// SPDX-License-Identifier: GPL-3.0-or-later
// The validation gate's scanner on tables built byte by byte (tests/support/table_images.h).
// The same kinds of images, written to files, are read by libfdisk and the real tools in
// tests/io/table/table_gate_test.cc: those tests show the scanner agrees with them on sound
// tables; these show every damage is found, with the right severity and a message naming it.
#include "partalign/label/table_scan.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "support/table_images.h"

namespace partalign {
namespace {

using test::GptEntrySpec;
using test::GptSpec;
using test::LogicalSpec;
using test::MakeDosDisk;
using test::MakeGptDisk;
using test::MbrEntrySpec;

constexpr uint64_t kMiB = 1024 * 1024;
// GPT header field offsets (UEFI 2.x, 5.3.2).
constexpr size_t kHeaderSize = 12;
constexpr size_t kMyLba = 24;
constexpr size_t kAlternateLba = 32;
constexpr size_t kFirstUsable = 40;
constexpr size_t kLastUsable = 48;
constexpr size_t kEntriesLba = 72;
constexpr size_t kEntryCount = 80;
constexpr size_t kEntrySize = 84;
// GPT entry field offsets.
constexpr size_t kEntryStart = 32;
constexpr size_t kEntryEnd = 40;

GptSpec TwoPartitionGpt(uint64_t sector_size = 512) {
  GptSpec spec;
  spec.sector_size = sector_size;
  spec.disk_sectors = 64 * kMiB / sector_size;
  const uint64_t mib = kMiB / sector_size;
  spec.entries = {{0, test::kEspGuid, "", mib, 9 * mib - 1},
                  {1, test::kLinuxFsGuid, "", 9 * mib, 40 * mib - 1}};
  return spec;
}

// A copy: the scan is often a temporary.
std::optional<TableFinding> Find(const TableScan& scan, const std::string& code) {
  for (const TableFinding& f : scan.findings) {
    if (f.code == code) return f;
  }
  return std::nullopt;
}

std::string Codes(const TableScan& scan) {
  std::string out;
  for (const TableFinding& f : scan.findings)
    out += f.code + "(" + std::string(ToString(f.severity)) + "): " + f.message + "\n";
  return out;
}

TEST(TableScanTest, SoundGptIsReadFromThePrimaryWithoutFindings) {
  for (uint64_t ss : {512u, 4096u}) {
    SparseDisk disk = MakeGptDisk(TwoPartitionGpt(ss));
    TableScan scan = ScanTable(disk, ss);
    EXPECT_TRUE(scan.findings.empty()) << Codes(scan);
    EXPECT_EQ(scan.label, LabelType::kGpt);
    EXPECT_EQ(scan.mbr, MbrKind::kProtective);
    EXPECT_TRUE(scan.primary.valid);
    EXPECT_TRUE(scan.backup.valid);
    EXPECT_EQ(scan.backup.header_lba, 64 * kMiB / ss - 1);
    EXPECT_EQ(scan.disk_id, "A1B2C3D4-0000-4000-8000-000000000001");
    ASSERT_EQ(scan.partitions.size(), 2u);
    EXPECT_EQ(scan.partitions[0].number, 1u);
    EXPECT_EQ(scan.partitions[0].start_sector, kMiB / ss);
    EXPECT_EQ(scan.partitions[0].size_sectors, 8 * kMiB / ss);
    EXPECT_EQ(scan.partitions[0].type_code, test::kEspGuid);
    EXPECT_EQ(scan.partitions[1].uuid, "0A0B0C0D-0000-4000-8000-000000000002");
    EXPECT_EQ(scan.severity(), TableSeverity::kNote);
  }
}

TEST(TableScanTest, OneDamagedCopyIsReadOnlyAndTheOtherIsRead) {
  GptSpec spec = TwoPartitionGpt();
  {
    SparseDisk disk = MakeGptDisk(spec);
    test::CorruptGptHeader(&disk, 512, test::BackupHeaderLba(spec));
    TableScan scan = ScanTable(disk, 512);
    ASSERT_TRUE(Find(scan, "gpt-backup-invalid")) << Codes(scan);
    EXPECT_EQ(scan.severity(), TableSeverity::kReadOnly);
    EXPECT_NE(Find(scan, "gpt-backup-invalid")->message.find("header CRC"), std::string::npos);
    EXPECT_EQ(scan.partitions.size(), 2u);
  }
  {
    SparseDisk disk = MakeGptDisk(spec);
    test::CorruptGptHeader(&disk, 512, test::PrimaryHeaderLba());
    TableScan scan = ScanTable(disk, 512);
    ASSERT_TRUE(Find(scan, "gpt-primary-invalid")) << Codes(scan);
    EXPECT_EQ(scan.severity(), TableSeverity::kReadOnly);
    EXPECT_EQ(scan.partitions.size(), 2u);
  }
}

TEST(TableScanTest, BothCopiesDamagedIsUnreadableNotADosTable) {
  GptSpec spec = TwoPartitionGpt();
  SparseDisk disk = MakeGptDisk(spec);
  test::CorruptGptHeader(&disk, 512, test::PrimaryHeaderLba());
  test::CorruptGptHeader(&disk, 512, test::BackupHeaderLba(spec));
  TableScan scan = ScanTable(disk, 512);
  EXPECT_EQ(scan.label, LabelType::kGpt);
  ASSERT_TRUE(Find(scan, "gpt-invalid")) << Codes(scan);
  EXPECT_EQ(scan.severity(), TableSeverity::kUnreadable);
  EXPECT_TRUE(scan.partitions.empty());
}

TEST(TableScanTest, EachBadHeaderFieldInvalidatesItsCopy) {
  const GptSpec spec = TwoPartitionGpt();
  const uint64_t last = spec.disk_sectors - 1;
  struct Case {
    const char* what;
    size_t field;
    size_t width;
    uint64_t value;
    const char* expected;
  };
  const Case cases[] = {
      {"header size below 92", kHeaderSize, 4, 91, "header size 91"},
      {"header size above the sector", kHeaderSize, 4, 513, "header size 513"},
      {"MyLBA", kMyLba, 8, 7, "says it is at sector 7"},
      {"entry size 0", kEntrySize, 4, 0, "entry size 0 bytes"},
      {"entry size 256", kEntrySize, 4, 256, "entry size 256 bytes"},
      {"no entries", kEntryCount, 4, 0, "no partition entries"},
      {"usable area reversed", kFirstUsable, 8, last, "is after the last usable sector"},
      {"usable area past the end", kLastUsable, 8, last + 10, "beyond the disk"},
      {"entry array inside the usable area", kEntriesLba, 8, 4096, "overlaps"},
      {"entry array past the end", kEntriesLba, 8, last + 5, "ends beyond the disk"},
      {"entry array over the header", kEntriesLba, 8, 1, "overlaps"},
  };
  for (const Case& c : cases) {
    SparseDisk disk = MakeGptDisk(spec);
    test::SetGptHeaderField(&disk, 512, test::PrimaryHeaderLba(), c.field, c.width, c.value,
                            /*fix_crc=*/true);
    TableScan scan = ScanTable(disk, 512);
    std::optional<TableFinding> f = Find(scan, "gpt-primary-invalid");
    ASSERT_TRUE(f) << c.what << "\n" << Codes(scan);
    EXPECT_NE(f->message.find(c.expected), std::string::npos) << c.what << ": " << f->message;
    EXPECT_EQ(scan.severity(), TableSeverity::kReadOnly) << c.what;
  }
}

TEST(TableScanTest, AHugeEntryArrayIsNotReadAndIsUnreadable) {
  const GptSpec spec = TwoPartitionGpt();
  SparseDisk disk = MakeGptDisk(spec);
  test::SetGptHeaderField(&disk, 512, test::PrimaryHeaderLba(), kEntryCount, 4, 0xFFFFFFFFu,
                          /*fix_crc=*/true);
  TableScan scan = ScanTable(disk, 512);
  ASSERT_TRUE(Find(scan, "gpt-entry-array-too-large")) << Codes(scan);
  EXPECT_EQ(scan.severity(), TableSeverity::kUnreadable);
}

TEST(TableScanTest, BadEntryArrayCrcInvalidatesTheCopy) {
  const GptSpec spec = TwoPartitionGpt();
  SparseDisk disk = MakeGptDisk(spec);
  std::vector<uint8_t> byte = {0x42};
  disk.Write(2 * 512 + 100, byte);  // inside entry 0 of the primary array, CRC not fixed
  TableScan scan = ScanTable(disk, 512);
  std::optional<TableFinding> f = Find(scan, "gpt-primary-invalid");
  ASSERT_TRUE(f) << Codes(scan);
  EXPECT_NE(f->message.find("entry array CRC"), std::string::npos);
}

TEST(TableScanTest, PartitionsPastTheEndAtTwoToTheSixtyThreeOrWrappingAreUnreadable) {
  const GptSpec spec = TwoPartitionGpt();
  struct Case {
    uint64_t start;
    uint64_t end;
    const char* code;
  };
  const Case cases[] = {
      {uint64_t{1} << 63, (uint64_t{1} << 63) + 100, "partition-past-end"},
      {2048, ~uint64_t{0}, "partition-past-end"},
      {2048, spec.disk_sectors - 2, "partition-outside"},  // over the backup entry array
      {20, 4000, "partition-outside"},                     // over the primary entry array
      {5000, 4000, "partition-invalid"},
  };
  for (const Case& c : cases) {
    SparseDisk disk = MakeGptDisk(spec);
    for (uint64_t lba : {test::PrimaryHeaderLba(), test::BackupHeaderLba(spec)}) {
      test::SetGptEntryField(&disk, 512, lba, 1, kEntryStart, 8, c.start);
      test::SetGptEntryField(&disk, 512, lba, 1, kEntryEnd, 8, c.end);
    }
    TableScan scan = ScanTable(disk, 512);
    std::optional<TableFinding> f = Find(scan, c.code);
    ASSERT_TRUE(f) << c.start << "-" << c.end << "\n" << Codes(scan);
    EXPECT_NE(f->message.find("partition 2"), std::string::npos) << f->message;
    EXPECT_EQ(scan.severity(), TableSeverity::kUnreadable);
    EXPECT_TRUE(scan.partitions.empty());
  }
}

TEST(TableScanTest, OverlappingGptPartitionsAreUnreadable) {
  GptSpec spec = TwoPartitionGpt();
  spec.entries[1].start = 4096;  // partition 1 ends at 18431
  TableScan scan = ScanTable(MakeGptDisk(spec), 512);
  std::optional<TableFinding> f = Find(scan, "partition-overlap");
  ASSERT_TRUE(f) << Codes(scan);
  EXPECT_NE(f->message.find("partitions 1 (sectors 2048-18431) and 2"), std::string::npos)
      << f->message;
}

TEST(TableScanTest, UntypedEntryWithAStartIsUnreadable) {
  GptSpec spec = TwoPartitionGpt();
  spec.entries.push_back({5, "00000000-0000-0000-0000-000000000000", "", 50000, 60000});
  TableScan scan = ScanTable(MakeGptDisk(spec), 512);
  ASSERT_TRUE(Find(scan, "gpt-entry-untyped")) << Codes(scan);
}

TEST(TableScanTest, HybridMbrIsReadOnlyAndWithADamagedGptUnreadable) {
  GptSpec spec = TwoPartitionGpt();
  spec.mbr = {{0, 0xEE, 1, 2047}, {0x80, 0x0C, 2048, 16384}};
  {
    TableScan scan = ScanTable(MakeGptDisk(spec), 512);
    EXPECT_EQ(scan.mbr, MbrKind::kHybrid);
    ASSERT_TRUE(Find(scan, "hybrid-mbr")) << Codes(scan);
    EXPECT_EQ(scan.severity(), TableSeverity::kReadOnly);
    EXPECT_EQ(scan.partitions.size(), 2u);
  }
  {
    SparseDisk disk = MakeGptDisk(spec);
    test::CorruptGptHeader(&disk, 512, test::PrimaryHeaderLba());
    test::CorruptGptHeader(&disk, 512, test::BackupHeaderLba(spec));
    TableScan scan = ScanTable(disk, 512);
    // Not read as a DOS table with the 0xEE entry as partition 1 and sectors 1-2047 to move.
    EXPECT_EQ(scan.label, LabelType::kGpt);
    std::optional<TableFinding> f = Find(scan, "gpt-invalid");
    ASSERT_TRUE(f) << Codes(scan);
    EXPECT_NE(f->message.find("hybrid MBR, but no valid GPT"), std::string::npos) << f->message;
    EXPECT_TRUE(scan.partitions.empty());
  }
}

TEST(TableScanTest, ProtectiveMbrWithoutGptAndGptWithoutProtectiveMbr) {
  GptSpec spec = TwoPartitionGpt();
  {
    SparseDisk disk(spec.disk_sectors * 512);
    test::WriteMbr(&disk, 0,
                   {MbrEntrySpec{0, 0xEE, 1, static_cast<uint32_t>(spec.disk_sectors - 1)}});
    TableScan scan = ScanTable(disk, 512);
    std::optional<TableFinding> f = Find(scan, "gpt-invalid");
    ASSERT_TRUE(f) << Codes(scan);
    EXPECT_NE(f->message.find("no GPT header at sector 1"), std::string::npos) << f->message;
  }
  {
    SparseDisk disk = MakeGptDisk(spec);
    disk.Write(0, std::vector<uint8_t>(512, 0));
    TableScan scan = ScanTable(disk, 512);
    EXPECT_EQ(scan.label, LabelType::kGpt);
    ASSERT_TRUE(Find(scan, "gpt-without-protective-mbr")) << Codes(scan);
    EXPECT_EQ(scan.severity(), TableSeverity::kUnreadable);
  }
}

TEST(TableScanTest, BackupNotAtTheEndIsANoteThatPlanRelocates) {
  // A disk image copied onto a larger disk: the backup sits where the old disk ended. Sound
  // otherwise, so plan may change it: its table-only step moves the backup (BackupRelocationFor).
  GptSpec spec = TwoPartitionGpt();
  SparseDisk small = MakeGptDisk(spec);
  SparseDisk large(small.size_bytes() + 8 * kMiB);
  for (const auto& [offset, bytes] : small.runs()) large.Write(offset, bytes);
  TableScan scan = ScanTable(large, 512);
  ASSERT_TRUE(Find(scan, "gpt-backup-misplaced")) << Codes(scan);
  EXPECT_EQ(scan.severity(), TableSeverity::kNote);
  EXPECT_NE(Find(scan, "gpt-backup-misplaced")->message.find("a copy of a smaller disk"),
            std::string::npos);
  // The protective MBR no longer covers the disk: a note, libfdisk fixes it when it writes.
  EXPECT_TRUE(Find(scan, "protective-mbr-size")) << Codes(scan);
}

TEST(TableScanTest, GptWrittenForAnotherSectorSizeIsNamed) {
  SparseDisk disk = MakeGptDisk(TwoPartitionGpt(4096));
  TableScan scan = ScanTable(disk, 512);
  std::optional<TableFinding> f = Find(scan, "table-sector-size-mismatch");
  ASSERT_TRUE(f) << Codes(scan);
  EXPECT_NE(f->message.find("written for 4096-byte sectors"), std::string::npos) << f->message;
  SparseDisk other = MakeGptDisk(TwoPartitionGpt(512));
  TableScan at4096 = ScanTable(other, 4096);
  f = Find(at4096, "table-sector-size-mismatch");
  ASSERT_TRUE(f);
  EXPECT_NE(f->message.find("written for 512-byte sectors"), std::string::npos) << f->message;
}

TEST(TableScanTest, DosWithLogicalPartitionsIsReadLikeLibfdiskNumbersIt) {
  const uint64_t mib = 2048;
  SparseDisk disk =
      MakeDosDisk(64 * kMiB, 512, {{0x80, 0x83, 2048, 8 * 2048}},
                  {{11 * mib, 4 * mib}, {16 * mib, 4 * mib, 0x82}}, 10 * mib, 30 * mib - 1);
  TableScan scan = ScanTable(disk, 512);
  EXPECT_TRUE(scan.findings.empty()) << Codes(scan);
  EXPECT_EQ(scan.label, LabelType::kDos);
  EXPECT_EQ(scan.disk_id, "0x12345678");
  ASSERT_EQ(scan.partitions.size(), 4u);
  EXPECT_EQ(scan.partitions[0].number, 1u);
  EXPECT_TRUE(scan.partitions[0].bootable);
  EXPECT_EQ(scan.partitions[1].number, 4u);
  EXPECT_EQ(scan.partitions[1].kind, PartitionKind::kExtended);
  EXPECT_EQ(scan.partitions[2].number, 5u);
  EXPECT_EQ(scan.partitions[2].kind, PartitionKind::kLogical);
  EXPECT_EQ(scan.partitions[2].start_sector, 11 * mib);
  EXPECT_EQ(scan.partitions[3].number, 6u);
  EXPECT_EQ(scan.partitions[3].type_code, "0x82");
  EXPECT_EQ(scan.ebr_lbas, (std::vector<uint64_t>{10 * mib, 16 * mib - 1}));
}

std::vector<LogicalSpec> Logicals(size_t n, uint64_t first, uint64_t stride) {
  std::vector<LogicalSpec> out;
  for (size_t i = 0; i < n; ++i) out.push_back({first + i * stride, stride - 1});
  return out;
}

TEST(TableScanTest, MoreLogicalPartitionsThanLibfdiskReadsAreUnreadable) {
  // 56 logical partitions are what libfdisk keeps (partitions 5-60); 60 and 2001 are not.
  for (size_t n : {56u, 57u, 60u, 2001u}) {
    const uint64_t stride = 64;
    SparseDisk disk =
        MakeDosDisk(256 * kMiB, 512, {}, Logicals(n, 2049, stride), 2048, 2048 + n * stride + 10);
    TableScan scan = ScanTable(disk, 512);
    if (n <= kMaxFdiskLogicalPartitions) {
      EXPECT_TRUE(scan.findings.empty()) << n << "\n" << Codes(scan);
      EXPECT_EQ(scan.partitions.size(), n + 1);
      continue;
    }
    std::optional<TableFinding> f = Find(scan, "ebr-chain-too-long");
    ASSERT_TRUE(f) << n << "\n" << Codes(scan);
    EXPECT_NE(f->message.find(fmt::format("holds {} logical partitions", n)), std::string::npos)
        << f->message;
  }
}

TEST(TableScanTest, EbrLoopsAndBrokenLinksAreUnreadable) {
  const uint64_t ext = 2048;
  SparseDisk disk = MakeDosDisk(64 * kMiB, 512, {}, Logicals(3, 2049, 1000), ext, 20000);
  // Point the last EBR's link back at the head of the chain.
  test::WriteMbr(&disk, (2049 + 2000 - 1) * 512,
                 {MbrEntrySpec{0, 0x83, 1, 999}, MbrEntrySpec{0, 0x05, 0, 1000}}, 0);
  TableScan scan = ScanTable(disk, 512);
  ASSERT_TRUE(Find(scan, "ebr-loop")) << Codes(scan);
  EXPECT_EQ(scan.severity(), TableSeverity::kUnreadable);

  SparseDisk unsigned_ebr = MakeDosDisk(64 * kMiB, 512, {}, Logicals(3, 2049, 1000), ext, 20000);
  unsigned_ebr.Write((2049 + 1000 - 1) * 512 + 510, std::vector<uint8_t>{0, 0});
  ASSERT_TRUE(Find(ScanTable(unsigned_ebr, 512), "ebr-invalid"));

  SparseDisk outside = MakeDosDisk(64 * kMiB, 512, {}, Logicals(3, 2049, 1000), ext, 20000);
  test::WriteMbr(&outside, (2049 + 1000 - 1) * 512,
                 {MbrEntrySpec{0, 0x83, 1, 999}, MbrEntrySpec{0, 0x05, 50000, 1000}}, 0);
  ASSERT_TRUE(Find(ScanTable(outside, 512), "ebr-outside-extended"));
}

TEST(TableScanTest, DosPartitionsPastTheEndOverlappingOrEmptyAreUnreadable) {
  {
    // Written for 512-byte sectors, read with 4096: the hint says so.
    SparseDisk disk = MakeDosDisk(64 * kMiB, 512, {{0, 0x83, 2048, 100000}});
    TableScan scan = ScanTable(disk, 4096);
    std::optional<TableFinding> f = Find(scan, "partition-past-end");
    ASSERT_TRUE(f) << Codes(scan);
    EXPECT_NE(f->message.find("it would fit with 512-byte sectors"), std::string::npos)
        << f->message;
  }
  {
    SparseDisk disk = MakeDosDisk(64 * kMiB, 512, {{0, 0x83, 2048, 8192}, {0, 0x83, 8192, 8192}});
    ASSERT_TRUE(Find(ScanTable(disk, 512), "partition-overlap"));
  }
  {
    SparseDisk disk = MakeDosDisk(64 * kMiB, 512, {{0, 0x83, 2048, 0}});
    ASSERT_TRUE(Find(ScanTable(disk, 512), "partition-invalid"));
  }
  {
    SparseDisk disk = MakeDosDisk(64 * kMiB, 512, {{0, 0x83, 0, 100}});
    ASSERT_TRUE(Find(ScanTable(disk, 512), "partition-invalid"));
  }
  {
    SparseDisk disk = MakeDosDisk(64 * kMiB, 512, {{0, 0x05, 2048, 8192}, {0, 0x0F, 20000, 8192}});
    ASSERT_TRUE(Find(ScanTable(disk, 512), "extended-several"));
  }
}

TEST(TableScanTest, BootSectorAndEmptyMbrAndTinyDisks) {
  {
    // 55 AA at bytes 510-511 of a 512-byte image and nothing else: an empty DOS table, as
    // libfdisk and sfdisk read it.
    SparseDisk disk(512);
    disk.Write(510, std::vector<uint8_t>{0x55, 0xAA});
    TableScan scan = ScanTable(disk, 512);
    EXPECT_EQ(scan.label, LabelType::kDos);
    EXPECT_TRUE(scan.partitions.empty());
    EXPECT_TRUE(scan.findings.empty()) << Codes(scan);
  }
  {
    SparseDisk disk(64 * kMiB);
    std::vector<uint8_t> sector(512, 0x20);  // boot code and text where entries would be
    sector[510] = 0x55;
    sector[511] = 0xAA;
    disk.Write(0, sector);
    TableScan scan = ScanTable(disk, 512);
    EXPECT_EQ(scan.label, LabelType::kNone);
    EXPECT_EQ(scan.mbr, MbrKind::kBootSector);
    EXPECT_EQ(scan.severity(), TableSeverity::kNote);
  }
  {
    SparseDisk disk(511);
    TableScan scan = ScanTable(disk, 512);
    EXPECT_EQ(scan.label, LabelType::kNone);
    EXPECT_TRUE(scan.findings.empty());
  }
}

// What every later layer relies on, for any bytes: a table the scan does not call unreadable
// has partitions inside the disk (GPT: inside the usable area), disjoint (logical ones apart),
// numbered once each. Seeded random byte changes of sound GPT and DOS images, in the header
// fields, entries and EBRs where they matter (a few seconds; the libFuzzer harness goes
// further).
TEST(TableScanTest, WhateverTheBytesWhatPassesIsInsideTheDiskAndDisjoint) {
  std::mt19937_64 rng(20261121);
  const SparseDisk gpt = MakeGptDisk(TwoPartitionGpt());
  const SparseDisk dos = MakeDosDisk(64 * kMiB, 512, {{0x80, 0x83, 2048, 8 * 2048}},
                                     Logicals(5, 20481, 2048), 20480, 40000);
  // Where damage matters: MBR entries, both GPT headers and the first entries, the EBRs.
  const std::vector<std::pair<uint64_t, uint64_t>> gpt_spots = {
      {446, 66}, {512, 92}, {1024, 256}, {(131072 - 1) * 512, 92}};
  const std::vector<std::pair<uint64_t, uint64_t>> dos_spots = {
      {446, 66}, {20480 * 512 + 446, 66}, {(20481 + 2048 - 1) * 512 + 446, 66}};
  int unreadable = 0, read_only = 0, sound = 0;
  for (int round = 0; round < 3000; ++round) {
    const bool is_gpt = round % 2 == 0;
    SparseDisk disk = is_gpt ? gpt : dos;
    const auto& spots = is_gpt ? gpt_spots : dos_spots;
    const int changes = 1 + static_cast<int>(rng() % 4);
    for (int c = 0; c < changes; ++c) {
      const auto& [from, length] = spots[rng() % spots.size()];
      std::vector<uint8_t> byte = {static_cast<uint8_t>(rng())};
      disk.Write(from + rng() % length, byte);
    }
    for (uint64_t ss : {512u, 4096u}) {
      TableScan scan = ScanTable(disk, ss);
      if (scan.severity() == TableSeverity::kUnreadable) {
        ++unreadable;
        EXPECT_TRUE(scan.partitions.empty());
        continue;
      }
      (scan.severity() == TableSeverity::kReadOnly ? read_only : sound) += 1;
      std::set<uint32_t> numbers;
      for (const ScannedPartition& p : scan.partitions) {
        ASSERT_TRUE(numbers.insert(p.number).second) << "round " << round;
        ASSERT_GT(p.size_sectors, 0u) << "round " << round;
        ASSERT_LT(p.start_sector + p.size_sectors - 1, scan.disk_size_sectors) << "round " << round;
        if (scan.label == LabelType::kGpt) {
          ASSERT_GE(p.start_sector, scan.first_usable_lba) << "round " << round;
          ASSERT_LE(p.start_sector + p.size_sectors - 1, scan.last_usable_lba) << "round " << round;
        }
      }
      for (const ScannedPartition& a : scan.partitions) {
        for (const ScannedPartition& b : scan.partitions) {
          if (a.number >= b.number) continue;
          const bool nested =
              (a.kind == PartitionKind::kExtended) != (b.kind == PartitionKind::kExtended);
          if (nested) continue;
          const bool apart = a.start_sector + a.size_sectors <= b.start_sector ||
                             b.start_sector + b.size_sectors <= a.start_sector;
          ASSERT_TRUE(apart) << "round " << round << ": partitions " << a.number << " and "
                             << b.number;
        }
      }
    }
  }
  // Every outcome happened (a guard against damage that never lands).
  EXPECT_GT(unreadable, 0);
  EXPECT_GT(read_only, 0);
  EXPECT_GT(sound, 0);
}

}  // namespace
}  // namespace partalign
