// SPDX-License-Identifier: GPL-3.0-or-later
// A disk that booted before a move boots after it (issue #28): GRUB 2 on a DOS disk with /boot
// at 63, GRUB 2 on GPT with a BIOS boot partition and a misaligned /boot, EXTLINUX on a DOS
// disk - each built as an installer leaves it (tests/support/qemu_boot.h), booted in QEMU
// (SeaBIOS, TCG) before; then moved as apply moves data (the bytes copied, the table entry
// rewritten by sfdisk, the boot domain's edits written) and booted again. The loaders print a
// marker from a config file on the moved partition. Where the edits are the point (a BIOS boot
// partition forced to move), the same move without them is shown not to boot.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "partalign/boot/boot_scan.h"
#include "partalign/boot/grub_boot.h"
#include "partalign/util/byte_order.h"
#include "support/boot_disks.h"
#include "support/boot_sectors.h"
#include "support/qemu_boot.h"
#include "support/run_command.h"
#include "support/stack_tools.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::BootLoader;
using test::Bytes;

// A boot that must succeed: the marker, and QEMU stopped by the loader's power-off.
void ExpectBoots(const std::string& image, const test::TempDir& dir, const std::string& marker,
                 const std::string& when) {
  const test::QemuBoot boot = test::BootInQemu(image, dir.path());
  EXPECT_TRUE(test::PrintedMarker(boot, marker))
      << when << ": no marker in " << boot.seconds << " s; serial:\n"
      << boot.serial;
  EXPECT_TRUE(boot.exited) << when << ": QEMU did not stop by itself";
}

const BootFinding* Find(const BootReport& r, BootRecordKind kind, uint32_t partition) {
  for (const BootFinding& f : r.findings) {
    if (f.kind == kind && f.partition == partition) return &f;
  }
  return nullptr;
}

TEST(QemuBootTest, GrubOnDosWithBootAt63BootsAfterBootMovesTo2048) {
  PARTALIGN_REQUIRE_BOOT_TEST(BootLoader::kGrubDos);
  test::TempDir dir;
  const std::string image = dir.File("grub-dos.img");
  test::BootDiskLayout layout{BootLoader::kGrubDos};
  layout.marker = "PARTALIGN-GRUB-DOS";
  const test::BuiltBootDisk built = test::BuildBootDisk(image, layout, dir.path());
  ExpectBoots(image, dir, layout.marker, "before the move");

  const std::vector<PartitionMove> moves = {
      {1, 63, 2048, layout.boot_sectors, layout.boot_sectors}};
  const BootReport report = test::ScanBoot(image, test::BootDiskBySfdisk(image, 512), moves);
  ASSERT_FALSE(report.refused()) << test::DescribeReport(report);
  const BootFinding* grub = Find(report, BootRecordKind::kGrubBootImage, 0);
  ASSERT_NE(grub, nullptr) << test::DescribeReport(report);
  EXPECT_EQ(grub->verdict, BootVerdict::kNothingToDo);
  EXPECT_NE(grub->description.find(fmt::format(
                "core.img at sectors 1, 2-{} (the DOS embedding area", built.core_sectors)),
            std::string::npos)
      << grub->description;

  // The embedding area (sectors 1-62) is never written: the same bytes after the move.
  const Bytes embedding = test::ReadBytes(image, 512, 62 * 512);
  test::MoveSectors(image, 512, 63, 2048, layout.boot_sectors);
  test::RewritePartition(image, 1, 2048, layout.boot_sectors);
  test::ApplyBootEdits(image, 512, report, {{1, 2048}});
  EXPECT_EQ(test::ReadBytes(image, 512, 62 * 512), embedding);
  ExpectBoots(image, dir, layout.marker, "after the move");
}

TEST(QemuBootTest, GrubOnGptLeavesTheBiosBootPartitionAndBootsAfterBootMoves) {
  PARTALIGN_REQUIRE_BOOT_TEST(BootLoader::kGrubGpt);
  test::TempDir dir;
  const std::string image = dir.File("grub-gpt.img");
  test::BootDiskLayout layout{BootLoader::kGrubGpt};
  layout.boot_start = 2081;  // misaligned /boot
  layout.marker = "PARTALIGN-GRUB-GPT";
  test::BuildBootDisk(image, layout, dir.path());
  ExpectBoots(image, dir, layout.marker, "before the move");

  const std::vector<PartitionMove> moves = {
      {2, 2081, 4096, layout.boot_sectors, layout.boot_sectors}};
  const BootReport report = test::ScanBoot(image, test::BootDiskBySfdisk(image, 512), moves);
  ASSERT_FALSE(report.refused()) << test::DescribeReport(report);
  const BootFinding* bios = Find(report, BootRecordKind::kBiosBootPartition, 1);
  ASSERT_NE(bios, nullptr) << test::DescribeReport(report);
  EXPECT_EQ(bios->description, std::string(kBiosBootPartitionReason) + ": left where it is");
  EXPECT_TRUE(report.Edits().empty()) << test::DescribeReport(report);

  test::MoveSectors(image, 512, 2081, 4096, layout.boot_sectors);
  test::RewritePartition(image, 2, 4096, layout.boot_sectors);
  ExpectBoots(image, dir, layout.marker, "after the move");
}

