// The write guard and the signature listing behind it: images made by the real tools (mkfs,
// mkswap, sfdisk) are refused with what they hold; blank images are not.
#include "io/bench_setup.h"

#include <gtest/gtest.h>

#include "io/blkid_probe.h"
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
  std::optional<std::string> Refusal() {
    Result<std::optional<std::string>> r = WriteRefusal(image_);
    EXPECT_TRUE(r) << r.error().message;
    return *r;
  }

  test::TempDir dir_;
  std::string image_ = dir_.File("disk.img");
};

TEST_F(WriteGuardTest, BlankImageHasNoSignatureAndMayBeWritten) {
  EXPECT_TRUE(Signatures().empty());
  EXPECT_FALSE(Refusal());
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

TEST_F(WriteGuardTest, PartitionTablesAreSignatures) {
  ASSERT_EQ(RunCommand({"sfdisk", "--quiet", image_}, "label: gpt\n,10M\n").exit_code, 0);
  bool gpt = false;
  for (const BlkidSignature& s : Signatures())
    gpt |= s.type == "gpt" && s.usage == "partition table";
  EXPECT_TRUE(gpt);
  std::optional<std::string> why = Refusal();
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("gpt partition table"), std::string::npos) << *why;
}

TEST_F(WriteGuardTest, OpenBenchTargetDescribesAnImage) {
  Result<BenchTarget> t = OpenBenchTarget(image_, /*write=*/false);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->info.kind, "image file");
  EXPECT_EQ(t->info.size_bytes, kImageBytes);
  EXPECT_EQ(t->range.start, 0u);
  EXPECT_EQ(t->range.bytes, kImageBytes);
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
  Result<std::optional<std::string>> r = WriteRefusal(loop.path());
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_TRUE(*r);
  EXPECT_NE((*r)->find("it is in use"), std::string::npos) << **r;
}

TEST_F(WriteGuardTest, LoopPartitionWithoutSignatureMayBeWrittenButItsDiskNot) {
  PARTALIGN_REQUIRE_DEVICES();
  ASSERT_EQ(RunCommand({"sfdisk", "--quiet", image_}, "label: dos\n2048,20480\n").exit_code, 0);
  test::LoopDevice loop(image_, 512);
  // partx adds the partition node through BLKPG (the kernel here parses no tables).
  ASSERT_EQ(RunCommand({"partx", "-a", loop.path()}).exit_code, 0);
  Result<std::optional<std::string>> part = WriteRefusal(loop.PartitionPath(1));
  ASSERT_TRUE(part) << part.error().message;
  EXPECT_FALSE(*part) << **part;
  Result<BenchTarget> t = OpenBenchTarget(loop.PartitionPath(1), /*write=*/false);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->info.kind, "partition");
  EXPECT_EQ(t->info.size_bytes, 20480u * 512);
  Result<std::optional<std::string>> disk = WriteRefusal(loop.path());
  ASSERT_TRUE(disk);
  ASSERT_TRUE(*disk);
  EXPECT_NE((*disk)->find("dos partition table"), std::string::npos) << **disk;
}

}  // namespace
}  // namespace partalign
