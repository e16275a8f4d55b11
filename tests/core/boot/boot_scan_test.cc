// SPDX-License-Identifier: GPL-3.0-or-later
// FindBootRecords on disks held in memory (SparseDisk) with boot sectors laid out by the
// specifications: what each move does to every record, what is refused and why, and the stale
// records of a disk that moves nothing. Every update is checked by applying its edits at the
// partition's new place and parsing the record again.
#include "partalign/boot/boot_scan.h"

#include <gtest/gtest.h>

#include <map>

#include "partalign/boot/grub_boot.h"
#include "partalign/boot/nested_label.h"
#include "partalign/boot/volume_boot_sector.h"
#include "partalign/util/byte_order.h"
#include "support/boot_sectors.h"

namespace partalign {
namespace {

using test::Bytes;

constexpr uint64_t kMiB = 1 << 20;

BootPartition Part(uint32_t number, uint64_t start, uint64_t size, std::string type,
                   bool bootable = false) {
  return BootPartition{number, start, size, std::move(type), "", bootable, false};
}

// Moves every partition's bytes to its new place (as the mover does: the runs written into the
// sparse disk, the old place left zero) and applies the edits there, checking the old bytes
// first.
void MoveAndApply(SparseDisk& disk, const BootDisk& table, const std::vector<PartitionMove>& moves,
                  const BootReport& report) {
  const uint64_t ss = table.sector_size;
  std::map<uint32_t, uint64_t> new_start;
  for (const BootPartition& p : table.partitions) new_start[p.number] = p.start_sector;
  for (const PartitionMove& m : moves) {
    const uint64_t from = m.old_start_sector * ss;
    const uint64_t end = from + m.old_size_sectors * ss;
    std::vector<std::pair<uint64_t, Bytes>> runs;
    for (const auto& [at, bytes] : disk.runs()) {
      if (at + bytes.size() <= from || at >= end) continue;
      const uint64_t b = std::max(at, from);
      const uint64_t e = std::min<uint64_t>(at + bytes.size(), end);
      runs.emplace_back(b - from, Bytes(bytes.begin() + static_cast<ptrdiff_t>(b - at),
                                        bytes.begin() + static_cast<ptrdiff_t>(e - at)));
    }
    for (const auto& [rel, bytes] : runs) disk.Write(from + rel, Bytes(bytes.size(), 0));
    for (const auto& [rel, bytes] : runs) disk.Write(m.new_start_sector * ss + rel, bytes);
    new_start[m.number] = m.new_start_sector;
  }
  for (const ByteEdit& e : report.Edits()) {
    const uint64_t at = *AbsoluteOffset(e, new_start[e.partition] * ss);
    Bytes now(e.old_bytes.size());
    ASSERT_TRUE(disk.ReadAt(at, now));
    ASSERT_EQ(now, e.old_bytes) << "edit at " << at;
    ASSERT_EQ(e.old_bytes.size(), e.new_bytes.size());
    disk.Write(at, e.new_bytes);
  }
}

Bytes ReadAt(const DiskReader& disk, uint64_t at, uint64_t count) {
  Bytes out(count);
  EXPECT_TRUE(disk.ReadAt(at, out));
  return out;
}

const BootFinding* FindKind(const BootReport& r, BootRecordKind kind, uint32_t partition) {
  for (const BootFinding& f : r.findings) {
    if (f.kind == kind && f.partition == partition) return &f;
  }
  return nullptr;
}

std::string Dump(const BootReport& r) {
  std::string out;
  for (const BootFinding& f : r.findings) {
    out += std::to_string(f.partition) + " " + std::string(ToString(f.kind)) + " " +
           std::string(ToString(f.verdict)) + ": " + f.description + " [" + f.reason + "]\n";
  }
  return out;
}

// A DOS disk: NTFS at 63 (bootable), FAT32 after it, exFAT after that, each with hidden
// sectors / PartitionOffset naming its start, as a 2009 Windows disk would have them.
struct DosDisk {
  SparseDisk disk{512 * kMiB};
  BootDisk table;
  DosDisk() {
    table.label = LabelType::kDos;
    table.disk_id = "0x0badcafe";
    table.partitions = {Part(1, 63, 65536, "0x07", true), Part(2, 65599, 262144, "0x0C"),
                        Part(3, 327743, 65536, "0x07")};
    disk.Write(63 * 512, test::NtfsBootSectorBytes(63, 65535));
    disk.Write((63 + 65535) * 512, test::NtfsBootSectorBytes(63, 65535));
    disk.Write(65599 * 512, test::FatBootSectorBytes(true, 65599, 262144));
    disk.Write((65599 + 6) * 512, test::FatBootSectorBytes(true, 65599, 262144));
    const Bytes region = test::ExfatBootRegionBytes(327743, 65536);
    disk.Write(327743 * 512, region);
    disk.Write((327743 + 12) * 512, region);
  }
};

TEST(BootScanTest, EveryFilesystemRecordFollowsItsMove) {
  DosDisk d;
  // Forward moves, the last partition first (the mover's order when places overlap).
  const std::vector<PartitionMove> moves = {{3, 327743, 329728, 65536, 65536},
                                            {2, 65599, 67584, 262144, 262144},
                                            {1, 63, 2048, 65536, 65536}};
  Result<BootReport> r = FindBootRecords(d.disk, d.table, moves);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->refused()) << Dump(*r);

