// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/topology/topology_spec.h"

#include <gtest/gtest.h>

namespace partalign {
namespace {

const std::vector<TopologyProfile>& Profiles() { return BuiltinProfiles(); }

TEST(TopologySpecTest, BuiltinProfileTableParsesAndHasTheRequiredProfiles) {
  ASSERT_FALSE(Profiles().empty()) << "data/topology-profiles.conf failed to parse";
  struct Want {
    const char* name;
    uint64_t log, phys, min_io, opt_io, align;
  };
  for (const Want& w :
       {Want{"sata-512e", 512, 4096, 4096, 0, 0}, Want{"4kn", 4096, 4096, 4096, 0, 0},
        Want{"usb-jmicron-0xffff", 512, 4096, 4096, 33553920, 0},
        Want{"usb-4k-bridge", 4096, 4096, 4096, 0, 0},
        Want{"raid5-3x64k", 512, 4096, 65536, 196608, 0},
        Want{"xp-jumper", 512, 4096, 4096, 0, 3584}}) {
    Result<TopologyOverride> o = ParseTopologySpec(w.name, Profiles());
    ASSERT_TRUE(o) << w.name << ": " << o.error().message;
    EXPECT_EQ(o->profile, w.name);
    EXPECT_EQ(o->logical_sector_size, w.log) << w.name;
    EXPECT_EQ(o->physical_sector_size, w.phys) << w.name;
    EXPECT_EQ(o->minimum_io_size, w.min_io) << w.name;
    EXPECT_EQ(o->optimal_io_size, w.opt_io) << w.name;
    EXPECT_EQ(o->alignment_offset, w.align) << w.name;
  }
}

TEST(TopologySpecTest, KeysSetOnlyWhatTheyName) {
  Result<TopologyOverride> o = ParseTopologySpec("phys=4096,opt-io=32M", Profiles());
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->physical_sector_size, 4096u);
  EXPECT_EQ(o->optimal_io_size, 32u * 1024 * 1024);
  EXPECT_FALSE(o->logical_sector_size);
  EXPECT_FALSE(o->minimum_io_size);
  EXPECT_FALSE(o->alignment_offset);
  EXPECT_TRUE(o->profile.empty());
}

TEST(TopologySpecTest, KeysAfterAProfileOverrideIt) {
  Result<TopologyOverride> o = ParseTopologySpec("usb-jmicron-0xffff,opt-io=0", Profiles());
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->optimal_io_size, 0u);
  EXPECT_EQ(o->physical_sector_size, 4096u);
}

TEST(TopologySpecTest, ErrorsNameTheFault) {
  struct Case {
    const char* spec;
    const char* message_part;
  };
  for (const Case& c :
       {Case{"", "empty"}, Case{"no-such-profile", "unknown profile 'no-such-profile'"},
        Case{"log=512,log=4096", "'log' given twice"}, Case{"colour=blue", "unknown key 'colour'"},
        Case{"phys=", "missing value"}, Case{"phys=abc", "'abc' is not a size"},
        Case{"log=1000", "log=1000 is not a power of two"}, Case{"log=256", "log=256"},
        Case{"phys=0", "phys=0"}, Case{"log=512,4kn", "unknown key '4kn'"}}) {
    Result<TopologyOverride> o = ParseTopologySpec(c.spec, Profiles());
    ASSERT_FALSE(o) << c.spec;
    EXPECT_NE(o.error().message.find(c.message_part), std::string::npos)
        << c.spec << " -> " << o.error().message;
  }
}

TEST(TopologySpecTest, ProfileTableErrorsNameTheLine) {
  Result<std::vector<TopologyProfile>> p = ParseProfiles("# comment\n\nok log=512 fine\nbad\n");
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("line 4"), std::string::npos) << p.error().message;
  p = ParseProfiles("a log=512 x\na log=4096 y\n");
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("defined twice"), std::string::npos);
  p = ParseProfiles("a loq=512 x\n");
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("unknown key 'loq'"), std::string::npos);
}

TEST(ApplyOverrideTest, AssumedValuesReplaceReportedOnes) {
  Topology kernel = DefaultTopology(512, 8ull << 30);
  kernel.origin = TopologyOrigin::kKernel;
  Result<TopologyOverride> o = ParseTopologySpec("usb-jmicron-0xffff", Profiles());
  ASSERT_TRUE(o);
  Result<Topology> t = ApplyOverride(kernel, *o);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->physical_sector_size, 4096u);
  EXPECT_EQ(t->optimal_io_size, 33553920u);
  EXPECT_EQ(t->size_bytes, 8ull << 30);
  EXPECT_EQ(t->origin, TopologyOrigin::kAssumed);
}

TEST(ApplyOverrideTest, EmptyOverrideKeepsTheOrigin) {
  Topology kernel = DefaultTopology(4096, 1 << 30);
  kernel.origin = TopologyOrigin::kKernel;
  Result<Topology> t = ApplyOverride(kernel, TopologyOverride{});
  ASSERT_TRUE(t);
  EXPECT_EQ(*t, kernel);
}

