// SPDX-License-Identifier: GPL-3.0-or-later
// Issue #30 item 5: `--layout` sizes as sfdisk reads them, with the real sfdisk (Debian 12's
// 2.38.1) as the oracle. Each text goes into a one-partition sfdisk script on an image file;
// what sfdisk makes of it is compared with ParseSfdiskSize (and `plan --layout`): a bare number
// is that many sectors exactly; a size with a unit is bytes, which sfdisk then aligns down to
// its 1 MiB grain (a decimal may fall a byte per digit short in sfdisk: util-linux divides
// digit by digit); what partalign refuses, sfdisk reads as the refusal says it does.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <regex>

#include <fmt/format.h>

#include "partalign/util/sfdisk_size.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/sfdisk.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

constexpr uint64_t kMiBBytes = 1 << 20;
constexpr uint64_t kFirst = 2048;  // sfdisk's first start on this image: 1 MiB
constexpr uint64_t kImage = 8ull << 30;

// The size in sectors of the one partition sfdisk makes of "size=TEXT", or -1 when it
// refuses the line.
int64_t SfdiskSectors(const std::string& image, const std::string& text) {
  test::CommandResult r = test::WriteWithSfdisk(image, "label: gpt\nsize=" + text + "\n");
  if (r.exit_code != 0) return -1;
  return test::SfdiskJson(image)["partitions"][0]["size"].get<int64_t>();
}

// sfdisk's size in sectors for `bytes` with a unit: whole sectors, then the last sector
// aligned to the nearest 1 MiB boundary, less one (libfdisk's gpt_add_partition():
// fdisk_align_lba_in_range(), FDISK_ALIGN_NEAREST).
uint64_t AlignedSectors(uint64_t bytes) {
  constexpr uint64_t kGrain = kMiBBytes / 512;
  const uint64_t last = kFirst + bytes / 512 - 1;
  return (last + kGrain / 2) / kGrain * kGrain - kFirst;
}

TEST(LayoutSizeSfdiskTest, PartalignReadsEverySizeAsTheRealSfdiskDoes) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kImage);
  for (const char* text :
       {"100000", "0x800", "2048", "512M", "512MiB", "100MB", "1G", "2g", "1.5G", "0.5G", "1.50G",
        "2.5GiB", "1.5MB", "1.25G", "0.125G", "1.05G", "1.0G", "1.G", "64m"}) {
    Result<SfdiskSize> ours = ParseSfdiskSize(text);
    ASSERT_TRUE(ours) << text << ": " << ours.error().message;
    const int64_t theirs = SfdiskSectors(image, text);
    ASSERT_GE(theirs, 0) << text << ": sfdisk refused it";
    if (ours->sectors) {
      EXPECT_EQ(static_cast<uint64_t>(theirs), ours->value) << text;
      continue;
    }
    // sfdisk may read a decimal up to a byte per digit short of it.
    const std::string s(text);
    const size_t point = s.find('.');
    const size_t digits =
        point == std::string::npos ? 0 : s.find_first_not_of("0123456789", point + 1) - point - 1;
    bool same = false;
    for (uint64_t shortfall = 0; shortfall <= digits && !same; ++shortfall) {
      same = static_cast<uint64_t>(theirs) == AlignedSectors(ours->value - shortfall);
    }
    EXPECT_TRUE(same) << text << ": partalign reads " << ours->value << " bytes, sfdisk made "
                      << theirs << " sectors";
  }
}

TEST(LayoutSizeSfdiskTest, WhatPartalignRefusesSfdiskReadsAsTheRefusalSays) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, kImage);
  for (const char* text : {"1.3G", "1.10G", "1.4G", "1.9GiB", "1.3gb"}) {
    Result<SfdiskSize> ours = ParseSfdiskSize(text);
    ASSERT_FALSE(ours) << text;
    std::smatch m;
    const std::string message = ours.error().message;
    ASSERT_TRUE(std::regex_search(message, m, std::regex("sfdisk reads it as (\\d+) bytes")))
        << message;
    EXPECT_EQ(static_cast<uint64_t>(SfdiskSectors(image, text)), AlignedSectors(std::stoull(m[1])))
        << text << ": " << message;
  }
  // A leading 0 is octal to sfdisk: 010 is 8 sectors, as the refusal says.
  Result<SfdiskSize> octal = ParseSfdiskSize("010");
  ASSERT_FALSE(octal);
  EXPECT_NE(octal.error().message.find("(8, not 10)"), std::string::npos);
  EXPECT_EQ(SfdiskSectors(image, "010"), 8);
  // sfdisk refuses a decimal without a unit and a percentage; so does partalign.
  for (const char* text : {"1.5", "10%"}) {
    EXPECT_EQ(SfdiskSectors(image, text), -1) << text;
    EXPECT_FALSE(ParseSfdiskSize(text)) << text;
  }
}

// plan --layout and explain --layout read a bare number as sectors: size=100000 is 48.83 MiB,
// rounded up to the grain, not 98 KiB.
TEST(LayoutSizeSfdiskTest, PlanLayoutTakesABareNumberAsSectors) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, 256ull << 20);
  test::CommandResult r =
      test::RunPartalign({"plan", "--layout", "size=100000;size=1.5M", "--json", image});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  nlohmann::json parts = nlohmann::json::parse(r.out)["layout"]["partitions"];
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0]["end_sector"].get<uint64_t>() - parts[0]["start_sector"].get<uint64_t>() + 1,
            100352u);  // 100000 sectors, rounded up to whole MiB
  EXPECT_EQ(parts[1]["end_sector"].get<uint64_t>() - parts[1]["start_sector"].get<uint64_t>() + 1,
            4096u);  // 1.5 MiB, rounded up to 2 MiB
  test::CommandResult e =
      test::RunPartalign({"explain", "--layout", "size=100000", "--json", image});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  bool sfdisk_row = false;
  const nlohmann::json explained = nlohmann::json::parse(e.out);
  for (const nlohmann::json& p : explained["layout_predictions"]) {
    if (p["tool"] != "sfdisk") continue;
    sfdisk_row = true;
    // The tools are asked for 100000 sectors' worth: 51200000 bytes.
    EXPECT_NE(p["command"].dump().find("size=50000KiB"), std::string::npos) << p["command"].dump();
  }
  EXPECT_TRUE(sfdisk_row) << e.out;
}

}  // namespace
}  // namespace partalign
