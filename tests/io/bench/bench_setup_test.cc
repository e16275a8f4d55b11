// SPDX-License-Identifier: GPL-3.0-or-later
// The write and rewrite guards and the signature listing behind them: images made by the real
// tools (mkfs, mkswap, sfdisk) are refused with what they hold, blank images are not; rewrites
// are refused while anything uses the disk or holds its lock.
#include "io/bench/bench_setup.h"

#include <sys/file.h>

#include <gtest/gtest.h>

#include "io/device/blkid_probe.h"
#include "io/device/in_use.h"
#include "support/device_test.h"
#include "support/loop_device.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::RunCommand;

constexpr unsigned long long kImageBytes = 64ull << 20;

class WriteGuardTest : public ::testing::Test {
 protected:
  void SetUp() override { test::CreateSparseFile(image_, kImageBytes); }
  std::vector<BlkidSignature> Signatures() {
    Result<Target> t = OpenTarget(image_);
    EXPECT_TRUE(t);
    Result<std::vector<BlkidSignature>> s = ProbeBlkidSignatures(t->fd.get(), image_, 512);
    EXPECT_TRUE(s) << s.error().message;
    return *s;
  }
  WriteDecision Decide(const std::string& path) {
    Result<WriteDecision> r = DecideWrite(path);
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : WriteDecision{};
  }
  std::optional<std::string> Refusal() { return Decide(image_).refusal; }

  test::TempDir dir_;
  std::string image_ = dir_.File("disk.img");
};

TEST_F(WriteGuardTest, BlankImageHasNoSignatureAndMayBeWrittenWhole) {
  EXPECT_TRUE(Signatures().empty());
  WriteDecision d = Decide(image_);
  EXPECT_FALSE(d.refusal);
  EXPECT_FALSE(d.range);
}

TEST_F(WriteGuardTest, Ext4IsAFilesystemSignature) {
  ASSERT_EQ(RunCommand({"mkfs.ext4", "-q", "-F", image_}).exit_code, 0);
  std::vector<BlkidSignature> s = Signatures();
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(s[0].type, "ext4");
  EXPECT_EQ(s[0].usage, "filesystem");
  EXPECT_EQ(s[0].offset_bytes, 1080u);  // the ext superblock magic: 1024 + 0x38
  std::optional<std::string> why = Refusal();
  ASSERT_TRUE(why);
  EXPECT_EQ(why->rfind("refusing to write to '" + image_ +
                           "': it holds ext4 filesystem at byte 1080; bench --write writes only",
                       0),
            0u)
      << *why;
}

TEST_F(WriteGuardTest, SwapIsRefusedToo) {
  ASSERT_EQ(RunCommand({"mkswap", "-q", image_}).exit_code, 0);
  std::vector<BlkidSignature> s = Signatures();
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(s[0].type, "swap");
  EXPECT_TRUE(Refusal());
}

TEST_F(WriteGuardTest, DiskImageWithATableIsWrittenOnlyInItsLargestFreeRegion) {
  // 1 MiB..11 MiB partition, then free space up to the backup GPT.
  ASSERT_EQ(RunCommand({"sfdisk", "--quiet", image_}, "label: gpt\n,10M\n").exit_code, 0);
  bool gpt = false;
  for (const BlkidSignature& s : Signatures()) {
    gpt |= s.type == "gpt" && s.usage == "partition table";
  }
  EXPECT_TRUE(gpt);
  WriteDecision d = Decide(image_);
  EXPECT_FALSE(d.refusal) << *d.refusal;
  ASSERT_TRUE(d.range);
  EXPECT_GE(d.range->start, 11u << 20);  // after the partition
  // Before the backup GPT entries and header (33 sectors at the end).
  EXPECT_LE(d.range->start + d.range->bytes, kImageBytes - 33 * 512);
  EXPECT_GT(d.range->bytes, 50u << 20);
  EXPECT_NE(d.note.find("gpt partition table"), std::string::npos) << d.note;
  EXPECT_NE(d.note.find("largest unallocated region"), std::string::npos) << d.note;
}

TEST_F(WriteGuardTest, TableWithoutFreeSpaceIsRefused) {
  ASSERT_EQ(RunCommand({"sfdisk", "--quiet", image_}, "label: dos\n,\n").exit_code, 0);
  std::optional<std::string> why = Refusal();
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("holds dos partition table at byte 510 and no unallocated space"),
            std::string::npos)
      << *why;
}

TEST_F(WriteGuardTest, OpenBenchTargetDescribesAnImage) {
  Result<BenchTarget> t = OpenBenchTarget(image_, BenchAccess::kRead);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->info.kind, "image file");
  EXPECT_EQ(t->info.size_bytes, kImageBytes);
  EXPECT_EQ(t->ranges.at(0).start, 0u);
  EXPECT_EQ(t->ranges.at(0).bytes, kImageBytes);
}