TEST(ApplyOverrideTest, NewLogicalSizeOnADefaultTopologyMovesTheDefaults) {
  Result<Topology> t =
      ApplyOverride(DefaultTopology(512, 1 << 30), TopologyOverride{.logical_sector_size = 4096});
  ASSERT_TRUE(t);
  EXPECT_EQ(t->logical_sector_size, 4096u);
  EXPECT_EQ(t->physical_sector_size, 4096u);
  EXPECT_EQ(t->minimum_io_size, 4096u);
}

TEST(ApplyOverrideTest, RejectsImpossibleCombinations) {
  Topology base = DefaultTopology(512, 1 << 30);
  Result<Topology> t = ApplyOverride(base, TopologyOverride{.alignment_offset = 100});
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("not a multiple of the logical sector size"), std::string::npos);
  t = ApplyOverride(base, TopologyOverride{.physical_sector_size = 4096, .alignment_offset = 4096});
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("not smaller than the physical sector size"), std::string::npos);
  t = ApplyOverride(base, TopologyOverride{.logical_sector_size = 4096, .size_bytes = 1001 * 512});
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("size 512512 is not a multiple"), std::string::npos);
}

// Issue #11 items 7 and 9: user numbers that no disk can have are refused with the reason,
// before anything is computed from them.
TEST(TopologySpecTest, ZeroSizesAreRefusedWhereZeroIsNotNone) {
  for (const char* spec : {"min-io=0", "size=0", "phys=0"}) {
    Result<TopologyOverride> o = ParseTopologySpec(spec, Profiles());
    ASSERT_FALSE(o) << spec;
    EXPECT_NE(o.error().message.find("=0: must be at least one sector"), std::string::npos)
        << spec << " -> " << o.error().message;
  }
  // 0 is "none" for these two.
  EXPECT_TRUE(ParseTopologySpec("opt-io=0", Profiles()));
  EXPECT_TRUE(ParseTopologySpec("align-offset=0", Profiles()));
}

struct ImpossibleCase {
  const char* spec;
  const char* reason;
};

class ImpossibleTopologyTest : public testing::TestWithParam<ImpossibleCase> {};

TEST_P(ImpossibleTopologyTest, IsRefusedWithTheReason) {
  Topology image = DefaultTopology(512, 1 << 30);
  Result<TopologyOverride> o = ParseTopologySpec(GetParam().spec, Profiles());
  ASSERT_TRUE(o) << o.error().message;
  Result<Topology> t = ApplyOverride(image, *o);
  ASSERT_FALSE(t) << GetParam().spec << " was accepted";
  EXPECT_EQ(t.error().message,
            std::string("--assume gives an impossible topology: ") + GetParam().reason);
}

INSTANTIATE_TEST_SUITE_P(
    Issue11, ImpossibleTopologyTest,
    testing::Values(
        ImpossibleCase{"min-io=18446744073709551615",
                       "minimum I/O size 18446744073709551615 is larger than any block device "
                       "reports (4294967295 at most)"},
        ImpossibleCase{"phys=256",
                       "physical sector size 256 is smaller than the logical sector size 512"},
        ImpossibleCase{"phys=1000", "physical sector size 1000 is not a power of two"},
        ImpossibleCase{"min-io=100",
                       "minimum I/O size 100 is not a multiple of the logical sector size 512"},
        ImpossibleCase{"log=4096,phys=512",
                       "physical sector size 512 is smaller than the logical sector size 4096"},
        ImpossibleCase{"log=4096,min-io=6144",
                       "minimum I/O size 6144 is not a multiple of the logical sector size 4096"},
        ImpossibleCase{"opt-io=8G",
                       "optimal I/O size 8589934592 is larger than any block device reports "
                       "(4294967295 at most)"},
        ImpossibleCase{"phys=8G",
                       "physical sector size 8589934592 is larger than any block device reports "
                       "(4294967295 at most)"},
        ImpossibleCase{"size=18446744073709551615",
                       "size 18446744073709551615 is not a multiple of the logical sector size "
                       "512"}));

TEST(ApplyOverrideTest, OddButPossibleValuesPassAndAreLeftToTheWarnings) {
  Topology image = DefaultTopology(512, 1 << 30);
  for (const char* spec : {"min-io=196608", "phys=4096,min-io=512", "opt-io=33553920",
                           "opt-io=6144,phys=4096", "log=2048"}) {
    Result<TopologyOverride> o = ParseTopologySpec(spec, Profiles());
    ASSERT_TRUE(o) << spec << ": " << o.error().message;
    Result<Topology> t = ApplyOverride(image, *o);
    EXPECT_TRUE(t) << spec << ": " << t.error().message;
  }
}

TEST(ApplyOverrideTest, NewLogicalSizeRaisesReportedSizesBelowItAsTheKernelWould) {
  Topology kernel = DefaultTopology(512, 1 << 30);
  kernel.origin = TopologyOrigin::kKernel;
  Result<Topology> t = ApplyOverride(kernel, TopologyOverride{.logical_sector_size = 4096});
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->physical_sector_size, 4096u);
  EXPECT_EQ(t->minimum_io_size, 4096u);
  // Given explicitly, an impossible value is refused, not raised.
  t = ApplyOverride(kernel,
                    TopologyOverride{.logical_sector_size = 4096, .physical_sector_size = 512});
  EXPECT_FALSE(t);
}

}  // namespace
}  // namespace partalign