  const BootFinding* ntfs = FindKind(*r, BootRecordKind::kNtfsBootSector, 1);
  ASSERT_NE(ntfs, nullptr) << Dump(*r);
  EXPECT_EQ(ntfs->verdict, BootVerdict::kUpdate);
  EXPECT_EQ(ntfs->description, "NTFS boot sector: hidden sectors 63 -> 2048, primary and backup");
  ASSERT_EQ(ntfs->edits.size(), 2u);
  EXPECT_EQ(ntfs->edits[0].offset_bytes, 0x1Cu);
  EXPECT_EQ(ntfs->edits[1].offset_bytes, 65535u * 512 + 0x1C);

  const BootFinding* fat = FindKind(*r, BootRecordKind::kFatBootSector, 2);
  ASSERT_NE(fat, nullptr);
  EXPECT_EQ(fat->description,
            "FAT32 boot sector: hidden sectors 65599 -> 67584, primary and backup");
  ASSERT_EQ(fat->edits.size(), 2u);
  EXPECT_EQ(fat->edits[1].offset_bytes, 6u * 512 + 0x1C);

  const BootFinding* exfat = FindKind(*r, BootRecordKind::kExfatBootRegion, 3);
  ASSERT_NE(exfat, nullptr);
  EXPECT_EQ(exfat->description,
            "exFAT boot region: PartitionOffset 327743 -> 329728, main and "
            "backup (boot checksums recomputed)");
  EXPECT_EQ(exfat->edits.size(), 4u);
  for (const ByteEdit& e : r->Edits()) EXPECT_LE(e.new_bytes.size(), 512u);