TEST_F(WriteGuardTest, MountedLoopDeviceIsInUse) {
  PARTALIGN_REQUIRE_DEVICES();
  test::LoopDevice loop(image_, 512);
  // Held exclusively by another opener (what a mount does): the guard says so.
  ASSERT_EQ(RunCommand({"mkfs.ext4", "-q", "-F", loop.path()}).exit_code, 0);
  test::TempDir mnt;
  ASSERT_EQ(RunCommand({"mount", loop.path(), mnt.path()}).exit_code, 0);
  struct Unmount {
    std::string path;
    ~Unmount() { RunCommand({"umount", path}); }
  } unmount{mnt.path()};
  std::optional<std::string> why = Decide(loop.path()).refusal;
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("it is in use"), std::string::npos) << *why;
}

TEST_F(WriteGuardTest, RewriteIsRefusedWhileAPartitionIsMounted) {
  PARTALIGN_REQUIRE_DEVICES();
  ASSERT_EQ(RunCommand({"sfdisk", "--quiet", image_}, "label: dos\n2048,20480\n").exit_code, 0);
  test::LoopDevice loop(image_, 512);
  ASSERT_EQ(RunCommand({"partx", "-a", loop.path()}).exit_code, 0);
  ASSERT_EQ(RunCommand({"mkfs.ext4", "-q", "-F", loop.PartitionPath(1)}).exit_code, 0);
  EXPECT_FALSE(*RewriteRefusal(loop.path()));
  test::TempDir mnt;
  ASSERT_EQ(RunCommand({"mount", loop.PartitionPath(1), mnt.path()}).exit_code, 0);
  struct Unmount {
    std::string path;
    ~Unmount() { RunCommand({"umount", path}); }
  } unmount{mnt.path()};
  std::optional<std::string> why = *RewriteRefusal(loop.path());
  ASSERT_TRUE(why);
  EXPECT_EQ(
      why->rfind("refusing to rewrite '" + loop.path() + "' while it is in use: partition 1 ('" +
                     loop.PartitionPath(1) + "') is mounted on '",
                 0),
      0u)
      << *why;
  // The exclusive open fails too, as a refusal (IsBusy), not as an I/O error.
  Result<BenchTarget> t = OpenBenchTarget(loop.path(), BenchAccess::kRewrite);
  ASSERT_FALSE(t);
  EXPECT_TRUE(IsBusy(t.error())) << t.error().message;
}

TEST_F(WriteGuardTest, RewriteTakesTheLockThatApplyAndSfdiskTake) {
  Result<Target> holder = OpenTarget(image_);
  ASSERT_TRUE(holder);
  ASSERT_EQ(::flock(holder->fd.get(), LOCK_EX | LOCK_NB), 0);
  Result<BenchTarget> t = OpenBenchTarget(image_, BenchAccess::kRewrite);
  ASSERT_FALSE(t);
  EXPECT_TRUE(IsBusy(t.error())) << t.error().message;
  EXPECT_NE(t.error().message.find("is locked by another program"), std::string::npos);
  // A caller that holds the lock itself (apply --bench after the change) opens without it.
  Result<BenchTarget> held = OpenBenchTarget(image_, BenchAccess::kRewrite, {}, /*held=*/true);
  ASSERT_TRUE(held) << held.error().message;
}

TEST_F(WriteGuardTest, LoopPartitionWithoutSignatureMayBeWrittenItsDiskOnlyOutside) {
  PARTALIGN_REQUIRE_DEVICES();
  ASSERT_EQ(RunCommand({"sfdisk", "--quiet", image_}, "label: dos\n2048,20480\n").exit_code, 0);
  test::LoopDevice loop(image_, 512);
  // partx adds the partition node through BLKPG (the kernel here parses no tables).
  ASSERT_EQ(RunCommand({"partx", "-a", loop.path()}).exit_code, 0);
  WriteDecision part = Decide(loop.PartitionPath(1));
  EXPECT_FALSE(part.refusal) << *part.refusal;
  EXPECT_FALSE(part.range);
  Result<BenchTarget> t = OpenBenchTarget(loop.PartitionPath(1), BenchAccess::kRead);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->info.kind, "partition");
  EXPECT_EQ(t->info.size_bytes, 20480u * 512);
  WriteDecision disk = Decide(loop.path());
  EXPECT_FALSE(disk.refusal) << *disk.refusal;
  ASSERT_TRUE(disk.range);
  EXPECT_EQ(disk.range->start, (2048u + 20480u) * 512);  // right after the partition
  // With a filesystem in the partition, the partition is refused.
  ASSERT_EQ(RunCommand({"mkfs.ext4", "-q", "-F", loop.PartitionPath(1)}).exit_code, 0);
  std::optional<std::string> fs = Decide(loop.PartitionPath(1)).refusal;
  ASSERT_TRUE(fs);
  EXPECT_NE(fs->find("it holds ext4 filesystem"), std::string::npos) << *fs;
}

}  // namespace
}  // namespace partalign
