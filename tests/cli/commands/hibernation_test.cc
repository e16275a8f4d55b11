// SPDX-License-Identifier: GPL-3.0-or-later
// Hibernation is a refusal (docs/used-map.md): a swap partition holding a hibernation image
// (each signature the kernel, uswsusp and TuxOnIce write), a swap file holding one inside ext4,
// and an NTFS whose hiberfil.sys is active make apply (its dry run too), move and translate
// exit 3 with one line that says what to do, the disk byte-identical afterwards; probe, audit
// and plan say it per partition, and plan still plans. Without a sleeping system the same
// commands go ahead (each test checks last), so the refusal is the hibernation's.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/apply_layouts.h"
#include "support/device_test.h"
#include "support/moved_disk.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CmpFiles;
using test::CommandResult;
using test::PartitionedLoop;
using test::RunCommand;
using test::RunOrThrow;
using test::RunPartalign;

constexpr int kRefused = 3;
constexpr const char* kLinuxAdvice = "resume the hibernated system and shut it down fully";
constexpr const char* kWindowsAdvice =
    "for Windows, turn Fast Startup off or shut down while holding Shift";

// Writes `bytes` at `offset` of `path` (a partition node or a file).
void Patch(const std::string& path, uint64_t offset, const std::string& bytes) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f) << path;
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(f.flush()) << path;
}

// A swap area made by mkswap with `page`-byte pages whose signature a hibernating kernel then
// replaced with `magic` (at the end of the first page; TuxOnIce's at byte 0).
void HibernateSwap(const std::string& node, uint64_t page, const std::string& magic,
                   bool tuxonice = false) {
  RunOrThrow({"mkswap", "-p", std::to_string(page), node});
  Patch(node, tuxonice ? 0 : page - 10, magic);
}

std::string BlkidType(const std::string& node) {
  return RunCommand({"blkid", "-p", "-o", "value", "-s", "TYPE", node}).out;
}

// The lines of `text` that contain `needle`.
size_t LinesWith(const std::string& text, const std::string& needle) {
  size_t n = 0;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (text.substr(at, end - at).find(needle) != std::string::npos) ++n;
    at = end + 1;
  }
  return n;
}

// A refusal: exit 3, one line naming what was found and what to do, nothing written.
void ExpectRefused(const CommandResult& r, const std::string& found, const std::string& advice) {
  EXPECT_EQ(r.exit_code, kRefused) << r.out << r.err;
  EXPECT_EQ(LinesWith(r.err, "hibernated system"), 1u) << r.err;
  EXPECT_EQ(LinesWith(r.err, found), 1u) << "expected: " << found << "\n" << r.err;
  EXPECT_EQ(LinesWith(r.err, advice), 1u) << r.err;
  EXPECT_NE(r.err.find("nothing was written"), std::string::npos) << r.err;
}

// gpt_512: partitions 1 (sector 63) and 2 (sector 40000) are misaligned, 3 is aligned.
struct HibernatedDisk {
  PartitionedLoop disk{test::ApplyLayoutNamed("gpt_512").script, 512};
  std::string plan_file = disk.File("plan.json");
  std::string backups = disk.File("backups");
  std::string Node(int n) const { return disk.loop().PartitionPath(n); }
  CommandResult Plan() const { return RunPartalign({"plan", disk.device(), "-o", plan_file}); }
  CommandResult Apply(bool dry_run) const {
    return RunPartalign({"apply", dry_run ? "--dry-run" : "--yes", "--backup-dir", backups,
                         "--journal-dir", disk.File("journals"), plan_file});
  }
  // partalign move of partition 2 (sector 40000, 20480 sectors) up to sector 40960.
  CommandResult MovePartition2() const {
    return RunPartalign({"move", disk.device(), "--from", std::to_string(40000 * 512), "--to",
                         std::to_string(40960 * 512), "--length", std::to_string(20480 * 512),
                         "--journal", disk.File("move.partalign-journal"), "--yes"});
  }
};