  MoveAndApply(d.disk, d.table, moves, *r);
  EXPECT_EQ(ParseNtfsBootSector(ReadAt(d.disk, 2048 * 512, 512))->hidden_sectors, 2048u);
  EXPECT_EQ(ParseNtfsBootSector(ReadAt(d.disk, (2048 + 65535) * 512, 512))->hidden_sectors, 2048u);
  EXPECT_EQ(ParseFatBootSector(ReadAt(d.disk, 67584 * 512, 512))->hidden_sectors, 67584u);
  EXPECT_EQ(ParseFatBootSector(ReadAt(d.disk, (67584 + 6) * 512, 512))->hidden_sectors, 67584u);
  for (uint64_t region : {0, 12}) {
    const Bytes bytes = ReadAt(d.disk, (329728 + region) * 512, 12 * 512);
    EXPECT_EQ(ParseExfatBootSector(bytes)->partition_offset, 329728u);
    const uint32_t sum = test::ReferenceExfatChecksum(bytes, 512);
    for (uint64_t at = 11 * 512; at < 12 * 512; at += 4) ASSERT_EQ(*Le<uint32_t>(bytes, at), sum);
  }
  // Moved again from the new place: the records now say the new start.
  SparseDisk& after = d.disk;
  BootDisk moved = d.table;
  moved.partitions[0].start_sector = 2048;
  moved.partitions[1].start_sector = 67584;
  moved.partitions[2].start_sector = 329728;
  Result<BootReport> audit = FindBootRecords(after, moved, {});
  ASSERT_TRUE(audit);
  EXPECT_TRUE(audit->Edits().empty()) << Dump(*audit);
}

// Sweep seed 45, case 173: an NTFS shrunk by ntfsresize ends whole clusters before its
// partition, with its backup boot sector after the volume and a copy in the partition's last
// sector, where ntfsfix reads it. A move updated only the first: ntfsfix said "Checking the
// alternate boot sector... BAD". Every copy follows the move.
TEST(BootScanTest, AnNtfsShrunkBeforeItsLastSectorHasBothBackupsUpdated) {
  SparseDisk disk(64 * kMiB);
  BootDisk table;
  table.label = LabelType::kDos;
  table.disk_id = "0x0badcafe";
  table.partitions = {Part(1, 63, 39863, "0x07")};
  disk.Write(63 * 512, test::NtfsBootSectorBytes(63, 39856));
  disk.Write((63 + 39856) * 512, test::NtfsBootSectorBytes(63, 39856));
  disk.Write((63 + 39862) * 512, test::NtfsBootSectorBytes(63, 39856));
  const std::vector<PartitionMove> moves = {{1, 63, 2048, 39863, 39863}};
  Result<BootReport> r = FindBootRecords(disk, table, moves);
  ASSERT_TRUE(r) << r.error().message;
  const BootFinding* ntfs = FindKind(*r, BootRecordKind::kNtfsBootSector, 1);
  ASSERT_NE(ntfs, nullptr) << Dump(*r);
  EXPECT_EQ(ntfs->verdict, BootVerdict::kUpdate) << Dump(*r);
  ASSERT_EQ(ntfs->edits.size(), 3u) << Dump(*r);
  MoveAndApply(disk, table, moves, *r);
  for (uint64_t at : {0, 39856, 39862}) {
    EXPECT_EQ(ParseNtfsBootSector(ReadAt(disk, (2048 + at) * 512, 512))->hidden_sectors, 2048u)
        << "sector " << at;
  }
  // A last sector that is not a copy of the boot sector is data: never written.
  SparseDisk other(64 * kMiB);
  other.Write(63 * 512, test::NtfsBootSectorBytes(63, 39856));
  other.Write((63 + 39856) * 512, test::NtfsBootSectorBytes(63, 39856));
  other.Write((63 + 39862) * 512, Bytes(512, 0x5a));
  Result<BootReport> r2 = FindBootRecords(other, table, moves);
  ASSERT_TRUE(r2) << r2.error().message;
  const BootFinding* ntfs2 = FindKind(*r2, BootRecordKind::kNtfsBootSector, 1);
  ASSERT_NE(ntfs2, nullptr);
  EXPECT_EQ(ntfs2->edits.size(), 2u) << Dump(*r2);
}

TEST(BootScanTest, AuditFixesStaleRecordsInPlaceAndMovesReportThemOnly) {
  DosDisk d;
  // A clone by another tool: the partitions start elsewhere, the records still say the old
  // starts.
  BootDisk cloned = d.table;
  cloned.partitions[0].start_sector = 63;
  d.disk.Write(63 * 512, test::NtfsBootSectorBytes(2048, 65535));
  d.disk.Write((63 + 65535) * 512, test::NtfsBootSectorBytes(2048, 65535));
  Result<BootReport> audit = FindBootRecords(d.disk, cloned, {});
  ASSERT_TRUE(audit);
  const BootFinding* ntfs = FindKind(*audit, BootRecordKind::kNtfsBootSector, 1);
  ASSERT_NE(ntfs, nullptr);
  EXPECT_EQ(ntfs->verdict, BootVerdict::kUpdate);
  EXPECT_EQ(ntfs->description, "NTFS boot sector: hidden sectors 2048 -> 63, primary and backup");

  // A plan that moves partition 2 only: partition 1's stale record is reported, not edited
  // (the plan does not touch partition 1's bytes).
  const std::vector<PartitionMove> moves = {{2, 65599, 67584, 262144, 262144}};
  Result<BootReport> r = FindBootRecords(d.disk, cloned, moves);
  ASSERT_TRUE(r);
  ntfs = FindKind(*r, BootRecordKind::kNtfsBootSector, 1);
  ASSERT_NE(ntfs, nullptr);
  EXPECT_EQ(ntfs->verdict, BootVerdict::kNothingToDo);
  EXPECT_NE(ntfs->description.find("stale"), std::string::npos) << ntfs->description;
  EXPECT_TRUE(r->EditsFor(1).empty());
  EXPECT_EQ(r->EditsFor(2).size(), 2u);
}

TEST(BootScanTest, StartBeyondThirtyTwoBitsIsZeroForDataVolumesAndRefusedForBootableOnes) {
  SparseDisk disk((uint64_t{1} << 33) * 512);
  BootDisk table;
  table.label = LabelType::kGpt;
  table.disk_id = "01234567-89AB-CDEF-0123-456789ABCDEF";
  const uint64_t start = 2048;
  table.partitions = {Part(1, start, 65536, "EBD0A0A2-B9E5-4433-87C0-68B6B72699C7")};
  disk.Write(start * 512, test::NtfsBootSectorBytes(2048, 65535));
  disk.Write((start + 65535) * 512, test::NtfsBootSectorBytes(2048, 65535));
  const uint64_t far = (uint64_t{1} << 32) + 2048;
  const std::vector<PartitionMove> moves = {{1, start, far, 65536, 65536}};
  Result<BootReport> r = FindBootRecords(disk, table, moves);
  ASSERT_TRUE(r);
  const BootFinding* ntfs = FindKind(*r, BootRecordKind::kNtfsBootSector, 1);
  ASSERT_NE(ntfs, nullptr);
  EXPECT_EQ(ntfs->verdict, BootVerdict::kUpdate);
  EXPECT_EQ(ntfs->description, "NTFS boot sector: hidden sectors 2048 -> 0, primary and backup");
  EXPECT_NE(ntfs->reason.find("does not fit 32 bits"), std::string::npos);

  table.partitions[0].bootable = true;
  r = FindBootRecords(disk, table, moves);
  ASSERT_TRUE(r);
  ntfs = FindKind(*r, BootRecordKind::kNtfsBootSector, 1);
  EXPECT_EQ(ntfs->verdict, BootVerdict::kRefuse);
  EXPECT_TRUE(r->refused());
  EXPECT_NE(r->RefusalReasons()[0].find("bootable"), std::string::npos);
}

TEST(BootScanTest, SyslinuxVbrOnAnExtFilesystemAndExfatWithoutOffset) {
  SparseDisk disk(64 * kMiB);
  BootDisk table;
  table.label = LabelType::kDos;
  table.partitions = {Part(1, 63, 40000, "0x83", true), Part(2, 40063, 40000, "0x07")};
  Bytes vbr(512, 0);
  vbr[0] = 0xEB;
  vbr[1] = 0x58;
  vbr[2] = 0x90;
  test::PutText(vbr, 3, "EXTLINUX");
  test::PutLe(vbr, 0x1C, 63, 4);
  test::Sign(vbr);
  disk.Write(63 * 512, vbr);
  disk.Write(40063 * 512, test::ExfatBootRegionBytes(0, 40000));
  const std::vector<PartitionMove> moves = {{1, 63, 2048, 40000, 38015},
                                            {2, 40063, 40960, 40000, 39040}};
  Result<BootReport> r = FindBootRecords(disk, table, moves);
  ASSERT_TRUE(r);
  const BootFinding* sys = FindKind(*r, BootRecordKind::kSyslinuxVbr, 1);
  ASSERT_NE(sys, nullptr) << Dump(*r);
  EXPECT_EQ(sys->description, "EXTLINUX volume boot record: hidden sectors 63 -> 2048");
  const BootFinding* exfat = FindKind(*r, BootRecordKind::kExfatBootRegion, 2);
  ASSERT_NE(exfat, nullptr);
  EXPECT_EQ(exfat->verdict, BootVerdict::kNothingToDo);
  EXPECT_NE(exfat->description.find("PartitionOffset 0"), std::string::npos);
}

// GRUB 2 on a DOS disk: boot.img in the MBR, core.img in the embedding area (sectors 1-51).
struct GrubDosDisk {
  SparseDisk disk{64 * kMiB};
  BootDisk table;
  GrubDosDisk() {
    table.label = LabelType::kDos;
    table.disk_id = "0x11223344";
    table.partitions = {Part(1, 63, 40000, "0x83", true), Part(2, 40063, 40000, "0x83")};
    disk.Write(0, test::GrubBootImageBytes(1));
    disk.Write(512, test::GrubDiskbootBytes({{2, 50}}));
  }
};

TEST(BootScanTest, GrubInTheEmbeddingAreaIsNeverWritten) {
  GrubDosDisk d;
  const std::vector<PartitionMove> moves = {{1, 63, 2048, 40000, 38015}};
  Result<BootReport> r = FindBootRecords(d.disk, d.table, moves);
  ASSERT_TRUE(r);
  const BootFinding* grub = FindKind(*r, BootRecordKind::kGrubBootImage, 0);
  ASSERT_NE(grub, nullptr) << Dump(*r);
  EXPECT_EQ(grub->verdict, BootVerdict::kNothingToDo);
  EXPECT_EQ(grub->description,
            "GRUB 2 boot.img in the MBR: core.img at sectors 1, 2-51 (the DOS "
            "embedding area, outside every partition): nothing to do");
  EXPECT_TRUE(r->Edits().empty());
}

TEST(BootScanTest, APartitionMovedOntoCoreImageIsRefused) {
  GrubDosDisk d;
  const std::vector<PartitionMove> moves = {{1, 63, 40, 40000, 40000}};
  Result<BootReport> r = FindBootRecords(d.disk, d.table, moves);
  ASSERT_TRUE(r);
  ASSERT_TRUE(r->refused());
  EXPECT_EQ(r->RefusalReasons()[0],
            "partition 1's new place covers GRUB's core.img (sectors 1, "
            "2-51, the DOS embedding area, outside every partition): the "
            "disk would not boot");
}

TEST(BootScanTest, BootImagePointingNowhereIsLeftAlone) {
  GrubDosDisk d;
  d.disk.Write(512, Bytes(512, 0));
  Result<BootReport> r =
      FindBootRecords(d.disk, d.table, std::vector<PartitionMove>{{1, 63, 2048, 40000, 38015}});
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->refused());
  EXPECT_NE(
      FindKind(*r, BootRecordKind::kGrubBootImage, 0)->description.find("holds no GRUB core.img"),
      std::string::npos);
}

