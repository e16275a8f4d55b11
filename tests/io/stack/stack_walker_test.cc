// SPDX-License-Identifier: GPL-3.0-or-later
// The walk over stacks built by the real tools: LVM2 (pvcreate/vgcreate/lvcreate on loop
// devices), mkfs.ext4 and mkfs.xfs with stripe options (checked against dumpe2fs and xfs_db),
// cryptsetup, and MD superblocks from the test helper.
#include "io/stack/stack_walker.h"

#include <gtest/gtest.h>

#include <regex>

#include "io/device/target.h"
#include "support/device_test.h"
#include "support/loop_device.h"
#include "support/md_superblock_writer.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/stack_tools.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::RunOrThrow;

StackWalk WalkImage(const std::string& image, uint64_t offset, uint64_t size,
                    std::optional<std::string_view> type = std::nullopt) {
  Result<Target> t = OpenTarget(image);
  EXPECT_TRUE(t);
  return WalkStack(t->fd.get(), image, offset, size, type);
}

std::string Describe(const StackWalk& w) {
  std::string out;
  for (const StackLayer& l : w.layers) {
    out +=
        std::string(2 * l.depth, ' ') + l.name + " @" + std::to_string(l.data_offset_bytes) + "\n";
  }
  for (const std::string& e : w.errors) out += "error: " + e + "\n";
  return out;
}

uint64_t Field(const std::string& text, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(name + R"(\s*[:=]\s*(\d+))"))) return ~uint64_t{0};
  return std::stoull(m[1]);
}

// A 32 MiB image holding a PV made by the real pvcreate (on a loop device over it): what an
// MD array's data would hold.
std::string ImageWithPv(const test::TempDir& dir) {
  const std::string image = dir.File("array.img");
  test::CreateSparseFile(image, 32 << 20);
  test::LoopDevice loop(image, 512);
  test::RunLvmOrThrow("pvcreate", {"-q", loop.path()}, {loop.path()});
  return image;
}

TEST(StackWalkerTest, Ext4StripeGeometryIsWhatDumpe2fsSays) {
  test::TempDir dir;
  const std::string image = dir.File("ext4.img");
  test::CreateSparseFile(image, 64 << 20);
  RunOrThrow({"mkfs.ext4", "-F", "-q", "-b", "4096", "-E", "stride=2,stripe_width=4", image});
  StackWalk w = WalkImage(image, 0, 64 << 20);
  ASSERT_EQ(w.layers.size(), 1u) << Describe(w);
  const StackLayer& fs = w.layers[0];
  EXPECT_EQ(fs.kind, LayerKind::kFilesystem);
  EXPECT_EQ(fs.name, "ext4");
  const std::string dump = test::RunCommand({"dumpe2fs", "-h", image}).out;
  const uint64_t block = Field(dump, "Block size");
  EXPECT_EQ(*fs.geometry.block_size_bytes, block);
  EXPECT_EQ(*fs.geometry.stripe_unit_bytes, Field(dump, "RAID stride") * block);
  EXPECT_EQ(*fs.geometry.stripe_width_bytes, Field(dump, "RAID stripe width") * block);
  EXPECT_EQ(*fs.geometry.stripe_unit_bytes, 8192u);
}

TEST(StackWalkerTest, XfsStripeGeometryIsWhatXfsDbSays) {
  test::TempDir dir;
  const std::string image = dir.File("xfs.img");
  // Stripe alignment needs a log of 64 MiB or more: a 1 GiB sparse image.
  test::CreateSparseFile(image, 1ull << 30);
  RunOrThrow({"mkfs.xfs", "-f", "-q", "-d", "su=64k,sw=2", image});
  StackWalk w = WalkImage(image, 0, 1ull << 30);
  ASSERT_EQ(w.layers.size(), 1u) << Describe(w);
  const StackLayer& fs = w.layers[0];
  const std::string sb =
      test::RunCommand({"xfs_db", "-r", "-c", "sb 0", "-c", "print blocksize unit width", image})
          .out;
  const uint64_t block = Field(sb, "blocksize");
  EXPECT_EQ(fs.name, "xfs");
  EXPECT_EQ(*fs.geometry.stripe_unit_bytes, Field(sb, "unit") * block);
  EXPECT_EQ(*fs.geometry.stripe_width_bytes, Field(sb, "width") * block);
  EXPECT_EQ(*fs.geometry.stripe_unit_bytes, 65536u);
  EXPECT_EQ(*fs.geometry.stripe_width_bytes, 131072u);
}

