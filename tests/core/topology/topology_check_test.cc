// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/topology/topology_check.h"

#include <gtest/gtest.h>

#include "partalign/topology/topology_spec.h"
#include "support/test_topology.h"

#include <algorithm>

namespace partalign {
namespace {

Topology Make(uint64_t log, uint64_t phys, uint64_t min_io, uint64_t opt_io, uint64_t align) {
  return test::MakeTopology(log, phys, min_io, opt_io, align);
}

std::vector<std::string> Codes(const Topology& t) {
  std::vector<std::string> codes;
  for (const TopologyFinding& f : CheckTopology(t)) codes.push_back(f.code);
  return codes;
}

bool Has(const std::vector<std::string>& codes, const std::string& code) {
  return std::find(codes.begin(), codes.end(), code) != codes.end();
}

TEST(TopologyCheckTest, SaneTopologiesRaiseNothing) {
  EXPECT_TRUE(Codes(Make(512, 512, 512, 0, 0)).empty());
  EXPECT_TRUE(Codes(Make(512, 4096, 4096, 0, 0)).empty());
  EXPECT_TRUE(Codes(Make(4096, 4096, 4096, 0, 0)).empty());
  EXPECT_TRUE(Codes(Make(512, 4096, 4096, 1048576, 0)).empty());
  EXPECT_TRUE(Codes(Make(512, 512, 65536, 131072, 0)).empty());
  EXPECT_TRUE(Codes(Make(512, 512, 512, 4194304, 0)).empty());
}

TEST(TopologyCheckTest, JMicronBridgeValueNamesTheGrainPartedUses) {
  std::vector<TopologyFinding> f = CheckTopology(Make(512, 4096, 4096, 33553920, 0));
  std::vector<std::string> codes = Codes(Make(512, 4096, 4096, 33553920, 0));
  ASSERT_TRUE(Has(codes, "opt-io-bridge-0xffff"));
  EXPECT_TRUE(Has(codes, "opt-io-not-multiple-of-phys"));
  EXPECT_FALSE(Has(codes, "opt-io-not-multiple-of-min-io"));  // min = phys: said once
  EXPECT_FALSE(Has(codes, "opt-io-not-mib-compatible"));      // said by the bridge finding
  EXPECT_NE(f[0].message.find("33553920"), std::string::npos);
  EXPECT_NE(f[0].message.find("65535 sectors"), std::string::npos) << f[0].message;
}

TEST(TopologyCheckTest, BridgeValueOnA512nDiskIsStillFlagged) {
  std::vector<std::string> codes = Codes(Make(512, 512, 512, 33553920, 0));
  EXPECT_TRUE(Has(codes, "opt-io-bridge-0xffff"));
  EXPECT_FALSE(Has(codes, "opt-io-not-multiple-of-phys"));  // 33553920 = 65535 x 512
}

TEST(TopologyCheckTest, EachRuleFiresOnItsOwn) {
  EXPECT_TRUE(Has(Codes(Make(512, 4096, 4096, 6144, 0)), "opt-io-not-multiple-of-phys"));
  EXPECT_TRUE(Has(Codes(Make(512, 512, 65536, 98304, 0)), "opt-io-not-multiple-of-min-io"));
  EXPECT_TRUE(Has(Codes(Make(512, 512, 196608, 0, 0)), "min-io-not-power-of-two"));
  EXPECT_TRUE(Has(Codes(Make(512, 4096, 4096, 0, 3584)), "alignment-offset"));
  EXPECT_TRUE(Has(Codes(Make(4096, 512, 4096, 0, 0)), "phys-smaller-than-log"));
  EXPECT_TRUE(Has(Codes(Make(512, 4096, 512, 0, 0)), "min-io-smaller-than-phys"));
  EXPECT_TRUE(Has(Codes(Make(2048, 2048, 2048, 0, 0)), "unusual-logical-sector-size"));
  EXPECT_TRUE(Has(Codes(Make(512, 4096, 65536, 196608, 0)), "opt-io-not-mib-compatible"));
}

TEST(TopologyCheckTest, AlignmentOffsetMessageGivesTheFirstAlignedLba) {
  std::vector<TopologyFinding> f = CheckTopology(Make(512, 4096, 4096, 0, 3584));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].message.find("LBA 7"), std::string::npos) << f[0].message;
}

TEST(ValidateTopologyTest, EveryProfileAndSaneTopologyIsValid) {
  for (const TopologyProfile& p : BuiltinProfiles()) {
    Result<TopologyOverride> o = ParseTopologySpec(p.name, BuiltinProfiles());
    ASSERT_TRUE(o) << p.name;
    EXPECT_TRUE(ApplyOverride(DefaultTopology(512, 1ull << 30), *o)) << p.name;
  }
  Topology t = Make(512, 4096, 4096, 33553920, 0);
  t.size_bytes = 1ull << 30;
  EXPECT_TRUE(ValidateTopology(t));
  t.minimum_io_size = 0;  // not reported
  EXPECT_TRUE(ValidateTopology(t));
}

TEST(ValidateTopologyTest, NamesTheImpossibleValue) {
  struct Case {
    Topology t;
    const char* message;
  };
  Topology base = Make(512, 512, 512, 0, 0);
  base.size_bytes = 1 << 20;
  auto with = [&](auto change) {
    Topology t = base;
    change(t);
    return t;
  };
  for (const Case& c : {
           Case{with([](Topology& t) { t.logical_sector_size = 1000; }),
                "logical sector size 1000 is not a power of two between 512 and 65536"},
           Case{with([](Topology& t) { t.physical_sector_size = 0; }),
                "physical sector size 0 is not a power of two"},
           Case{with([](Topology& t) { t.alignment_offset = 512; }),
                "alignment offset 512 is not smaller than the physical sector size 512"},
           Case{with([](Topology& t) { t.alignment_offset = 100; }),
                "alignment offset 100 is not a multiple of the logical sector size 512"},
           Case{with([](Topology& t) { t.size_bytes = 0; }),
                "size 0: a disk holds at least one sector"},
           Case{with([](Topology& t) { t.alignment_offset = 1ull << 40; }),
                "alignment offset 1099511627776 is larger than any block device reports "
                "(4294967295 at most)"},
       }) {
    Status s = ValidateTopology(c.t);
    ASSERT_FALSE(s) << c.message;
    EXPECT_EQ(s.error().message, c.message);
  }
}

TEST(CheckDeviceTest, MisalignedStackAndForeignSectorSizeAreReported) {
  DeviceInfo d;
  d.topology = Make(512, 512, 512, 0, 0);
  d.identity.sysfs_alignment_offset = -1;
  d.table.label = LabelType::kGpt;
  d.table.written_for_sector_size = 4096;
  d.table.written_for_reason = "GPT header found at byte 4096";
  std::vector<std::string> codes;
  for (const TopologyFinding& f : CheckDevice(d)) codes.push_back(f.code);
  EXPECT_TRUE(Has(codes, "misaligned-stack"));
  EXPECT_TRUE(Has(codes, "table-sector-size-mismatch"));
}

TEST(CheckDeviceTest, MatchingTableSectorSizeIsQuiet) {
  DeviceInfo d;
  d.topology = Make(512, 512, 512, 0, 0);
  d.table.label = LabelType::kGpt;
  d.table.written_for_sector_size = 512;
  EXPECT_TRUE(CheckDevice(d).empty());
}

}  // namespace
}  // namespace partalign