// GRUB 2 on GPT: core.img in the BIOS boot partition at 34.
struct GrubGptDisk {
  SparseDisk disk{64 * kMiB};
  BootDisk table;
  GrubGptDisk() {
    table.label = LabelType::kGpt;
    table.disk_id = "01234567-89AB-CDEF-0123-456789ABCDEF";
    table.partitions = {Part(1, 34, 2014, std::string(kBiosBootPartitionType)),
                        Part(2, 2081, 60000, "0FC63DAF-8483-4772-8E79-3D69D8477DE4")};
    disk.Write(0, test::GrubBootImageBytes(34));
    disk.Write(34 * 512, test::GrubDiskbootBytes({{35, 52}}));
  }
};

TEST(BootScanTest, BiosBootPartitionStaysAndSaysWhy) {
  GrubGptDisk d;
  Result<BootReport> r =
      FindBootRecords(d.disk, d.table, std::vector<PartitionMove>{{2, 2081, 4096, 60000, 58000}});
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->refused());
  EXPECT_TRUE(r->Edits().empty());
  const BootFinding* bios = FindKind(*r, BootRecordKind::kBiosBootPartition, 1);
  ASSERT_NE(bios, nullptr);
  EXPECT_EQ(bios->description,
            "BIOS boot partition: GRUB's core.img is addressed by absolute "
            "sector; nothing to gain from aligning it: left where it is");
  EXPECT_TRUE(IsBiosBootPartition("21686148-6449-6e6f-744e-656564454649"));
}

