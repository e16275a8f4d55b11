// SPDX-License-Identifier: GPL-3.0-or-later
// Windows' BCD store and MountedDevices on an MBR disk, as a Windows 7 disk of the 63-sector
// era has them: partition 1 (NTFS, active) holds \Boot\BCD, whose boot manager and OS loader
// name partitions 1 and 2 by the disk signature and their byte offsets; partition 2 (NTFS, C:)
// holds \Windows\System32\config\SYSTEM, whose MountedDevices map \DosDevices\C: the same way.
// The hives are made with libhivex, the volumes with mkntfs, the files put there with ntfs-3g.
// After both partitions move, the values name the new offsets - read back from the volumes
// with ntfscat and hivexget - the volumes check clean, and nothing else in them changed. A
// hive that was not written cleanly is refused before anything is written.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>

#include <fmt/format.h>

#include "partalign/util/byte_order.h"
#include "support/boot_disks.h"
#include "support/boot_sectors.h"
#include "support/device_test.h"
#include "support/hive_builder.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::Bytes;

constexpr uint32_t kSignature = 0x5eed0bcd;
constexpr uint64_t kSystemStart = 63, kSystemSectors = 38000;       // "System Reserved"
constexpr uint64_t kWindowsStart = 38063, kWindowsSectors = 60000;  // C:
constexpr uint64_t kSystemNew = 2048, kWindowsNew = 40960;
constexpr char kObject[] = "Objects\\{fde483f1-1482-11e2-90a1-00505698002c}\\Elements\\";
constexpr char kBootMgr[] = "Objects\\{9dea862c-5cdd-4e70-acc1-f32b344d4795}\\Elements\\";

struct WindowsDisk {
  test::PartitionedLoop disk{
      fmt::format("label: dos\nlabel-id: 0x{:08x}\nstart={}, size={}, type=7, bootable\n"
                  "start={}, size={}, type=7\n",
                  kSignature, kSystemStart, kSystemSectors, kWindowsStart, kWindowsSectors),
      512};
  std::string p1() const { return disk.loop().PartitionPath(1); }
  std::string p2() const { return disk.loop().PartitionPath(2); }

  // `dirty`: the BCD's base block with unequal sequence numbers (Windows died writing it).
  explicit WindowsDisk(bool dirty = false) {
    test::RunOrThrow(
        {"mkntfs", "-q", "-Q", "-p", std::to_string(kSystemStart), "-H", "255", "-S", "63", p1()});
    test::RunOrThrow(
        {"mkntfs", "-q", "-Q", "-p", std::to_string(kWindowsStart), "-H", "255", "-S", "63", p2()});
    const std::string bcd = disk.File("BCD");
    test::MakeHive(bcd, "NewStoreRoot",
                   {{std::string(kBootMgr) + "11000001", "Element", 3,
                     test::BcdPartitionDeviceBytes(kSystemStart * 512, kSignature)},
                    {std::string(kObject) + "11000001", "Element", 3,
                     test::BcdPartitionDeviceBytes(kWindowsStart * 512, kSignature)},
                    {std::string(kObject) + "21000001", "Element", 3,
                     test::BcdPartitionDeviceBytes(kWindowsStart * 512, kSignature)},
                    {std::string(kObject) + "12000004",
                     "Element",
                     1,
                     {'W', 0, 'i', 0, 'n', 0, '7', 0, 0, 0}}});
    if (dirty) {
      Bytes b = test::ReadBytes(bcd, 0, 4096);
      b[8] ^= 1;  // sequence2, and the base block's checksum made right again
      uint32_t sum = 0;
      for (size_t at = 0; at < 0x1FC; at += 4) sum ^= *Le<uint32_t>(b, at);
      test::PutLe(b, 0x1FC, sum, 4);
      test::WriteFile(bcd, std::string(b.begin(), b.end()) + test::ReadFile(bcd).substr(4096));
    }
    const std::string system = disk.File("SYSTEM");
    test::MakeHive(
        system, "ROOT",
        {{"MountedDevices", "\\DosDevices\\C:", 3,
          test::MountedDeviceBytes(kSignature, kWindowsStart * 512)},
         {"MountedDevices", "\\DosDevices\\E:", 3, test::MountedDeviceBytes(0x0badf00d, 1048576)}});
    test::WriteFile(disk.File("hello.txt"), "C: survives\n");
    {
      test::FuseMount m("ntfs-3g", p1(), disk.File("m1"));
      test::RunOrThrow({"mkdir", m.path() + "/Boot"});
      test::RunOrThrow({"cp", bcd, m.path() + "/Boot/BCD"});
    }
    {
      test::FuseMount m("ntfs-3g", p2(), disk.File("m2"));
      test::RunOrThrow({"mkdir", "-p", m.path() + "/Windows/System32/config"});
      test::RunOrThrow({"cp", system, m.path() + "/Windows/System32/config/SYSTEM"});
      test::RunOrThrow({"cp", disk.File("hello.txt"), m.path() + "/hello.txt"});
    }
  }
};

