// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/layout/layout_spec.h"

#include <gtest/gtest.h>

#include "partalign/layout/planner.h"
#include "partalign/util/units.h"

namespace partalign {
namespace {

constexpr const char* kEsp = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B";
constexpr const char* kLinux = "0FC63DAF-8483-4772-8E79-3D69D8477DE4";
constexpr const char* kSwap = "0657FD6D-A4AB-43C4-84E5-0933C84B4F4F";

TEST(LayoutSpecTest, ParsesSfdiskLikeItems) {
  Result<LayoutSpec> spec =
      ParseLayoutSpec("size=512M,type=uefi,name=ESP; size=4G, type=S\nname=\"my root\"");
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->label, LabelType::kGpt);
  ASSERT_EQ(spec->items.size(), 3u);
  EXPECT_EQ(spec->items[0].size_bytes, 512 * kMiB);
  EXPECT_EQ(spec->items[0].type, kEsp);
  EXPECT_EQ(spec->items[0].name, "ESP");
  EXPECT_EQ(spec->items[1].size_bytes, 4 * kGiB);
  EXPECT_EQ(spec->items[1].type, kSwap);
  EXPECT_FALSE(spec->items[2].size_bytes);  // the rest
  EXPECT_EQ(spec->items[2].type, kLinux);   // sfdisk's default type
  EXPECT_EQ(spec->items[2].name, "my root");
}

// Issue #30 item 5: SIZE as sfdisk reads it. A bare number counts sectors (sfdisk's
// "size=100000" is 48.83 MiB with 512-byte sectors, not 98 KiB), and decimals are read as
// sfdisk reads them.
TEST(LayoutSpecTest, BareNumbersAreSectorsAndDecimalsAreAccepted) {
  Result<LayoutSpec> spec = ParseLayoutSpec("size=100000;size=1.5G;size=0x800;size=4096B");
  ASSERT_TRUE(spec) << spec.error().message;
  ASSERT_EQ(spec->items.size(), 4u);
  EXPECT_EQ(spec->items[0].size_sectors, 100000u);
  EXPECT_FALSE(spec->items[0].size_bytes);
  EXPECT_EQ(spec->items[0].SizeBytes(512), 100000u * 512);
  EXPECT_EQ(spec->items[0].SizeBytes(4096), 100000u * 4096);
  EXPECT_EQ(spec->items[1].size_bytes, 3 * kGiB / 2);
  EXPECT_EQ(spec->items[2].size_sectors, 2048u);
  EXPECT_EQ(spec->items[3].size_bytes, 4096u);
  // The layout follows: 100000 sectors rounded up to whole MiB at 512 bytes a sector.
  Result<PlanLayout> l = MakeLayout(*spec, 16777216, 512, {kMiB, 0});
  ASSERT_TRUE(l) << l.error().message;
  EXPECT_EQ(l->partitions[0].end_sector - l->partitions[0].start_sector + 1, 100352u);
  EXPECT_EQ(l->partitions[1].end_sector - l->partitions[1].start_sector + 1, 3145728u);
}

TEST(LayoutSpecTest, DosLabelAndTypeBytes) {
  Result<LayoutSpec> spec = ParseLayoutSpec(
      "# a BIOS disk\nlabel: dos\nsize=1G,type=83,bootable\nsize=2G,type=0x82\n"
      "type=V");
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->label, LabelType::kDos);
  ASSERT_EQ(spec->items.size(), 3u);
  EXPECT_EQ(spec->items[0].type, "0x83");
  EXPECT_TRUE(spec->items[0].bootable);
  EXPECT_EQ(spec->items[1].type, "0x82");
  EXPECT_EQ(spec->items[2].type, "0x8e");
}

TEST(LayoutSpecTest, GuidsAreUpperCased) {
  Result<LayoutSpec> spec = ParseLayoutSpec("type=c12a7328-f81f-11d2-ba4b-00a0c93ec93b");
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->items[0].type, kEsp);
}

TEST(LayoutSpecTest, BadSpecsNameTheItemAndField) {
  struct Case {
    const char* spec;
    const char* message;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"", "no partitions"},
           {"size=12X", "item 1: size: '12X': unknown unit 'X'"},
           {"size=1.3G", "item 1: size: '1.3G': sfdisk reads it as 1431655765 bytes"},
           {"size=010", "sfdisk reads a number that starts with 0 as octal (8, not 10)"},
           {"size=1G;size=0", "item 2: size: is 0"},
           {"type=linux; size=1G", "item 1: only the last partition may take the rest"},
           {"size=1G,type=bogus", "item 1: type: type 'bogus' is not a GPT type GUID"},
           {"label=dos;size=1G,type=5", "extended partitions are not supported"},
           {"label=dos;size=1G,name=x", "name= and attrs= are GPT fields"},
           {"size=1G,bootable", "bootable is a DOS flag"},
           {"size=1G,start=2048", "partalign places every start itself"},
           {"size=1G,color=red", "item 1: color: unknown key"},
           {"size=1G;label=dos", "the label must come first"},
           {"label=bsd", "label 'bsd' is not gpt or dos"},
           {"name=\"open", "unterminated quote"},
       }) {
    Result<LayoutSpec> spec = ParseLayoutSpec(c.spec);
    ASSERT_FALSE(spec) << c.spec;
    EXPECT_NE(spec.error().message.find(c.message), std::string::npos)
        << "spec '" << c.spec << "': " << spec.error().message;
  }
}