TEST(HibernationRefusalTest, HibernatedSwapPartitionIsRefusedByEveryWriteAndSaidByEveryReader) {
  PARTALIGN_REQUIRE_DEVICES();
  HibernatedDisk d;
  HibernateSwap(d.Node(2), 4096, std::string("S1SUSPEND\0", 10));
  // What the issue saw: libblkid calls it swsuspend, not swap.
  ASSERT_EQ(BlkidType(d.Node(2)), "swsuspend\n");

  // plan still plans, and says apply will refuse.
  CommandResult plan = d.Plan();
  ASSERT_EQ(plan.exit_code, 0) << plan.out << plan.err;
  EXPECT_EQ(LinesWith(plan.out,
                      "partition 2 holds a hibernated system (a hibernation image "
                      "(S1SUSPEND) in its swap area): " +
                          std::string(kLinuxAdvice)),
            1u)
      << plan.out;
  EXPECT_NE(plan.out.find("apply, move and translate refuse"), std::string::npos);
  CommandResult json = RunPartalign({"plan", d.disk.device(), "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  ASSERT_TRUE(doc.contains("sleeping_systems")) << json.out;
  ASSERT_EQ(doc["sleeping_systems"].size(), 1u) << json.out;
  EXPECT_EQ(doc["sleeping_systems"][0]["partition"], 2);
  EXPECT_EQ(doc["sleeping_systems"][0]["system"], "linux");
  EXPECT_EQ(doc["sleeping_systems"][0]["advice"], kLinuxAdvice);

  const std::string before = d.disk.Snapshot("before.img");
  const std::string found = "partition 2: a hibernation image (S1SUSPEND) in its swap area";
  ExpectRefused(d.Apply(/*dry_run=*/true), found, kLinuxAdvice);
  ExpectRefused(d.Apply(/*dry_run=*/false), found, kLinuxAdvice);
  ExpectRefused(d.MovePartition2(), found, kLinuxAdvice);
  EXPECT_EQ(CmpFiles(d.disk.image(), before), "");

  for (const std::vector<std::string>& reader :
       {std::vector<std::string>{"probe", d.disk.device()},
        std::vector<std::string>{"audit", d.disk.device()}}) {
    CommandResult r = RunPartalign(reader);
    EXPECT_EQ(LinesWith(r.out, "partition 2 holds a hibernated system"), 1u) << reader[0] << ":\n"
                                                                             << r.out << r.err;
    CommandResult j = RunPartalign({reader[0], d.disk.device(), "--json"});
    const nlohmann::json rj = nlohmann::json::parse(j.out, nullptr, false);
    ASSERT_TRUE(rj.is_object()) << reader[0] << ": " << j.out << j.err;
    ASSERT_TRUE(rj.contains("sleeping_systems")) << reader[0] << ": " << j.out;
    EXPECT_EQ(rj["sleeping_systems"][0]["partition"], 2) << reader[0] << ": " << j.out;
  }
  const std::string page = d.disk.File("report.md");
  CommandResult report =
      RunPartalign({"report", d.disk.device(), "-o", page, "--format", "markdown"});
  EXPECT_EQ(report.exit_code, 0) << report.out << report.err;
  EXPECT_EQ(LinesWith(test::ReadFile(page), "partition 2 holds a hibernated system"), 1u);
  EXPECT_EQ(CmpFiles(d.disk.image(), before), "");

  // Resumed and shut down (the kernel writes the swap signature back): the plan applies.
  RunOrThrow({"mkswap", d.Node(2)});
  ASSERT_EQ(d.Plan().exit_code, 0);
  CommandResult applied = d.Apply(/*dry_run=*/false);
  EXPECT_EQ(applied.exit_code, 0) << applied.out << applied.err;
}

// An aligned disk, which plan --json plans without probing its partitions (PlanIgnoresContents)
// and probe reads without libblkid's TYPE: the scan reads every head and asks libblkid about
// the swap and the ext4 (HeadMayHoldSleepingSystem), not about the partition holding a line of
// text nor the empty one; each reader names the same sleeping partitions as audit, which probes
// every partition.
TEST(HibernationRefusalTest, AnAlignedDiskPlannedWithoutProbingSaysWhatSleepsOnIt) {
  PARTALIGN_REQUIRE_DEVICES();
  PartitionedLoop disk(
      "label: gpt\n"
      "start=2048, size=4096, name=\"swap\"\n"
      "start=6144, size=16384, name=\"root\"\n"
      "start=22528, size=2048, name=\"text\"\n"
      "start=24576, size=2048, name=\"empty\"\n",
      512);
  HibernateSwap(disk.loop().PartitionPath(1), 4096, std::string("S1SUSPEND\0", 10));
  RunOrThrow({"mkfs.ext4", "-q", "-F", disk.loop().PartitionPath(2)});
  const std::string swap = disk.File("swapfile");
  test::WriteFile(swap, std::string(256 * 1024, '\0'));
  RunOrThrow({"mkswap", swap});
  Patch(swap, 4086, std::string("S1SUSPEND\0", 10));
  RunOrThrow({"debugfs", "-w", "-R", "write " + swap + " /swapfile", disk.loop().PartitionPath(2)});
  Patch(disk.loop().PartitionPath(3), 0, "partalign: a line of text\n");

  CommandResult plan = RunPartalign({"plan", disk.device(), "--json"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const nlohmann::json doc = nlohmann::json::parse(plan.out);
  for (const nlohmann::json& a : doc["actions"]) EXPECT_EQ(a["reason"], "aligned") << a;
  EXPECT_EQ(plan.err, "");
  auto sleeping = [](const nlohmann::json& j) {
    std::vector<std::string> found;
    for (const nlohmann::json& s : j.value("sleeping_systems", nlohmann::json::array())) {
      found.push_back(std::to_string(s["partition"].get<int>()) + ": " +
                      s["found"].get<std::string>());
    }
    return found;
  };
  const std::vector<std::string> expected = {
      "1: a hibernation image (S1SUSPEND) in its swap area",
      "2: a hibernation image (S1SUSPEND) in its swap file /swapfile"};
  EXPECT_EQ(sleeping(doc), expected) << plan.out;
  for (const char* reader : {"probe", "audit"}) {
    CommandResult r = RunPartalign({reader, disk.device(), "--json"});
    const nlohmann::json rj = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_TRUE(rj.is_object()) << reader << ": " << r.out << r.err;
    EXPECT_EQ(sleeping(rj), expected) << reader << ": " << r.out;
  }
}

// Each signature, at the end of each page size Linux uses (4 KiB .. 64 KiB) and TuxOnIce's at
// byte 0: apply --dry-run refuses, naming it.
TEST(HibernationRefusalTest, EverySignatureAtEveryPageSizeIsRefused) {
  PARTALIGN_REQUIRE_DEVICES();
  HibernatedDisk d;
  RunOrThrow({"mkswap", d.Node(2)});
  CommandResult plan = d.Plan();
  ASSERT_EQ(plan.exit_code, 0) << plan.out << plan.err;
  CommandResult plain = d.Apply(/*dry_run=*/true);
  ASSERT_EQ(plain.exit_code, 0) << plain.out << plain.err;
  struct Case {
    uint64_t page;
    std::string magic;
    std::string name;
    bool tuxonice = false;
  };
  const Case cases[] = {{4096, std::string("S1SUSPEND\0", 10), "S1SUSPEND"},
                        {8192, std::string("S2SUSPEND\0", 10), "S2SUSPEND"},
                        {16384, std::string("ULSUSPEND\0", 10), "ULSUSPEND (uswsusp)"},
                        {32768, "LINHIB0001", "LINHIB0001"},
                        {65536, std::string("S1SUSPEND\0", 10), "S1SUSPEND"},
                        {65536, std::string("ULSUSPEND\0", 10), "ULSUSPEND (uswsusp)"},
                        {4096, "\xed\xc3\x02\xe9\x98\x56\xe5\x0c", "TuxOnIce", true}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name + " page " + std::to_string(c.page));
    HibernateSwap(d.Node(2), c.page, c.magic, c.tuxonice);
    const std::string before = d.disk.Snapshot("before.img");
    ExpectRefused(d.Apply(/*dry_run=*/true),
                  "partition 2: a hibernation image (" + c.name + ") in its swap area",
                  kLinuxAdvice);
    EXPECT_EQ(CmpFiles(d.disk.image(), before), "");
  }
}

// A swap file in ext4 holding an image, at a usual name and at a name only /etc/fstab gives.
TEST(HibernationRefusalTest, SwapFileHoldingAnImageInExt4IsRefused) {
  PARTALIGN_REQUIRE_DEVICES();
  HibernatedDisk d;
  RunOrThrow({"mkfs.ext4", "-q", "-F", d.Node(3)});
  const std::string swap = d.disk.File("swapfile");
  {
    std::ofstream f(swap, std::ios::binary);
    f << std::string(256 * 1024, '\0');
  }
  RunOrThrow({"mkswap", swap});
  RunOrThrow({"debugfs", "-w", "-R", "write " + swap + " /swapfile", d.Node(3)});
  CommandResult plan = d.Plan();
  ASSERT_EQ(plan.exit_code, 0) << plan.out << plan.err;
  // A plain swap file is no sleeping system.
  CommandResult plain = d.Apply(/*dry_run=*/true);
  ASSERT_EQ(plain.exit_code, 0) << plain.out << plain.err;

  Patch(swap, 4086, std::string("S1SUSPEND\0", 10));
  RunOrThrow({"debugfs", "-w", "-R", "rm /swapfile", d.Node(3)});
  RunOrThrow({"debugfs", "-w", "-R", "write " + swap + " /swapfile", d.Node(3)});
  std::string before = d.disk.Snapshot("before.img");
  ExpectRefused(d.Apply(/*dry_run=*/true),
                "partition 3: a hibernation image (S1SUSPEND) in its swap file /swapfile",
                kLinuxAdvice);
  EXPECT_EQ(CmpFiles(d.disk.image(), before), "");

  // Moved to a name of the fstab's own.
  RunOrThrow({"debugfs", "-w", "-R", "rm /swapfile", d.Node(3)});
  const std::string fstab = d.disk.File("fstab");
  test::WriteFile(fstab, "UUID=1 / ext4 defaults 0 1\n/data/my.swap none swap sw 0 0\n");
  for (const std::string& cmd :
       std::vector<std::string>{"mkdir /etc", "write " + fstab + " /etc/fstab", "mkdir /data",
                                "write " + swap + " /data/my.swap"}) {
    RunOrThrow({"debugfs", "-w", "-R", cmd, d.Node(3)});
  }
  before = d.disk.Snapshot("before.img");
  CommandResult audit = RunPartalign({"audit", d.disk.device()});
  EXPECT_EQ(LinesWith(audit.out, "in its swap file /data/my.swap"), 1u) << audit.out << audit.err;
  ExpectRefused(d.Apply(/*dry_run=*/true),
                "partition 3: a hibernation image (S1SUSPEND) in its swap file /data/my.swap",
                kLinuxAdvice);
  EXPECT_EQ(CmpFiles(d.disk.image(), before), "");
}

// The byte of $Volume's VOLUME_INFORMATION flags (its dirty bit, 0x0001) in the NTFS volume
// `ntfs` (its bytes from the partition's start): the boot sector's MFT place (or its mirror's,
// which libntfs-3g compares) and record size, MFT record 3, its resident attribute 0x70; 0 when
// not found.
size_t VolumeFlagsOffset(const std::string& ntfs, bool mirror) {
  auto u8 = [&](size_t at) { return static_cast<uint64_t>(static_cast<uint8_t>(ntfs.at(at))); };
  auto le = [&](size_t at, int bytes) {
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | u8(at + i);
    return v;
  };
  const uint64_t cluster = le(0x0B, 2) * u8(0x0D);
  const auto per_record = static_cast<int8_t>(u8(0x40));
  const uint64_t record = per_record < 0 ? uint64_t{1} << -per_record : per_record * cluster;
  const size_t volume = le(mirror ? 0x38 : 0x30, 8) * cluster + 3 * record;
  for (size_t attr = volume + le(volume + 0x14, 2); attr + 0x18 < volume + record;) {
    const uint64_t type = le(attr, 4);
    if (type == 0xFFFFFFFF) break;
    if (type == 0x70) return attr + le(attr + 0x14, 2) + 10;
    const uint64_t length = le(attr + 4, 4);
    if (length == 0) break;
    attr += length;
  }
  return 0;
}

// NTFS: hiberfil.sys starting with HIBR (and the others Windows writes) refuses; zeroed (Windows
// resumed) it does not.
TEST(HibernationRefusalTest, NtfsWithAnActiveHiberfilIsRefused) {
  PARTALIGN_REQUIRE_DEVICES();
  HibernatedDisk d;
  // mkntfs takes the start from HDIO_GETGEO, which a loop device lacks: given.
  RunOrThrow({"mkntfs", "-q", "-Q", "-F", "-p", "63", "-H", "255", "-S", "63", d.Node(1)});
  // An inactive hiberfil.sys (Windows zeroes the signature once it has resumed), with a marker
  // after its first four bytes to find it on the partition: ntfscp refuses to write to a
  // hibernated volume, so the signatures are written there directly.
  const std::string marker = "PARTALIGN-HIBERFIL-MARKER";
  const std::string hiberfil = d.disk.File("hiberfil.sys");
  test::WriteFile(hiberfil,
                  std::string(4, '\0') + marker + std::string(8192 - 4 - marker.size(), '\0'));
  RunOrThrow({"ntfscp", "-f", d.Node(1), hiberfil, "/hiberfil.sys"});
  const size_t at = test::ReadFile(d.Node(1)).find(marker);
  ASSERT_NE(at, std::string::npos);
  CommandResult plan = d.Plan();
  ASSERT_EQ(plan.exit_code, 0) << plan.out << plan.err;
  CommandResult inactive = d.Apply(/*dry_run=*/true);
  ASSERT_EQ(inactive.exit_code, 0) << inactive.out << inactive.err;
  EXPECT_EQ(inactive.err.find("marked dirty"), std::string::npos) << inactive.err;

  // Windows' dirty bit is worth a warning, not a refusal.
  const std::string volume = test::ReadFile(d.Node(1));
  for (bool mirror : {false, true}) {
    const size_t flags = VolumeFlagsOffset(volume, mirror);
    ASSERT_NE(flags, 0u);
    Patch(d.Node(1), flags, "\x01");
  }
  CommandResult dirty = d.Apply(/*dry_run=*/true);
  EXPECT_EQ(dirty.exit_code, 0) << dirty.out << dirty.err;
  EXPECT_EQ(LinesWith(dirty.err, "warning: partition 1: the NTFS volume is marked dirty"), 1u)
      << dirty.err;

  for (const char* magic : {"HIBR", "hibr", "wake", "RSTR"}) {
    SCOPED_TRACE(magic);
    Patch(d.Node(1), at - 4, magic);
    const std::string before = d.disk.Snapshot("before.img");
    const std::string found = "partition 1: its hiberfil.sys starts with " + std::string(magic);
    ExpectRefused(d.Apply(/*dry_run=*/true), found, kWindowsAdvice);
    if (std::string(magic) == "HIBR") {
      ExpectRefused(d.Apply(/*dry_run=*/false), found, kWindowsAdvice);
      ExpectRefused(d.MovePartition2(), found, kWindowsAdvice);
      CommandResult probe = RunPartalign({"probe", d.disk.device()});
      EXPECT_EQ(LinesWith(probe.out, "partition 1 holds a hibernated Windows"), 1u) << probe.out;
      CommandResult planned = d.Plan();
      EXPECT_EQ(planned.exit_code, 0);
      EXPECT_EQ(LinesWith(planned.out, kWindowsAdvice), 1u) << planned.out;
    }
    EXPECT_EQ(CmpFiles(d.disk.image(), before), "");
  }
}

// translate: a table written for 4096-byte sectors on a disk now at 512, with a hibernated swap.
TEST(HibernationRefusalTest, TranslateRefusesAHibernatedDisk) {
  PARTALIGN_REQUIRE_DEVICES();
  test::MovedDisk disk(
      "label: gpt\n"
      "start=256, size=5120, type=0657FD6D-A4AB-43C4-84E5-0933C84B4F4F, name=\"swap\"\n",
      4096);
  HibernateSwap(disk.loop().PartitionPath(1), 4096, std::string("S1SUSPEND\0", 10));
  disk.Reattach(512, /*partitions=*/false);
  const std::string before = disk.Copy("before.img");
  const std::string found = "partition 1: a hibernation image (S1SUSPEND) in its swap area";
  ExpectRefused(RunPartalign({"translate", disk.device(), "--dry-run"}), found, kLinuxAdvice);
  ExpectRefused(
      RunPartalign({"translate", disk.device(), "--yes", "--backup-dir", disk.File("backups")}),
      found, kLinuxAdvice);
  EXPECT_EQ(CmpFiles(disk.image(), before), "");
  // Resumed and shut down: translate goes ahead.
  Patch(disk.image(), 256 * 4096 + 4086, "SWAPSPACE2");
  CommandResult dry = RunPartalign({"translate", disk.device(), "--dry-run"});
  EXPECT_EQ(dry.exit_code, 0) << dry.out << dry.err;
}

}  // namespace
}  // namespace partalign