// The case: a BIOS boot partition moved from 34 to 2048 with its contents. The space
// at 34 belongs to no partition any more; a later tool writes there. Without the edits, GRUB
// started only from that stale copy: with it overwritten the disk does not boot. With the
// edits (boot.img's pointer and diskboot's blocklist shifted by 2014) it boots from 2048.
TEST(QemuBootTest, BiosBootPartitionForcedToMoveBootsOnlyWithTheEdits) {
  PARTALIGN_REQUIRE_BOOT_TEST(BootLoader::kGrubGpt);
  test::TempDir dir;
  const std::string image = dir.File("bios-boot.img");
  test::BootDiskLayout layout{BootLoader::kGrubGpt};
  layout.boot_start = 4096;
  layout.marker = "PARTALIGN-BIOS-BOOT";
  const test::BuiltBootDisk built = test::BuildBootDisk(image, layout, dir.path());
  ExpectBoots(image, dir, layout.marker, "before the move");

  const uint64_t size = layout.bios_boot_sectors;
  const std::vector<PartitionMove> moves = {{1, 34, 2048, size, size}};
  const BootReport report = test::ScanBoot(image, test::BootDiskBySfdisk(image, 512), moves);
  ASSERT_FALSE(report.refused()) << test::DescribeReport(report);
  const BootFinding* boot = Find(report, BootRecordKind::kGrubBootImage, 0);
  ASSERT_NE(boot, nullptr) << test::DescribeReport(report);
  EXPECT_EQ(boot->description,
            "GRUB 2 boot.img in the MBR: core.img pointer 34 -> 2048 (BIOS "
            "boot partition 1 moves)");
  const BootFinding* core = Find(report, BootRecordKind::kGrubCoreImage, 1);
  ASSERT_NE(core, nullptr);
  EXPECT_EQ(core->description, "GRUB 2 core.img in BIOS boot partition 1: blocklist 35 -> 2049");

  // The move; the old place is reused by someone else: filled with int 18h (BIOS: boot
  // failed), so that a boot reaching it ends at once instead of running into the timeout.
  test::MoveSectors(image, 512, 34, 2048, size);
  Bytes reused(size * 512);
  for (size_t i = 0; i + 1 < reused.size(); i += 2) {
    reused[i] = 0xCD;
    reused[i + 1] = 0x18;
  }
  test::WriteBytesAt(image, 34 * 512, reused);
  test::RewritePartition(image, 1, 2048, size);
  const std::string without = dir.File("without-edits.img");
  test::RunOrThrow({"cp", "--sparse=always", image, without});

  const test::QemuBoot control = test::BootInQemu(without, dir.path(), 30);
  EXPECT_FALSE(test::PrintedMarker(control, layout.marker)) << "booted without the edits; serial:\n"
                                                            << control.serial;

  test::ApplyBootEdits(image, 512, report, {{1, 2048}});
  EXPECT_EQ(ParseGrubBootImage(test::ReadBytes(image, 0, 512))->next_sector, 2048u);
  std::optional<GrubDiskboot> diskboot = ParseGrubDiskboot(test::ReadBytes(image, 2048 * 512, 512));
  ASSERT_TRUE(diskboot);
  EXPECT_EQ(diskboot->blocks[0].start_sector, 2049u);
  EXPECT_EQ(diskboot->blocks[0].sectors, built.core_sectors - 1);
  ExpectBoots(image, dir, layout.marker, "after the move with the edits");
}

// syslinux 6 takes the partition's start from the MBR's hand-over (the partition entry in
// DS:SI, core/diskboot.inc) when it gets one, and from its boot record's hidden sectors when
// it does not (chain loaders that pass nothing). The record is rewritten either way; this disk
// boots after the move with it, and - syslinux's MBR handing the entry over - without it too.
TEST(QemuBootTest, ExtlinuxOnDosBootsAfterItsPartitionMoves) {
  PARTALIGN_REQUIRE_BOOT_TEST(BootLoader::kExtlinuxDos);
  test::TempDir dir;
  const std::string image = dir.File("extlinux.img");
  test::BootDiskLayout layout{BootLoader::kExtlinuxDos};
  layout.marker = "PARTALIGN-EXTLINUX";
  test::BuildBootDisk(image, layout, dir.path());
  ASSERT_EQ(*Le<uint32_t>(test::ReadBytes(image, 63 * 512 + 0x1C, 4), 0), 63u);
  ExpectBoots(image, dir, layout.marker, "before the move");

  const std::vector<PartitionMove> moves = {
      {1, 63, 2048, layout.boot_sectors, layout.boot_sectors}};
  const BootReport report = test::ScanBoot(image, test::BootDiskBySfdisk(image, 512), moves);
  ASSERT_FALSE(report.refused()) << test::DescribeReport(report);
  const BootFinding* vbr = Find(report, BootRecordKind::kSyslinuxVbr, 1);
  ASSERT_NE(vbr, nullptr) << test::DescribeReport(report);
  EXPECT_EQ(vbr->description, "SYSLINUX volume boot record: hidden sectors 63 -> 2048");

  test::MoveSectors(image, 512, 63, 2048, layout.boot_sectors);
  test::RewritePartition(image, 1, 2048, layout.boot_sectors);
  const std::string without = dir.File("without-edits.img");
  test::RunOrThrow({"cp", "--sparse=always", image, without});
  test::ApplyBootEdits(image, 512, report, {{1, 2048}});
  EXPECT_EQ(*Le<uint32_t>(test::ReadBytes(image, 2048 * 512 + 0x1C, 4), 0), 2048u);
  ExpectBoots(image, dir, layout.marker, "after the move with the edit");
  ExpectBoots(without, dir, layout.marker, "after the move without the edit (MBR hand-over)");
}

}  // namespace
}  // namespace partalign