TEST(BootScanTest, AForcedMoveOfTheBiosBootPartitionShiftsEveryPointer) {
  GrubGptDisk d;
  // Partition 2 first: partition 1's new place is where partition 2 was.
  const std::vector<PartitionMove> moves = {{2, 2081, 4096, 60000, 58000},
                                            {1, 34, 2048, 2014, 2014}};
  Result<BootReport> r = FindBootRecords(d.disk, d.table, moves);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->refused()) << Dump(*r);
  const BootFinding* boot = FindKind(*r, BootRecordKind::kGrubBootImage, 0);
  ASSERT_NE(boot, nullptr);
  EXPECT_EQ(boot->description,
            "GRUB 2 boot.img in the MBR: core.img pointer 34 -> 2048 (BIOS "
            "boot partition 1 moves)");
  const BootFinding* core = FindKind(*r, BootRecordKind::kGrubCoreImage, 1);
  ASSERT_NE(core, nullptr);
  EXPECT_EQ(core->description, "GRUB 2 core.img in BIOS boot partition 1: blocklist 35 -> 2049");
  // The old copy at 34 is wiped by the move (MoveAndApply zeroes the old place): GRUB is
  // reached only through the rewritten pointers.
  MoveAndApply(d.disk, d.table, moves, *r);
  EXPECT_EQ(ParseGrubBootImage(ReadAt(d.disk, 0, 512))->next_sector, 2048u);
  std::optional<GrubDiskboot> diskboot = ParseGrubDiskboot(ReadAt(d.disk, 2048 * 512, 512));
  ASSERT_TRUE(diskboot);
  EXPECT_EQ(diskboot->blocks[0].start_sector, 2049u);
}