// A REG_BINARY value as hivexget prints it (the raw bytes), from a hive ntfscat reads out of a
// volume.
Bytes HiveValue(const WindowsDisk& w, const std::string& dev, const std::string& file,
                const std::string& key, const std::string& value) {
  const std::string copy = w.disk.File("readback.hive");
  test::CommandResult cat = test::RunCommand({"ntfscat", dev, file});
  EXPECT_EQ(cat.exit_code, 0) << cat.err;
  test::WriteFile(copy, cat.out);
  test::CommandResult get = test::RunCommand({"hivexget", copy, key, value});
  EXPECT_EQ(get.exit_code, 0) << get.err;
  return Bytes(get.out.begin(), get.out.end());
}

TEST(WindowsStoresTest, BcdAndMountedDevicesNameTheNewOffsetsAfterTheMove) {
  PARTALIGN_REQUIRE_DEVICES();
  WindowsDisk w;
  const BootDisk table = test::BootDiskBySfdisk(w.disk.device(), 512);
  EXPECT_EQ(table.disk_id, fmt::format("0x{:08x}", kSignature));
  const std::vector<PartitionMove> moves = {
      {2, kWindowsStart, kWindowsNew, kWindowsSectors, kWindowsSectors},
      {1, kSystemStart, kSystemNew, kSystemSectors, kSystemSectors}};
  const BootReport report = test::ScanBoot(w.disk.device(), table, moves);
  ASSERT_FALSE(report.refused()) << test::DescribeReport(report);
  const std::string text = test::DescribeReport(report);
  EXPECT_NE(text.find(fmt::format("1 windows-bcd update: BCD store \\Boot\\BCD: 3 values name a "
                                  "moved partition: byte offset {} -> {}, {} -> {}",
                                  kSystemStart * 512, kSystemNew * 512, kWindowsStart * 512,
                                  kWindowsNew * 512)),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(fmt::format("2 mounted-devices update: MountedDevices "
                                  "\\Windows\\System32\\config\\SYSTEM: 1 value names a moved "
                                  "partition: byte offset {} -> {}",
                                  kWindowsStart * 512, kWindowsNew * 512)),
            std::string::npos)
      << text;

  const Bytes p1_before =
      test::ReadBytes(w.disk.device(), kSystemStart * 512, kSystemSectors * 512);
  const Bytes p2_before =
      test::ReadBytes(w.disk.device(), kWindowsStart * 512, kWindowsSectors * 512);
  test::MoveSectors(w.disk.device(), 512, kWindowsStart, kWindowsNew, kWindowsSectors);
  test::MoveSectors(w.disk.device(), 512, kSystemStart, kSystemNew, kSystemSectors);
  test::RewritePartition(w.disk.device(), 2, kWindowsNew, kWindowsSectors);
  test::RewritePartition(w.disk.device(), 1, kSystemNew, kSystemSectors);
  w.disk.loop().DeletePartitions();
  test::AddKernelPartitions(w.disk.loop(), 512);
  test::ApplyBootEdits(w.disk.device(), 512, report, {{1, kSystemNew}, {2, kWindowsNew}});

  // Read back with libhivex's own tool from the files ntfs-3g reads.
  for (const char* element : {"11000001", "21000001"}) {
    const Bytes e = HiveValue(w, w.p1(), "/Boot/BCD", std::string(kObject) + element, "Element");
    ASSERT_EQ(e.size(), 0x58u) << element;
    EXPECT_EQ(*Le<uint64_t>(e, 0x20), kWindowsNew * 512) << element;
    EXPECT_EQ(*Le<uint32_t>(e, 0x38), kSignature);
  }
  const Bytes mgr =
      HiveValue(w, w.p1(), "/Boot/BCD", std::string(kBootMgr) + "11000001", "Element");
  EXPECT_EQ(*Le<uint64_t>(mgr, 0x20), kSystemNew * 512);
  const Bytes c =
      HiveValue(w, w.p2(), "/Windows/System32/config/SYSTEM", "MountedDevices", "\\DosDevices\\C:");
  EXPECT_EQ(c, test::MountedDeviceBytes(kSignature, kWindowsNew * 512));
  const Bytes e =
      HiveValue(w, w.p2(), "/Windows/System32/config/SYSTEM", "MountedDevices", "\\DosDevices\\E:");
  EXPECT_EQ(e, test::MountedDeviceBytes(0x0badf00d, 1048576)) << "another disk's value changed";

  for (const std::string& dev : {w.p1(), w.p2()}) {
    test::CommandResult fix = test::RunCommand({"ntfsfix", "-n", dev});
    EXPECT_EQ(fix.exit_code, 0) << fix.out << fix.err;
  }
  EXPECT_EQ(test::RunCommand({"ntfscat", w.p2(), "/hello.txt"}).out, "C: survives\n");
  EXPECT_EQ(*Le<uint32_t>(test::ReadBytes(w.p2(), 0x1C, 4), 0), kWindowsNew);

  // Nothing else changed: each partition differs from its old bytes by its edits only.
  const std::vector<std::pair<uint32_t, const Bytes*>> parts = {{1, &p1_before}, {2, &p2_before}};
  for (const auto& [number, before] : parts) {
    const uint64_t start = number == 1 ? kSystemNew : kWindowsNew;
    const Bytes after = test::ReadBytes(w.disk.device(), start * 512, before->size());
    for (const auto& [first, last] : test::DifferingRuns(*before, after)) {
      bool inside = false;
      for (const ByteEdit& ed : report.EditsFor(number)) {
        inside |= first >= ed.offset_bytes && last < ed.offset_bytes + ed.new_bytes.size();
      }
      EXPECT_TRUE(inside) << "partition " << number << " bytes " << first << ".." << last;
    }
  }
}