// A PV in a partition, a linear LV and a striped LV in it, ext4 made inside the linear LV at the
// place lvs reports.
TEST(StackWalkerTest, WalksPartitionPvLvAndFilesystem) {
  PARTALIGN_REQUIRE_DEVICES();
  test::PartitionedLoop disk("label: gpt\nstart=2048, size=262144, type=linux\n", 512, 160u << 20);
  const std::string pv = disk.loop().PartitionPath(1);
  const std::vector<std::string> devices{pv};
  const std::string vg = test::UniqueVgName("w");
  test::RunLvmOrThrow("pvcreate", {"-q", pv}, devices);
  test::RunLvmOrThrow("vgcreate", {"-q", "-s", "4m", vg, pv}, devices);
  test::RunLvmOrThrow("lvcreate", {"-q", "-an", "-Zn", "-L", "32m", "-n", "data", vg}, devices);
  const uint64_t part = 2048 * 512, pe_start = 1 << 20;
  RunOrThrow({"mkfs.ext4", "-F", "-q", "-b", "4096", "-E",
              "offset=" + std::to_string(part + pe_start), disk.image(), "32M"});
  RunOrThrow({"sync"});
  StackWalk w = WalkImage(disk.image(), part, 262144ull * 512, "LVM2_member");
  ASSERT_EQ(w.layers.size(), 3u) << Describe(w);
  EXPECT_TRUE(w.errors.empty()) << Describe(w);
  EXPECT_EQ(w.layers[0].kind, LayerKind::kLvmPv);
  EXPECT_EQ(w.layers[0].data_offset_bytes, part + pe_start);
  EXPECT_EQ(w.layers[0].offset_in_parent_bytes, pe_start);
  EXPECT_EQ(*w.layers[0].geometry.extent_size_bytes, 4u << 20);
  EXPECT_EQ(w.layers[1].kind, LayerKind::kLvmSegment);
  EXPECT_EQ(w.layers[1].depth, 1);
  EXPECT_EQ(w.layers[1].name, "LV " + vg + "/data segment 1 (linear)");
  EXPECT_EQ(w.layers[2].kind, LayerKind::kFilesystem);
  EXPECT_EQ(w.layers[2].depth, 2);
  EXPECT_EQ(w.layers[2].data_offset_bytes, part + pe_start);
}

// An MD raid1 member (superblock 1.2, data at 1 MiB) whose array holds a PV: the PV label and
// metadata of a real pvcreate copied to the member's data area.
TEST(StackWalkerTest, WalksIntoAMirrorMember) {
  PARTALIGN_REQUIRE_DEVICES();
  test::TempDir dir;
  const std::string array = ImageWithPv(dir), member = dir.File("member.img");
  test::MdMemberSpec spec;
  spec.level = 1;
  spec.layout = 0;
  spec.chunk_bytes = 0;
  spec.raid_disks = 2;
  spec.member_size_bytes = 34 << 20;
  test::CreateSparseFile(member, spec.member_size_bytes);
  test::WriteBytesAt(member, 4096, test::MakeMdSuperblock(spec));
  test::CopyBytes(array, 0, member, spec.data_offset_bytes, 2 << 20);
  StackWalk w = WalkImage(member, 0, spec.member_size_bytes);
  ASSERT_EQ(w.layers.size(), 2u) << Describe(w);
  EXPECT_EQ(w.layers[0].kind, LayerKind::kMdMember);
  EXPECT_EQ(w.layers[0].data_offset_bytes, 1u << 20);
  EXPECT_EQ(w.layers[1].kind, LayerKind::kLvmPv);
  EXPECT_EQ(w.layers[1].data_offset_bytes, 2u << 20);
  EXPECT_EQ(w.layers[1].depth, 1);
}

// The first member of a raid5 with 64 KiB chunks whose array starts with a PV label: only the
// label is read, and the PV's data start is placed in this member's row of chunks.
TEST(StackWalkerTest, ReadsOnlyTheLabelOnAStripedMember) {
  PARTALIGN_REQUIRE_DEVICES();
  test::TempDir dir;
  const std::string array = ImageWithPv(dir), member = dir.File("member.img");
  test::MdMemberSpec spec;  // raid5, 3 disks, 64 KiB chunks, data at 1 MiB, role 0
  test::CreateSparseFile(member, spec.member_size_bytes);
  test::WriteBytesAt(member, 4096, test::MakeMdSuperblock(spec));
  test::CopyBytes(array, 0, member, spec.data_offset_bytes, 65536);  // the first chunk
  StackWalk w = WalkImage(member, 0, spec.member_size_bytes);
  ASSERT_EQ(w.layers.size(), 2u) << Describe(w);
  EXPECT_EQ(*w.layers[0].geometry.stripe_width_bytes, 131072u);
  EXPECT_EQ(w.layers[1].name, "LVM2 PV on the array");
  // Array byte 1 MiB = stripe row 8 (of 128 KiB): this member's byte 8 x 64 KiB.
  EXPECT_EQ(w.layers[1].data_offset_bytes, (1u << 20) + 8 * 65536);
  EXPECT_EQ(w.layers[1].offset_in_parent_bytes, 1u << 20);
}

TEST(StackWalkerTest, StopsAtLuks) {
  test::TempDir dir;
  const std::string image = dir.File("luks.img");
  test::CreateSparseFile(image, 32 << 20);
  ASSERT_EQ(test::LuksFormat(image, {"--type", "luks1", "--align-payload", "7"}).exit_code, 0);
  StackWalk w = WalkImage(image, 0, 32 << 20);
  ASSERT_EQ(w.layers.size(), 1u) << Describe(w);
  EXPECT_EQ(w.layers[0].name, "LUKS1");
  EXPECT_EQ(w.layers[0].data_offset_bytes, 4046u * 512);
  EXPECT_FALSE(w.layers[0].notes.empty());
}

TEST(StackWalkerTest, AnEmptyTypeCostsNothingAndGarbageIsAnError) {
  test::TempDir dir;
  const std::string image = dir.File("zero.img");
  test::CreateSparseFile(image, 8 << 20);
  EXPECT_TRUE(WalkImage(image, 0, 8 << 20, "").empty());
  // A region claimed to be a PV that holds none.
  StackWalk w = WalkImage(image, 0, 8 << 20, "LVM2_member");
  EXPECT_TRUE(w.layers.empty());
  ASSERT_EQ(w.errors.size(), 1u);
  EXPECT_NE(w.errors[0].find("no LVM2 PV label"), std::string::npos);
}

}  // namespace
}  // namespace partalign