TEST(BootScanTest, CoreImageAsAFileRefusesTheMoveUnlessReinstallIsAllowed) {
  SparseDisk disk(64 * kMiB);
  BootDisk table;
  table.label = LabelType::kDos;
  table.partitions = {Part(1, 63, 40000, "0x83", true)};
  // grub-install --force into a filesystem: core.img's sectors inside partition 1.
  disk.Write(0, test::GrubBootImageBytes(5000));
  disk.Write(5000 * 512, test::GrubDiskbootBytes({{5001, 30}, {7000, 20}}));
  const std::vector<PartitionMove> moves = {{1, 63, 2048, 40000, 38015}};
  Result<BootReport> r = FindBootRecords(disk, table, moves);
  ASSERT_TRUE(r);
  ASSERT_TRUE(r->refused());
  EXPECT_NE(r->RefusalReasons()[0].find("--allow-reinstall-bootloader"), std::string::npos);
  EXPECT_NE(r->RefusalReasons()[0].find("grub-install DISK"), std::string::npos);
  r = FindBootRecords(disk, table, moves, BootScanOptions{true});
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->refused());
  EXPECT_EQ(FindKind(*r, BootRecordKind::kGrubBootImage, 0)->follow_up, "grub-install DISK");
  // On a block device the command names it, as a shell reads it (issue #30: advice is pasted).
  for (const auto& [device, command] :
       {std::pair{"/dev/sdb", "grub-install /dev/sdb"},
        std::pair{"/dev/disk/by-id/usb-My Disk", "grub-install '/dev/disk/by-id/usb-My Disk'"}}) {
    r = FindBootRecords(disk, table, moves, BootScanOptions{true, device});
    ASSERT_TRUE(r);
    EXPECT_EQ(FindKind(*r, BootRecordKind::kGrubBootImage, 0)->follow_up, command);
  }
}