TEST(LayoutSpecTest, DosLayoutsOfMoreThanFourPartitionsParseButPlanOnlyPrimaryOnes) {
  // explain --layout predicts the tools' logical partitions; plan --layout lays out primary
  // partitions only and says so.
  Result<LayoutSpec> spec = ParseLayoutSpec("label=dos;size=1M;size=1M;size=1M;size=1M;size=1M");
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->items.size(), 5u);
  Result<PlanLayout> l = MakeLayout(*spec, 16777216, 512, {kMiB, 0});
  ASSERT_FALSE(l);
  EXPECT_NE(l.error().message.find("at most 4 primary"), std::string::npos) << l.error().message;
  std::string many = "label=dos";
  for (int i = 0; i < 60; ++i) many += ";size=1M";
  Result<LayoutSpec> too_many = ParseLayoutSpec(many);
  ASSERT_FALSE(too_many);
  EXPECT_NE(too_many.error().message.find("holds at most 59"), std::string::npos)
      << too_many.error().message;
}

TEST(LayoutSpecTest, GptLayoutStartsAtOneMiBAndEndsOnABoundary) {
  // 8 GiB: GPT usable area 34 .. 16777182; the rest ends on the last MiB boundary.
  Result<LayoutSpec> spec = ParseLayoutSpec("size=512M,type=uefi;size=1000K,type=S;type=L");
  ASSERT_TRUE(spec);
  Result<PlanLayout> l = MakeLayout(*spec, 16777216, 512, {kMiB, 0});
  ASSERT_TRUE(l) << l.error().message;
  EXPECT_EQ(l->label, LabelType::kGpt);
  EXPECT_EQ(l->first_usable_lba, 2048u);
  EXPECT_EQ(l->last_usable_lba, 16777182u);
  ASSERT_EQ(l->partitions.size(), 3u);
  EXPECT_EQ(l->partitions[0].start_sector, 2048u);
  EXPECT_EQ(l->partitions[0].end_sector, 2048u + 1048576 - 1);
  // 1000 KiB rounds up to a whole MiB so that the next start is aligned.
  EXPECT_EQ(l->partitions[1].start_sector, 1050624u);
  EXPECT_EQ(l->partitions[1].end_sector, 1050624u + 2048 - 1);
  EXPECT_EQ(l->partitions[2].start_sector, 1052672u);
  EXPECT_EQ(l->partitions[2].end_sector, 16775167u);  // 16775168 = 8191 MiB
}

TEST(LayoutSpecTest, OffsetAnd4KnLayouts) {
  Result<LayoutSpec> spec = ParseLayoutSpec("size=100M;size=100M");
  ASSERT_TRUE(spec);
  // Alignment offset 3584 (physical sectors start at LBA 7): starts at 2055, 206855.
  Result<PlanLayout> offset = MakeLayout(*spec, 16777216, 512, {kMiB, 3584});
  ASSERT_TRUE(offset) << offset.error().message;
  EXPECT_EQ(offset->partitions[0].start_sector, 2055u);
  EXPECT_EQ(offset->partitions[1].start_sector, 2055u + 204800);
  // 4Kn: the GPT header and entries take 6 sectors; the first MiB boundary is LBA 256.
  Result<PlanLayout> fourk = MakeLayout(*spec, 2097152, 4096, {kMiB, 0});
  ASSERT_TRUE(fourk) << fourk.error().message;
  EXPECT_EQ(fourk->partitions[0].start_sector, 256u);
  EXPECT_EQ(fourk->partitions[1].start_sector, 256u + 25600);
  EXPECT_EQ(fourk->last_usable_lba, 2097152u - 6);
}

TEST(LayoutSpecTest, DosLayoutStopsAtTwoTebibytes) {
  Result<LayoutSpec> spec = ParseLayoutSpec("label=dos;size=1G;type=L");
  ASSERT_TRUE(spec);
  const uint64_t disk = 3 * kTiB / 512;
  Result<PlanLayout> l = MakeLayout(*spec, disk, 512, {kMiB, 0});
  ASSERT_TRUE(l) << l.error().message;
  EXPECT_EQ(l->partitions[0].start_sector, 2048u);
  EXPECT_LE(l->partitions[1].end_sector, 0xFFFFFFFFull);
  EXPECT_EQ((l->partitions[1].end_sector + 1) % 2048, 0u);
}

