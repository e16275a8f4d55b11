// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/stack/stack_advice.h"

#include <gtest/gtest.h>

#include "support/test_topology.h"

#include "partalign/stack/stack_check.h"

namespace partalign {
namespace {

Topology T(uint64_t phys, uint64_t min_io, uint64_t opt_io) {
  return test::MakeTopology(512, phys, min_io, opt_io, 0, TopologyOrigin::kAssumed);
}

StackLayer Layer(LayerKind kind, std::string name, int depth, uint64_t data, uint64_t in_parent) {
  StackLayer l = MakeLayer(kind, std::move(name), depth, data, in_parent);
  if (kind == LayerKind::kLvmPv) l.properties = {{"vg", "vg0"}};
  return l;
}

TEST(StackAdviceTest, APvOffInsideThePartitionNeedsANewPv) {
  const Topology t = T(4096, 4096, 0);
  StackWalk walk;
  walk.layers = {Layer(LayerKind::kLvmPv, "LVM2 PV (VG vg0)", 0, (1u << 20) + 1052160, 1052160),
                 Layer(LayerKind::kFilesystem, "ext4", 1, (1u << 20) + 1052160, 0)};
  CheckStack(&walk, t, 1u << 20);
  std::vector<StackAdvice> advice = AdviseStack(walk, t, 1, 1u << 20, std::nullopt, 1u << 20);
  ASSERT_EQ(advice.size(), 1u);  // the filesystem above inherits the PV's offset: no advice
  EXPECT_FALSE(advice[0].fixed_by_plan);
  EXPECT_NE(advice[0].text.find("no partition start fixes it"), std::string::npos);
  EXPECT_NE(advice[0].text.find("1052160 bytes into the partition, 3584 bytes past"),
            std::string::npos)
      << advice[0].text;
  EXPECT_NE(advice[0].command.find("pvcreate --dataalignment 1m DEV"), std::string::npos);
  EXPECT_NE(advice[0].command.find("vgreduce vg0 DEV"), std::string::npos);
  std::vector<std::string> lines = StackAdviceLines(advice);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("partition 1: LVM2 PV (VG vg0): no partition start", 0), 0u);
}

TEST(StackAdviceTest, ALayerOfAMisalignedPartitionIsFixedByThePlansMove) {
  const Topology t = T(4096, 4096, 0);
  StackWalk walk;
  walk.layers = {Layer(LayerKind::kLuks, "LUKS2", 0, 63 * 512 + (16u << 20), 16u << 20)};
  CheckStack(&walk, t, 63 * 512);
  ASSERT_FALSE(walk.aligned());
  std::vector<StackAdvice> advice = AdviseStack(walk, t, 2, 63 * 512, 1u << 20, 1u << 20);
  ASSERT_EQ(advice.size(), 1u);
  EXPECT_TRUE(advice[0].fixed_by_plan);
  EXPECT_TRUE(advice[0].command.empty());
  EXPECT_NE(advice[0].text.find("byte 17825792 = 1048576 + 16777216, aligned"), std::string::npos)
      << advice[0].text;
}

TEST(StackAdviceTest, AFilesystemAtTheStartOfAPartitionThePlanCannotMoveIsFixedByAnAlignedStart) {
  // Issue 38: NTFS at +0 of a partition at sector 63 that the plan cannot align. Any aligned
  // start fixes it; re-creating the filesystem does not (it would start at +0 again).
  const Topology t = T(4096, 4096, 0);
  StackWalk walk;
  walk.layers = {Layer(LayerKind::kFilesystem, "ntfs", 0, 63 * 512, 0)};
  CheckStack(&walk, t, 63 * 512);
  ASSERT_FALSE(walk.aligned());
  std::vector<StackAdvice> advice = AdviseStack(walk, t, 1, 63 * 512, std::nullopt, 1u << 20);
  ASSERT_EQ(advice.size(), 1u);
  EXPECT_FALSE(advice[0].fixed_by_plan);
  EXPECT_EQ(advice[0].text.find("no partition start fixes it"), std::string::npos)
      << advice[0].text;
  EXPECT_NE(advice[0].text.find("an aligned partition start fixes it"), std::string::npos)
      << advice[0].text;
  EXPECT_TRUE(advice[0].command.empty()) << advice[0].command;
  // Not "what would make room": a partition the running system uses waits for the next boot.
  EXPECT_NE(advice[0].text.find("the next boot for a partition in use"), std::string::npos)
      << advice[0].text;
}

TEST(StackAdviceTest, LuksAndMdNameTheirOwnCommands) {
  const Topology t = T(4096, 65536, 196608);
  StackWalk walk;
  walk.layers = {Layer(LayerKind::kLuks, "LUKS1", 0, (3u << 20) + 4040 * 512, 4040 * 512)};
  CheckStack(&walk, t, 3u << 20);
  std::vector<StackAdvice> advice = AdviseStack(walk, t, 1, 3u << 20, std::nullopt, 1u << 20);
  ASSERT_EQ(advice.size(), 1u);
  // The offset must be a multiple of lcm(196608, 1 MiB) = 3 MiB: 18 MiB = 36864 sectors.
  EXPECT_NE(advice[0].command.find("--offset 36864"), std::string::npos) << advice[0].command;
  walk.layers = {Layer(LayerKind::kMdMember, "MD raid1 member", 0, (3u << 20) + 4096, 4096)};
  CheckStack(&walk, t, 3u << 20);
  advice = AdviseStack(walk, t, 1, 3u << 20, std::nullopt, 1u << 20);
  ASSERT_EQ(advice.size(), 1u);
  EXPECT_NE(advice[0].command.find("mdadm --grow /dev/mdN --data-offset=3m"), std::string::npos)
      << advice[0].command;
}

TEST(StackAdviceTest, StripeGeometryAdviceIsInformational) {
  StackLayer seg = Layer(LayerKind::kLvmSegment, "LV vg0/data segment 1", 0, 2u << 20, 0);
  seg.geometry.stripe_unit_bytes = 65536;
  seg.geometry.stripe_count = 2;
  seg.geometry.stripe_width_bytes = 131072;
  StackLayer fs = Layer(LayerKind::kFilesystem, "ext4", 1, 2u << 20, 0);
  fs.geometry.block_size_bytes = 4096;
  StackWalk walk;
  walk.layers = {seg, fs};
  const Topology t = T(512, 512, 0);
  CheckStack(&walk, t, 1u << 20);
  std::vector<StackAdvice> advice = AdviseStack(walk, t, 1, 1u << 20, std::nullopt, 1u << 20);
  ASSERT_EQ(advice.size(), 1u);
  EXPECT_TRUE(advice[0].informational);
  EXPECT_EQ(advice[0].command, "tune2fs -E stride=16,stripe_width=32");
}

TEST(StackAdviceTest, AnAlignedStackNeedsNothing) {
  StackWalk walk;
  walk.layers = {Layer(LayerKind::kLvmPv, "LVM2 PV (VG vg0)", 0, 2u << 20, 1u << 20)};
  const Topology t = T(512, 512, 0);
  CheckStack(&walk, t, 1u << 20);
  EXPECT_TRUE(AdviseStack(walk, t, 1, 1u << 20, std::nullopt, 1u << 20).empty());
}

}  // namespace
}  // namespace partalign