// GRUB chain-loaded from partition 1's first sector (grub-install --force into the partition),
// core.img a file inside it: reinstalling names the partition's node as the kernel names it.
TEST(BootScanTest, CoreImageOfAChainLoadedGrubNamesThePartitionNode) {
  SparseDisk disk(64 * kMiB);
  BootDisk table;
  table.label = LabelType::kDos;
  table.partitions = {Part(1, 63, 40000, "0x83", true)};
  disk.Write(63 * 512, test::GrubBootImageBytes(5000));
  disk.Write(5000 * 512, test::GrubDiskbootBytes({{5001, 30}}));
  const std::vector<PartitionMove> moves = {{1, 63, 2048, 40000, 38015}};
  for (const auto& [device, command] :
       {std::pair{"", "grub-install --force PARTITION"},
        std::pair{"/dev/sdb", "grub-install --force /dev/sdb1"},
        std::pair{"/dev/nvme0n1", "grub-install --force /dev/nvme0n1p1"},
        std::pair{"/dev/loop7", "grub-install --force /dev/loop7p1"}}) {
    Result<BootReport> r = FindBootRecords(disk, table, moves, BootScanOptions{true, device});
    ASSERT_TRUE(r) << r.error().message;
    const BootFinding* f = FindKind(*r, BootRecordKind::kGrubBootImage, 1);
    ASSERT_NE(f, nullptr) << device;
    EXPECT_EQ(f->follow_up, command);
  }
}

TEST(BootScanTest, LdmIsRefusedBsdLabelsMoveWithTheirSlice) {
  SparseDisk disk(64 * kMiB);
  BootDisk table;
  table.label = LabelType::kDos;
  table.disk_id = "0x01020304";
  table.partitions = {Part(1, 63, 40000, "0xa5")};
  disk.Write(64 * 512, test::BsdLabelSectorBytes({{40000, 63}, {20000, 63}, {20000, 20063}}));
  const std::vector<PartitionMove> moves = {{1, 63, 2048, 40000, 40000}};
  Result<BootReport> r = FindBootRecords(disk, table, moves);
  ASSERT_TRUE(r);
  const BootFinding* bsd = FindKind(*r, BootRecordKind::kBsdDisklabel, 1);
  ASSERT_NE(bsd, nullptr) << Dump(*r);
  EXPECT_EQ(bsd->verdict, BootVerdict::kUpdate);
  MoveAndApply(disk, table, moves, *r);
  std::optional<BsdDisklabel> label = ParseBsdDisklabel(ReadAt(disk, 2049 * 512, 512));
  ASSERT_TRUE(label);
  EXPECT_EQ(label->partitions[0].offset_sectors, 2048u);
  EXPECT_EQ(label->partitions[2].offset_sectors, 2048u + 20000);

  SparseDisk ldm_disk(64 * kMiB);
  Bytes privhead(512, 0);
  test::PutText(privhead, 0, "PRIVHEAD");
  ldm_disk.Write(6 * 512, privhead);
  BootDisk ldm = table;
  ldm.partitions = {Part(1, 63, 40000, "0x42")};
  r = FindBootRecords(ldm_disk, ldm, moves);
  ASSERT_TRUE(r);
  ASSERT_TRUE(r->refused());
  EXPECT_NE(r->RefusalReasons()[0].find("dynamic disk (LDM)"), std::string::npos);
  ldm.partitions = {Part(1, 63, 40000, "0x07")};
  r = FindBootRecords(ldm_disk, ldm, moves);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->refused()) << "PRIVHEAD at sector 6 alone";
}

