// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/sfdisk_layout.h"

#include <gtest/gtest.h>

#include "support/test_topology.h"

namespace partalign {
namespace {

const ToolVersion kUtilLinux2381{2, 38, 1, 3};
constexpr uint64_t kMiBSectors = 2048;

LibfdiskLabel Label(const Topology& t, LabelType label, ToolVersion v = kUtilLinux2381) {
  Result<LibfdiskContext> c = DiscoverLibfdisk(t, v);
  EXPECT_TRUE(c) << c.error().message;
  Result<LibfdiskLabel> l = CreateLibfdiskLabel(*c, label);
  EXPECT_TRUE(l) << l.error().message;
  return *l;
}

SfdiskLine Size(uint64_t sectors) { return {sectors, false, false}; }
SfdiskLine Rest() { return {}; }
SfdiskLine Extended() { return {std::nullopt, false, true}; }

// util-linux's scsi_debug disks: 50 MiB, 512-byte sectors; physblk_exp=3 gives 4 KiB physical
// sectors (and minimum I/O), lowest_aligned=7 an alignment offset of 3584 bytes. Their optimal
// I/O is removed from the expected output; any value up to 1 MiB that divides into physical
// sectors gives the same grain of 1 MiB.
Topology ScsiDebug(uint64_t pbs, uint64_t offset) {
  return test::MakeTopology(512, pbs, pbs, 0, offset, TopologyOrigin::kKernel, 50ull << 20);
}

void ExpectTable(const SfdiskLayout& got, const std::vector<SfdiskPartition>& want) {
  ASSERT_TRUE(got.error.empty()) << got.error;
  ASSERT_EQ(got.partitions.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got.partitions[i], want[i])
        << "partition " << want[i].number << ": got " << got.partitions[i].start_sector << "-"
        << got.partitions[i].end_sector;
  }
}

constexpr SfdiskPartKind P = SfdiskPartKind::kPrimary;
constexpr SfdiskPartKind E = SfdiskPartKind::kExtended;
constexpr SfdiskPartKind L = SfdiskPartKind::kLogical;

// util-linux tests/ts/sfdisk/gpt, subtest "all-defaults" (expected
// tests/expected/sfdisk/gpt-all-defaults, v2.38.1): `,5M` four times, then the rest, which
// ends on the last aligned sector (921c7da55, 2.38).
TEST(SfdiskLayoutTest, UpstreamGptAllDefaults) {
  SfdiskLayout s = PredictSfdiskLayout(Label(ScsiDebug(4096, 0), LabelType::kGpt),
                                       {Size(5 * kMiBSectors), Size(5 * kMiBSectors),
                                        Size(5 * kMiBSectors), Size(5 * kMiBSectors), Rest()});
  ExpectTable(s, {{1, P, 2048, 12287},
                  {2, P, 12288, 22527},
                  {3, P, 22528, 32767},
                  {4, P, 32768, 43007},
                  {5, P, 43008, 100351}});
  EXPECT_TRUE(s.warnings.empty());
}

// util-linux tests/ts/fdisk/align-512-4K (expected tests/expected/fdisk/align-512-4K): fdisk's
// `n` with default starts and +10M, +10M, +10M, an extended partition over the rest, +5M,
// +5M and the rest. fdisk's dialog and an sfdisk script place alike.
TEST(SfdiskLayoutTest, UpstreamFdiskAlign512_4K) {
  SfdiskLayout s =
      PredictSfdiskLayout(Label(ScsiDebug(4096, 0), LabelType::kDos),
                          {Size(10 * kMiBSectors), Size(10 * kMiBSectors), Size(10 * kMiBSectors),
                           Extended(), Size(5 * kMiBSectors), Size(5 * kMiBSectors), Rest()});
  ExpectTable(s, {{1, P, 2048, 22527},
                  {2, P, 22528, 43007},
                  {3, P, 43008, 63487},
                  {4, E, 63488, 102399},
                  {5, L, 65536, 75775},
                  {6, L, 77824, 88063},
                  {7, L, 90112, 102399}});
}

// util-linux tests/ts/fdisk/align-512-512-topology: the same on 512-byte physical sectors.
TEST(SfdiskLayoutTest, UpstreamFdiskAlign512_512Topology) {
  SfdiskLayout s =
      PredictSfdiskLayout(Label(ScsiDebug(512, 0), LabelType::kDos),
                          {Size(10 * kMiBSectors), Size(10 * kMiBSectors), Size(10 * kMiBSectors),
                           Extended(), Size(5 * kMiBSectors), Size(5 * kMiBSectors), Rest()});
  EXPECT_EQ(s.partitions.at(4).start_sector, 65536u);
  EXPECT_EQ(s.partitions.at(6).start_sector, 90112u);
  EXPECT_EQ(s.partitions.at(6).end_sector, 102399u);
}

// util-linux tests/ts/fdisk/align-512-4K-63 (expected tests/expected/fdisk/align-512-4K-63):
// an alignment offset of 3584 bytes puts the first partition at 7 and every later start one
// sector before a MiB boundary (libfdisk's "physical blocks start at LBA -1" compensation),
// the logical ones one first LBA (7 sectors) after the previous end, aligned.
TEST(SfdiskLayoutTest, UpstreamFdiskAlign512_4K_63) {
  SfdiskLayout s =
      PredictSfdiskLayout(Label(ScsiDebug(4096, 3584), LabelType::kDos),
                          {Size(10 * kMiBSectors), Size(10 * kMiBSectors), Size(10 * kMiBSectors),
                           Extended(), Size(5 * kMiBSectors), Size(5 * kMiBSectors), Rest()});
  ExpectTable(s, {{1, P, 7, 20486},
                  {2, P, 20487, 40966},
                  {3, P, 40967, 61446},
                  {4, E, 61447, 102399},
                  {5, L, 63487, 73726},
                  {6, L, 75775, 86014},
                  {7, L, 88063, 102399}});
  EXPECT_TRUE(s.warnings.empty());  // every start is on a physical sector boundary
}

// A size in plain sectors is taken as it is (size_explicit): its end is not aligned, and the
// next default start is the first free sector, aligned.
TEST(SfdiskLayoutTest, DosExplicitSizeIsNotAligned) {
  SfdiskLayout s = PredictSfdiskLayout(Label(ScsiDebug(512, 0), LabelType::kDos),
                                       {SfdiskLine{6144, true, false}, Size(4 * kMiBSectors)});
  ExpectTable(s, {{1, P, 2048, 8191}, {2, P, 8192, 16383}});
}

// Checked with sfdisk 2.38.1 on a 50 MiB loop device: on GPT a relative size larger than the
// free space is cut to it silently (the aligned end is clamped to the free area,
// fdisk_align_lba_in_range); on DOS the partition does not fit anywhere and sfdisk writes
// nothing.
TEST(SfdiskLayoutTest, TooLargeIsCutOnGptAndRefusedOnDos) {
  SfdiskLayout gpt = PredictSfdiskLayout(Label(ScsiDebug(512, 0), LabelType::kGpt),
                                         {Size(30 * kMiBSectors), Size(30 * kMiBSectors)});
  ExpectTable(gpt, {{1, P, 2048, 63487}, {2, P, 63488, 98303}});
  SfdiskLayout dos = PredictSfdiskLayout(Label(ScsiDebug(512, 0), LabelType::kDos),
                                         {Size(30 * kMiBSectors), Size(30 * kMiBSectors)});
  EXPECT_TRUE(dos.partitions.empty());
  EXPECT_EQ(dos.error, "line 2: No free sectors available.");
}

TEST(SfdiskLayoutTest, AFifthPrimaryWithoutExtendedFails) {
  std::vector<SfdiskLine> lines(5, Size(kMiBSectors));
  SfdiskLayout s = PredictSfdiskLayout(Label(ScsiDebug(512, 0), LabelType::kDos), lines);
  EXPECT_TRUE(s.partitions.empty());
  EXPECT_NE(s.error.find("first replace a primary with an extended"), std::string::npos) << s.error;
}

// fdisk -l's warning, for every partition libfdisk itself placed off the physical boundary
// (minimum I/O 192 KiB does not divide 1 MiB: alignment-heuristics.md §6 row K).
TEST(SfdiskLayoutTest, PhysicalBoundaryWarningsForEveryPartition) {
  Topology k = test::MakeTopology(512, 512, 196608, 0, 0, TopologyOrigin::kKernel, 8ull << 30);
  SfdiskLayout s =
      PredictSfdiskLayout(Label(k, LabelType::kGpt), {Size(100 * kMiBSectors), Rest()});
  ASSERT_EQ(s.partitions.size(), 2u);
  EXPECT_EQ(s.warnings,
            (std::vector<std::string>{"Partition 1 does not start on physical sector boundary.",
                                      "Partition 2 does not start on physical sector boundary."}));
}

}  // namespace
}  // namespace partalign
