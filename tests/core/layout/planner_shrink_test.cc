// SPDX-License-Identifier: GPL-3.0-or-later
// A partition never shrinks in silence (issue 37, item 3; docs/audit-plan.md): bytes past a
// filesystem are data (md 1.0 superblocks, LUKS and LVM metadata, tools' trailers) until they
// are read as zeros. The issue's disk: one partition from sector 63 (DOS) or 34 (GPT) to the
// disk's end, a 40 MiB ext4 in it, data in its last MiB. Moving it to 2048 gives up its last
// 1985 (GPT 2014) sectors: only when they are read and are zeros; otherwise the partition
// cannot be aligned, and the reason says why and what would make room.
#include <gtest/gtest.h>

#include <optional>

#include <fmt/format.h>

#include "partalign/layout/planner.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

constexpr uint64_t kDiskSectors = 131072;  // 64 MiB of 512-byte sectors
constexpr uint64_t kFsBytes = 40 * kMiB;

// The issue's disk: partition 1 from `first` to the last usable sector, a 40 MiB ext4 in it.
PartitionTable IssueDisk(LabelType label) {
  PartitionTable t;
  t.label = label;
  t.sector_size = 512;
  t.disk_size_sectors = kDiskSectors;
  t.first_usable_lba = label == LabelType::kDos ? 2048 : 34;
  t.last_usable_lba = label == LabelType::kDos ? kDiskSectors - 1 : kDiskSectors - 34;
  t.fingerprint = "xxh64:0000000000000001";
  Partition p;
  p.number = 1;
  p.start_sector = label == LabelType::kDos ? 63 : 34;
  p.size_sectors = t.last_usable_lba - p.start_sector + 1;
  p.type_code = label == LabelType::kDos ? "0x83" : "0FC63DAF-8483-4772-8E79-3D69D8477DE4";
  p.contents.proof = ContentProof::kSignature;
  p.contents.fs_type = "ext4";
  p.contents.fs_size_bytes = kFsBytes;
  t.partitions = {p};
  return t;
}

DeviceInfo Device() {
  DeviceInfo d;
  d.topology = {512, 512, 512, 0, 0, kDiskSectors * 512, TopologyOrigin::kKernel};
  d.identity.path = "disk.img";
  return d;
}

// A model of the partition's bytes for the proofs: the first byte past the filesystem that is
// not zero, if any (from the partition's start); records every tail read.
struct Model {
  std::optional<uint64_t> data_past_fs;
  std::vector<TailProof> reads;

  PlanProofs Proofs() {
    PlanProofs proofs;
    proofs.partitions = [](PartitionTable*, const std::vector<uint32_t>&) { return Status{}; };
    proofs.tails = [this](PartitionTable* t, const std::vector<TailProof>& tails) {
      for (const TailProof& tail : tails) {
        reads.push_back(tail);
        PartitionContents& c = t->partitions.front().contents;
        if (data_past_fs && *data_past_fs >= tail.from_bytes) {
          c.tail_data_bytes = data_past_fs;
        } else {
          c.zeros_from_bytes = tail.from_bytes;
        }
      }
      return Status{};
    };
    return proofs;
  }
};

class PlannerShrinkTest : public ::testing::TestWithParam<LabelType> {};

TEST_P(PlannerShrinkTest, DataInTheLastMiBMakesTheMoveImpossibleAndSaysWhy) {
  PartitionTable t = IssueDisk(GetParam());
  const Partition p = t.partitions.front();
  Model model;
  model.data_past_fs = p.size_sectors * 512 - 1000;  // in its last MiB
  Result<Plan> plan = MakeProvenPlan(&t, Device(), {kMiB, 0}, {}, model.Proofs());
  ASSERT_TRUE(plan) << plan.error().message;
  const PlanAction& a = plan->actions.front();
  EXPECT_EQ(a.kind, ActionKind::kImpossible) << a.reason;
  EXPECT_EQ(a.new_start_sector, p.start_sector);
  EXPECT_EQ(a.new_end_sector, p.end_sector());
  EXPECT_EQ(a.bytes_to_move, 0u);
  const uint64_t given_up = p.size_sectors - (t.last_usable_lba - 2048 + 1);
  EXPECT_EQ(given_up, GetParam() == LabelType::kDos ? 1985u : 2014u);
  EXPECT_NE(a.reason.find(fmt::format("{} sectors past the usable area", given_up)),
            std::string::npos)
      << a.reason;
  EXPECT_NE(a.reason.find(fmt::format("the partition holds data past it (byte {} is not zero)",
                                      *model.data_past_fs)),
            std::string::npos)
      << a.reason;
  EXPECT_NE(a.reason.find("only with the person's consent (--make-room)"), std::string::npos)
      << a.reason;
  // Only what the move would give up was read: the last sectors (up to an aligned end on GPT,
  // whose last usable sector is not one), not everything past the filesystem.
  ASSERT_EQ(model.reads.size(), 1u);
  const uint64_t aligned_end = (t.last_usable_lba + 1) / 2048 * 2048 - 1;
  EXPECT_EQ(model.reads.front().from_bytes, (aligned_end - 2048 + 1) * 512);
}