TEST(BootScanTest, InconsistentInputsAreErrors) {
  DosDisk d;
  EXPECT_FALSE(FindBootRecords(d.disk, d.table, std::vector<PartitionMove>{{9, 63, 2048, 10, 10}}));
  EXPECT_FALSE(FindBootRecords(
      d.disk, d.table, std::vector<PartitionMove>{{1, 63, 2048, 10, 10}, {1, 63, 4096, 10, 10}}));
  EXPECT_FALSE(FindBootRecords(d.disk, d.table,
                               std::vector<PartitionMove>{{1, 63, UINT64_MAX - 4, 10, 10}}));
  BootDisk odd = d.table;
  odd.sector_size = 520;
  EXPECT_FALSE(FindBootRecords(d.disk, odd, {}));
}

TEST(BootScanTest, IdentityIsReportedAndChangesAreNamed) {
  DosDisk d;
  Result<BootReport> r = FindBootRecords(d.disk, d.table, {});
  ASSERT_TRUE(r);
  const BootFinding* id = FindKind(*r, BootRecordKind::kDiskIdentity, 0);
  ASSERT_NE(id, nullptr);
  EXPECT_NE(id->description.find("0x0badcafe"), std::string::npos);
  BootDisk after = d.table;
  EXPECT_TRUE(IdentityChanges(d.table, after).empty());
  after.disk_id = "0x00000000";
  EXPECT_EQ(IdentityChanges(d.table, after),
            std::vector<std::string>{"MBR disk signature 0x0badcafe -> 0x00000000 (Windows and "
                                     "boot loaders name the disk by it)"});
  BootDisk gpt;
  gpt.label = LabelType::kGpt;
  gpt.disk_id = "A";
  gpt.partitions = {Part(1, 2048, 10, "X")};
  gpt.partitions[0].uuid = "U1";
  BootDisk gpt_after = gpt;
  gpt_after.partitions[0].uuid = "U2";
  EXPECT_EQ(IdentityChanges(gpt, gpt_after),
            std::vector<std::string>{"partition 1: unique GUID U1 -> U2"});
}

TEST(BootScanTest, PlanAndTableConversions) {
  Plan plan;
  plan.actions = {{1, 63, 65598, 2048, 65535, ActionKind::kMoveData, 0, ""},
                  {2, 65599, 100000, 65599, 100000, ActionKind::kNone, 0, ""},
                  {3, 100001, 200000, 100352, 200000, ActionKind::kTableOnly, 0, ""}};
  EXPECT_EQ(MovesFromPlan(plan), (std::vector<PartitionMove>{{1, 63, 2048, 65536, 63488},
                                                             {3, 100001, 100352, 100000, 99649}}));
  PartitionTable t;
  t.label = LabelType::kGpt;
  t.sector_size = 4096;
  t.disk_id = "abc";
  Partition p;
  p.number = 4;
  p.start_sector = 256;
  p.size_sectors = 100;
  p.type_code = "21686148-6449-6e6f-744e-656564454649";
  p.attributes = "LegacyBIOSBootable";
  t.partitions = {p};
  const BootDisk b = BootDiskFromTable(t);
  EXPECT_EQ(b.sector_size, 4096u);
  ASSERT_EQ(b.partitions.size(), 1u);
  EXPECT_TRUE(b.partitions[0].bootable);
  EXPECT_TRUE(IsBiosBootPartition(b.partitions[0].type_code));
  EXPECT_EQ(ToString(BootVerdict::kRefuse), "refuse");
  EXPECT_EQ(ToString(BootRecordKind::kExfatBootRegion), "exfat-boot-region");
}

}  // namespace
}  // namespace partalign