TEST(LayoutSpecTest, LayoutThatDoesNotFitSaysByHowMuch) {
  Result<LayoutSpec> spec = ParseLayoutSpec("size=60M;size=5M");
  ASSERT_TRUE(spec);
  Result<PlanLayout> l = MakeLayout(*spec, 64 * 2048, 512, {kMiB, 0});
  ASSERT_FALSE(l);
  EXPECT_NE(l.error().message.find("does not fit: partition 2"), std::string::npos)
      << l.error().message;
}

TEST(LayoutSpecTest, LayoutPlanIsOnlyForAnEmptyDisk) {
  Result<LayoutSpec> spec = ParseLayoutSpec("size=1G;type=L");
  ASSERT_TRUE(spec);
  DeviceInfo d;
  d.identity.path = "disk.img";
  d.topology = DefaultTopology(512, 8 * kGiB);
  PartitionTable empty;
  empty.fingerprint = "xxh64:0000000000000000";
  Result<Plan> plan = MakeLayoutPlan(*spec, empty, d, {kMiB, 0});
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_TRUE(plan->actions.empty());
  ASSERT_TRUE(plan->layout);
  EXPECT_EQ(plan->layout->partitions.size(), 2u);
  EXPECT_EQ(plan->table_fingerprint, empty.fingerprint);
  EXPECT_EQ(plan->label, LabelType::kNone);

  PartitionTable used = empty;
  used.label = LabelType::kGpt;
  used.partitions.push_back(Partition{1});
  Result<Plan> refused = MakeLayoutPlan(*spec, used, d, {kMiB, 0});
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("already holds 1 partition"), std::string::npos);
}

// Issue #11 item 7: "--layout size=18446744073709551615" gave a plan for a 0-byte partition
// (the size wrapped when rounded up to whole sectors).
TEST(LayoutSpecTest, HugeSizesAreRefusedNotWrapped) {
  for (const char* text :
       {"size=18446744073709551615", "size=18446744073709551104", "size=18446744073709551615B",
        "size=18446744073709551104B", "size=1G;size=18446744073709551615",
        "size=1G;size=18446744073709551615B", "size=281474976710655"}) {
    Result<LayoutSpec> spec = ParseLayoutSpec(text);
    if (!spec) {
      EXPECT_NE(spec.error().message.find("too large"), std::string::npos)
          << text << " -> " << spec.error().message;
      continue;
    }
    for (uint64_t ss : {512u, 4096u}) {
      for (const std::string label : {"label=gpt;", "label=dos;"}) {
        Result<LayoutSpec> labelled = ParseLayoutSpec(label + text);
        ASSERT_TRUE(labelled) << labelled.error().message;
        Result<PlanLayout> l = MakeLayout(*labelled, 16777216, ss, {kMiB, 0});
        ASSERT_FALSE(l) << label << text << " at " << ss << " gave a layout";
        EXPECT_NE(l.error().message.find("more than the whole disk"), std::string::npos)
            << l.error().message;
      }
    }
  }
}

TEST(LayoutSpecTest, SizesNearTheDiskEndNeverWrap) {
  // A disk of 2^55 sectors of 512 bytes (16 EiB - 1 sector would not fit in bytes at all):
  // the rest-of-disk partition ends inside the disk, every end is after its start.
  Result<LayoutSpec> spec = ParseLayoutSpec("size=1G;type=L");
  ASSERT_TRUE(spec);
  const uint64_t sectors = (~0ull) / 512;
  Result<PlanLayout> l = MakeLayout(*spec, sectors, 512, {kMiB, 0});
  ASSERT_TRUE(l) << l.error().message;
  ASSERT_EQ(l->partitions.size(), 2u);
  for (const LayoutPartition& p : l->partitions) {
    EXPECT_LE(p.start_sector, p.end_sector);
    EXPECT_LT(p.end_sector, sectors);
  }
  EXPECT_FALSE(MakeLayout(*spec, (~0ull) / 256, 512, {kMiB, 0}));
}

TEST(LayoutSpecTest, TinyDosDiskIsRefusedNotWrapped) {
  Result<LayoutSpec> spec = ParseLayoutSpec("label=dos;type=L");
  ASSERT_TRUE(spec);
  for (uint64_t sectors : {0u, 1u}) {
    Result<PlanLayout> l = MakeLayout(*spec, sectors, 512, {kMiB, 0});
    ASSERT_FALSE(l);
    EXPECT_EQ(l.error().message, "the disk is too small for a DOS table");
  }
}

}  // namespace
}  // namespace partalign
