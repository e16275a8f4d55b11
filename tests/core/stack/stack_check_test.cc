// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/stack/stack_check.h"

#include <gtest/gtest.h>

#include "support/test_topology.h"

namespace partalign {
namespace {

constexpr ToolVersion kLvm2_03_16{2, 3, 16, 3};

Topology T(uint64_t phys, uint64_t min_io, uint64_t opt_io, uint64_t offset = 0) {
  return test::MakeTopology(512, phys, min_io, opt_io, offset, TopologyOrigin::kAssumed);
}

StackLayer Pv(int depth, uint64_t data, uint64_t pe_start, uint64_t extent = 4u << 20) {
  StackLayer l = MakeLayer(LayerKind::kLvmPv, "LVM2 PV (VG vg0)", depth, data, pe_start);
  l.geometry.extent_size_bytes = extent;
  return l;
}

StackLayer Segment(int depth, uint64_t data, uint64_t in_pv, uint64_t stripe, uint64_t count) {
  StackLayer l = MakeLayer(LayerKind::kLvmSegment, "LV vg0/data segment 1", depth, data, in_pv);
  if (count > 1) {
    l.geometry.stripe_unit_bytes = stripe;
    l.geometry.stripe_count = count;
    l.geometry.stripe_width_bytes = stripe * count;
  }
  return l;
}

StackLayer Fs(int depth, uint64_t data, uint64_t su, uint64_t sw) {
  StackLayer l = MakeLayer(LayerKind::kFilesystem, "ext4", depth, data, 0);
  l.geometry.block_size_bytes = 4096;
  if (su != 0) {
    l.geometry.stripe_unit_bytes = su;
    l.geometry.stripe_width_bytes = sw;
    l.geometry.stripe_count = sw / su;
  }
  return l;
}

std::string AllReasons(const StackLayer& l) { return testing::PrintToString(l.reasons); }

// The case: a partition at 1 MiB behind the JMicron bridge holding a PV that pvcreate
// put at the bogus optimal I/O size, with an 8 KiB-striped LV in it.
TEST(StackCheckTest, FlagsThePvTheBridgeMisplaced) {
  const Topology bridge = T(4096, 4096, 33553920);
  const uint64_t part = 1048576, pe = 33553920, data = part + pe;  // 34602496
  StackWalk walk;
  walk.layers = {Pv(0, data, pe), Segment(1, data, 0, 8192, 2)};
  CheckStack(&walk, bridge, part, {kDefaultGrainBytes, kLvm2_03_16});
  const StackLayer& pv = walk.layers[0];
  EXPECT_FALSE(pv.aligned);
  EXPECT_FALSE(walk.aligned());
  EXPECT_FALSE(pv.Check("four_kib")->ok);
  EXPECT_FALSE(pv.Check("physical_sector")->ok);
  EXPECT_FALSE(pv.Check("minimum_io")->ok);
  EXPECT_FALSE(pv.Check("optimal_io")->applicable);  // 33553920 is not a sane stripe
  EXPECT_EQ(pv.Check("four_kib")->detail, "data at 34602496 bytes, 34602496 % 4096 = 3584");
  ASSERT_FALSE(pv.reasons.empty());
  EXPECT_EQ(pv.reasons[0],
            "LVM2 PV (VG vg0) data starts at byte 34602496 = 1048576 + 33553920, 3584 bytes past "
            "a 4 KiB boundary: every 8 KiB stripe unit spans 3 4096-byte blocks instead of 2");
  EXPECT_NE(AllReasons(pv).find("pe_start 33553920 is what pvcreate (lvm2 2.03.16) chooses on "
                                "this topology"),
            std::string::npos)
      << AllReasons(pv);
  // The segment inherits the offset and is flagged too; its 8 KiB stripes are a risk.
  const StackLayer& seg = walk.layers[1];
  EXPECT_FALSE(seg.aligned);
  EXPECT_FALSE(seg.Check("stripe_unit")->ok);
  EXPECT_FALSE(seg.Check("stripe_unit")->required);
  EXPECT_NE(AllReasons(seg).find("(risk)"), std::string::npos);
  EXPECT_NE(AllReasons(seg).find("starts 0 bytes into LVM2 PV (VG vg0), whose data is "
                                 "misaligned: it inherits that offset"),
            std::string::npos)
      << AllReasons(seg);
  EXPECT_EQ(AllReasons(seg).find("bytes past a 4 KiB boundary"), std::string::npos);
}

TEST(StackCheckTest, TheDefaultPvcreateStackPasses) {
  const Topology bridge = T(4096, 4096, 33553920);
  StackWalk walk;
  walk.layers = {Pv(0, 2u << 20, 1u << 20), Segment(1, 2u << 20, 0, 65536, 2),
                 Fs(2, 2u << 20, 65536, 131072)};
  CheckStack(&walk, bridge, 1u << 20, {kDefaultGrainBytes, kLvm2_03_16});
  EXPECT_TRUE(walk.aligned());
  for (const StackLayer& l : walk.layers) {
    EXPECT_TRUE(l.aligned) << l.name;
    for (const std::string& r : l.reasons) EXPECT_EQ(r.find("(informational)"), 0u) << r;
  }
  EXPECT_TRUE(walk.layers[2].Check("stripe_geometry")->ok);
}

TEST(StackCheckTest, AFilesystemWhoseStripesDoNotMatchTheLvIsInformational) {
  StackWalk walk;
  walk.layers = {Pv(0, 2u << 20, 1u << 20), Segment(1, 2u << 20, 0, 65536, 2),
                 Fs(2, 2u << 20, 8192, 16384)};
  CheckStack(&walk, T(512, 512, 0), 1u << 20);
  const StackLayer& fs = walk.layers[2];
  EXPECT_TRUE(fs.aligned);
  const StackCheck* c = fs.Check("stripe_geometry");
  ASSERT_TRUE(c && c->applicable);
  EXPECT_FALSE(c->ok);
  EXPECT_FALSE(c->required);
  EXPECT_EQ(c->fix, "tune2fs -E stride=16,stripe_width=32");
  EXPECT_NE(AllReasons(fs).find("records stripe unit 8 KiB and width 16 KiB"), std::string::npos)
      << AllReasons(fs);
}

TEST(StackCheckTest, AFilesystemWithoutStripesOnAStripedLvIsTold) {
  StackWalk walk;
  walk.layers = {Pv(0, 2u << 20, 1u << 20), Segment(1, 2u << 20, 0, 65536, 4),
                 Fs(2, 2u << 20, 0, 0)};
  CheckStack(&walk, T(512, 512, 0), 1u << 20);
  const StackCheck* c = walk.layers[2].Check("stripe_geometry");
  EXPECT_FALSE(c->ok);
  EXPECT_NE(c->detail.find("records no stripe geometry"), std::string::npos);
  EXPECT_EQ(c->fix, "tune2fs -E stride=16,stripe_width=64");
}

TEST(StackCheckTest, XfsGetsSuAndSw) {
  StackWalk walk;
  StackLayer xfs = Fs(2, 2u << 20, 0, 0);
  xfs.name = "xfs";
  walk.layers = {Pv(0, 2u << 20, 1u << 20), Segment(1, 2u << 20, 0, 65536, 2), xfs};
  CheckStack(&walk, T(512, 512, 0), 1u << 20);
  EXPECT_EQ(walk.layers[2].Check("stripe_geometry")->fix,
            "mkfs.xfs -d su=65536,sw=2 (or mount -o sunit=128,swidth=256)");
}

TEST(StackCheckTest, APvOnAStripedMdMemberMustStartOnAChunk) {
  StackLayer md = MakeLayer(LayerKind::kMdMember, "MD raid5 member", 0, 2u << 20, 1u << 20);
  md.geometry.stripe_unit_bytes = 65536;
  md.geometry.stripe_count = 2;
  md.geometry.stripe_width_bytes = 131072;
  StackWalk walk;
  // pe_start 1 MiB + 4 KiB: 4 KiB-aligned, but a chunk straddles the PV's extents.
  walk.layers = {md, Pv(1, (2u << 20) + 4096, (1u << 20) + 4096)};
  CheckStack(&walk, T(512, 512, 0), 1u << 20);
  const StackLayer& pv = walk.layers[1];
  EXPECT_TRUE(pv.Check("four_kib")->ok);
  EXPECT_FALSE(pv.Check("layer_below")->ok);
  EXPECT_TRUE(pv.Check("layer_below")->required);
  EXPECT_FALSE(pv.aligned);
  EXPECT_TRUE(walk.layers[0].aligned);
}

TEST(StackCheckTest, OffsetsAreCountedFromTheAlignmentOffset) {
  // 512e disk with LBA 0 at 3584 into a physical block: physical blocks start at 3584 + 4096k.
  const Topology t = T(4096, 4096, 0, 3584);
  StackWalk walk;
  walk.layers = {MakeLayer(LayerKind::kLuks, "LUKS2", 0, 1052160 + (16u << 20), 16u << 20)};
  CheckStack(&walk, t, 1052160);
  EXPECT_TRUE(walk.layers[0].aligned);
  EXPECT_TRUE(StackOffsetAligned(t, 1052160));
  EXPECT_FALSE(StackOffsetAligned(t, 1048576));
}

// Issue 40, item 6: a read-modify-write is claimed only where the physical sector makes one.
TEST(StackCheckTest, AReadModifyWriteIsClaimedOnlyOnLargerPhysicalSectors) {
  // LUKS data 512 bytes past a 4 KiB boundary.
  const uint64_t part = 1u << 20, data = part + (16u << 20) + 512;
  StackWalk small;
  small.layers = {MakeLayer(LayerKind::kLuks, "LUKS2", 0, data, data - part)};
  CheckStack(&small, T(512, 512, 0), part);
  EXPECT_FALSE(small.layers[0].Check("four_kib")->ok);
  const std::string said = AllReasons(small.layers[0]);
  EXPECT_EQ(said.find("(a read-modify-write)"), std::string::npos) << said;
  EXPECT_NE(said.find("512 bytes past a 4 KiB boundary: every 4096-byte block written spans 2 "
                      "4 KiB blocks instead of 1: no read-modify-write on this disk's 512-byte "
                      "physical sectors, one on a disk with 4 KiB physical sectors (512e) or "
                      "flash pages"),
            std::string::npos)
      << said;
  // The same start on 4 KiB physical sectors is one.
  StackWalk large;
  large.layers = {MakeLayer(LayerKind::kLuks, "LUKS2", 0, data, data - part)};
  CheckStack(&large, T(4096, 4096, 0), part);
  EXPECT_NE(AllReasons(large.layers[0])
                .find("every 4096-byte block written spans 2 physical blocks instead of 1 (a "
                      "read-modify-write)"),
            std::string::npos)
      << AllReasons(large.layers[0]);
  // 2 KiB physical sectors, 1 KiB off: 3 of them instead of 2.
  StackWalk mid;
  const uint64_t kib = part + (16u << 20) + 1024;
  mid.layers = {MakeLayer(LayerKind::kLuks, "LUKS2", 0, kib, kib - part)};
  CheckStack(&mid, T(2048, 2048, 0), part);
  EXPECT_NE(AllReasons(mid.layers[0])
                .find("every 4096-byte block written spans 3 physical 2048-byte sectors instead "
                      "of 2 (a read-modify-write)"),
            std::string::npos)
      << AllReasons(mid.layers[0]);
}

TEST(StackCheckTest, TheGrainIsInformational) {
  StackWalk walk;
  walk.layers = {MakeLayer(LayerKind::kLuks, "LUKS1", 0, (1u << 20) + 4040 * 512, 4040 * 512)};
  CheckStack(&walk, T(512, 512, 0), 1u << 20);
  EXPECT_TRUE(walk.layers[0].aligned);
  EXPECT_FALSE(walk.layers[0].Check("grain")->ok);
  EXPECT_NE(AllReasons(walk.layers[0]).find("(informational) LUKS1 data is not on a 1 MiB"),
            std::string::npos);
}

TEST(StackCheckTest, TheRequiredUnitIsTheLcmOfTheDeviceGeometry) {
  EXPECT_EQ(StackRequiredUnit(T(512, 512, 0)), 4096u);
  EXPECT_EQ(StackRequiredUnit(T(4096, 65536, 196608)), 196608u);
  EXPECT_EQ(StackRequiredUnit(T(4096, 4096, 33553920)), 4096u);  // the bogus value is ignored
  EXPECT_EQ(StackRequiredUnit(T(8192, 8192, 0)), 8192u);
}

TEST(StackCheckTest, APvWithAnExplicitDataAlignmentIsNotBlamedOnPvcreate) {
  StackWalk walk;
  walk.layers = {Pv(0, (1u << 20) + 1052160, 1052160)};  // --dataalignmentoffset 3584
  CheckStack(&walk, T(512, 512, 0), 1u << 20, {kDefaultGrainBytes, kLvm2_03_16});
  EXPECT_FALSE(walk.layers[0].aligned);
  EXPECT_NE(AllReasons(walk.layers[0])
                .find("is not what pvcreate (lvm2 2.03.16) chooses on this "
                      "topology (1048576)"),
            std::string::npos)
      << AllReasons(walk.layers[0]);
}

}  // namespace
}  // namespace partalign