TEST(WindowsStoresTest, AHiveNotWrittenCleanlyIsRefusedWithTheRepair) {
  PARTALIGN_REQUIRE_DEVICES();
  WindowsDisk w(/*dirty=*/true);
  const std::string image_before = w.disk.Snapshot("before.img");
  const std::vector<PartitionMove> moves = {
      {2, kWindowsStart, kWindowsNew, kWindowsSectors, kWindowsSectors}};
  const BootReport report =
      test::ScanBoot(w.disk.device(), test::BootDiskBySfdisk(w.disk.device(), 512), moves);
  ASSERT_TRUE(report.refused()) << test::DescribeReport(report);
  const std::vector<std::string> why = report.RefusalReasons();
  ASSERT_EQ(why.size(), 1u);
  EXPECT_NE(why[0].find("BCD store \\Boot\\BCD in partition 1: the hive was not written cleanly"),
            std::string::npos)
      << why[0];
  EXPECT_NE(why[0].find("bcdboot C:\\Windows"), std::string::npos) << why[0];
  EXPECT_EQ(test::CmpFiles(image_before, w.disk.Snapshot("after.img")), "");
}

// The same disk through partalign's own plan and apply: the BCD store and MountedDevices name
// the partitions' new offsets afterwards (read back with hivexget from the volumes), or apply
// refused before writing.
TEST(WindowsStoresTest, ApplyUpdatesTheBcdAndMountedDevicesWithTheMoves) {
  PARTALIGN_REQUIRE_DEVICES();
  WindowsDisk w;
  const std::map<std::string, std::string> env = {{"PARTALIGN_STATE_DIR", w.disk.File("state")}};
  const test::CommandResult planned =
      test::RunPartalign({"plan", "-o", w.disk.File("plan.json"), w.disk.device()}, "", env);
  ASSERT_EQ(planned.exit_code, 0) << planned.out << planned.err;
  EXPECT_NE(planned.out.find("BCD store \\Boot\\BCD"), std::string::npos) << planned.out;
  const test::CommandResult applied =
      test::RunPartalign({"apply", "--yes", "--backup-dir", w.disk.File("backups"), "--journal-dir",
                          w.disk.File("journals"), w.disk.File("plan.json")},
                         "", env);
  ASSERT_EQ(applied.exit_code, 0) << applied.out << applied.err;
  const nlohmann::json table = test::SfdiskJson(w.disk.device());
  const uint64_t system = table["partitions"][0]["start"];
  const uint64_t windows = table["partitions"][1]["start"];
  ASSERT_NE(system, kSystemStart) << applied.out;
  EXPECT_EQ(table["id"], fmt::format("0x{:08x}", kSignature)) << "the disk signature is kept";
  EXPECT_EQ(HiveValue(w, w.p1(), "/Boot/BCD", std::string(kBootMgr) + "11000001", "Element"),
            test::BcdPartitionDeviceBytes(system * 512, kSignature));
  EXPECT_EQ(HiveValue(w, w.p1(), "/Boot/BCD", std::string(kObject) + "11000001", "Element"),
            test::BcdPartitionDeviceBytes(windows * 512, kSignature));
  EXPECT_EQ(HiveValue(w, w.p1(), "/Boot/BCD", std::string(kObject) + "21000001", "Element"),
            test::BcdPartitionDeviceBytes(windows * 512, kSignature));
  EXPECT_EQ(
      HiveValue(w, w.p2(), "/Windows/System32/config/SYSTEM", "MountedDevices", "\\DosDevices\\C:"),
      test::MountedDeviceBytes(kSignature, windows * 512));
  for (const std::string& dev : {w.p1(), w.p2()}) {
    const test::CommandResult fix = test::RunCommand({"ntfsfix", "-n", dev});
    EXPECT_EQ(fix.exit_code, 0) << dev << ": " << fix.out << fix.err;
  }
  EXPECT_EQ(test::RunCommand({"ntfscat", w.p2(), "/hello.txt"}).out, "C: survives\n");
}

}  // namespace
}  // namespace partalign