TEST_P(PlannerShrinkTest, ZerosPastTheFilesystemAreGivenUpOnlyOnceRead) {
  PartitionTable t = IssueDisk(GetParam());
  const Partition p = t.partitions.front();
  Model model;
  Result<Plan> plan = MakeProvenPlan(&t, Device(), {kMiB, 0}, {}, model.Proofs());
  ASSERT_TRUE(plan) << plan.error().message;
  const PlanAction& a = plan->actions.front();
  EXPECT_EQ(a.kind, ActionKind::kMoveData) << a.reason;
  EXPECT_EQ(a.new_start_sector, 2048u);
  // The end on a boundary (DOS: the disk's end is one; GPT: the one before its backup table).
  const uint64_t aligned_end = (t.last_usable_lba + 1) / 2048 * 2048 - 1;
  EXPECT_EQ(a.new_end_sector, aligned_end);
  const uint64_t new_size = aligned_end - 2048 + 1;
  EXPECT_EQ(a.bytes_to_move, new_size * 512);
  EXPECT_NE(a.reason.find(fmt::format("shrinks by {} sectors, all past the filesystem's end, "
                                      "read: zeros",
                                      p.size_sectors - new_size)),
            std::string::npos)
      << a.reason;
  ASSERT_EQ(model.reads.size(), 1u);
  EXPECT_EQ(model.reads.front().partition, 1u);
  EXPECT_EQ(model.reads.front().from_bytes, new_size * 512);
  EXPECT_EQ(t.partitions.front().contents.zeros_from_bytes, new_size * 512);

  // Without reading (plan --no-scan), nothing past the filesystem is given up.
  PartitionTable unread = IssueDisk(GetParam());
  Result<Plan> no_scan = MakeProvenPlan(&unread, Device(), {kMiB, 0}, {}, PlanProofs{});
  ASSERT_TRUE(no_scan) << no_scan.error().message;
  EXPECT_EQ(no_scan->actions.front().kind, ActionKind::kImpossible);
  EXPECT_NE(no_scan->actions.front().reason.find(fmt::format(
                "the {} sectors past it are not proven zero", p.size_sectors - kFsBytes / 512)),
            std::string::npos)
      << no_scan->actions.front().reason;
}

TEST_P(PlannerShrinkTest, ALayoutThatCutsUnreadOrDataBytesIsNotOneThePlannerDescribes) {
  // A person's layout (the planner) or a plan file's: the same partition at 2048 up to the end.
  PartitionTable t = IssueDisk(GetParam());
  const std::vector<std::pair<uint64_t, uint64_t>> extents = {{2048, t.last_usable_lba}};
  Result<std::vector<PlanAction>> unread = DescribeExtents(t, {kMiB, 0}, {}, extents);
  ASSERT_FALSE(unread);
  EXPECT_NE(unread.error().message.find("are fewer than it keeps"), std::string::npos)
      << unread.error().message;
  t.partitions.front().contents.tail_data_bytes = 41 * kMiB;
  EXPECT_FALSE(DescribeExtents(t, {kMiB, 0}, {}, extents));
  t.partitions.front().contents.tail_data_bytes.reset();
  t.partitions.front().contents.zeros_from_bytes = (t.last_usable_lba - 2048 + 1) * 512;
  Result<std::vector<PlanAction>> read = DescribeExtents(t, {kMiB, 0}, {}, extents);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->front().kind, ActionKind::kMoveData);
  // Below the filesystem: never, whatever was read.
  t.partitions.front().contents.zeros_from_bytes = 0;
  EXPECT_FALSE(DescribeExtents(t, {kMiB, 0}, {}, {{2048, 2048 + kFsBytes / 512 - 2}}));
  // Given up by the person (plan --discard 1): then it is theirs to lose.
  EXPECT_TRUE(DescribeExtents(t, {kMiB, 0}, {.discard = {1}}, {{2048, 2048 + 100}}));
}

INSTANTIATE_TEST_SUITE_P(Labels, PlannerShrinkTest,
                         ::testing::Values(LabelType::kDos, LabelType::kGpt),
                         [](const ::testing::TestParamInfo<LabelType>& p) {
                           return p.param == LabelType::kDos ? "Dos" : "Gpt";
                         });

TEST(PlannerShrinkTest, TailsToProveAreOnlyWhatAPlanGivesUp) {
  PartitionTable t = IssueDisk(LabelType::kDos);
  PlanAction a{1, 63, kDiskSectors - 1, 2048, kDiskSectors - 1, ActionKind::kMoveData, 0, ""};
  const uint64_t from = (kDiskSectors - 2048) * 512;
  EXPECT_EQ(TailsToProve(t, {a}, {}), (std::vector<TailProof>{{1, from}}));
  // Already read that far, or discarded, or not made smaller: nothing to read.
  t.partitions.front().contents.zeros_from_bytes = from;
  EXPECT_TRUE(TailsToProve(t, {a}, {}).empty());
  t.partitions.front().contents.zeros_from_bytes.reset();
  EXPECT_TRUE(TailsToProve(t, {a}, {.discard = {1}}).empty());
  PlanAction grows = a;
  grows.new_start_sector = 63;
  grows.kind = ActionKind::kNone;
  EXPECT_TRUE(TailsToProve(t, {grows}, {}).empty());
  // Data of unknown size, or an end-anchored filesystem: never made smaller, nothing to read.
  t.partitions.front().contents.fs_size_bytes.reset();
  EXPECT_TRUE(TailsToProve(t, {a}, {}).empty());
  t.partitions.front().contents.fs_size_bytes = kFsBytes;
  t.partitions.front().contents.fs_type = "linux_raid_member";
  EXPECT_TRUE(TailsToProve(t, {a}, {}).empty());
}

}  // namespace
}  // namespace partalign
