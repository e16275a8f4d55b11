// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/tool_version.h"

#include <gtest/gtest.h>

namespace partalign {
namespace {

TEST(ToolVersionTest, ParsesAndCompares) {
  ToolVersion v = *ParseToolVersion("2.38.1");
  EXPECT_EQ(v.major, 2u);
  EXPECT_EQ(v.minor, 38u);
  EXPECT_EQ(v.patch, 1u);
  EXPECT_EQ(v.ToString(), "2.38.1");
  EXPECT_EQ(ParseToolVersion("3.5")->ToString(), "3.5");
  EXPECT_EQ(ParseToolVersion("252")->ToString(), "252");
  EXPECT_EQ(ParseToolVersion("3.4.64.2")->ToString(), "3.4.64");
  EXPECT_EQ(ParseToolVersion("2.39-rc1")->ToString(), "2.39");
  EXPECT_LT(*ParseToolVersion("2.9"), *ParseToolVersion("2.27"));
  EXPECT_EQ(*ParseToolVersion("3.5"), *ParseToolVersion("3.5.0"));
  EXPECT_FALSE(ParseToolVersion("").has_value());
  EXPECT_FALSE(ParseToolVersion("v3").has_value());
}

TEST(ToolVersionTest, ReadsEachToolsVersionOutput) {
  EXPECT_EQ(
      ParseVersionOutput(Tool::kParted, "parted (GNU parted) 3.5\nCopyright (C) 2022 Free Software")
          ->ToString(),
      "3.5");
  EXPECT_EQ(ParseVersionOutput(Tool::kUtilLinux, "sfdisk from util-linux 2.38.1\n")->ToString(),
            "2.38.1");
  EXPECT_EQ(ParseVersionOutput(Tool::kGptfdisk, "GPT fdisk (sgdisk) version 1.0.9\n\n")->ToString(),
            "1.0.9");
  EXPECT_EQ(
      ParseVersionOutput(Tool::kSystemd, "systemd 252 (252.39-1~deb12u2)\n+PAM +AUDIT")->ToString(),
      "252");
  EXPECT_FALSE(ParseVersionOutput(Tool::kParted, "sfdisk from util-linux 2.38.1"));
}

TEST(ToolVersionTest, ErasCoverEveryVersionFromTheFirst) {
  for (Tool t : {Tool::kParted, Tool::kUtilLinux, Tool::kGptfdisk, Tool::kSystemd}) {
    const std::vector<ToolEra>& eras = Eras(t);
    ASSERT_FALSE(eras.empty());
    for (size_t i = 0; i + 1 < eras.size(); ++i) {
      ASSERT_TRUE(eras[i].before.has_value()) << eras[i].name;
      EXPECT_EQ(*eras[i].before, eras[i + 1].since) << eras[i].name;
    }
    EXPECT_FALSE(eras.back().before.has_value());
    EXPECT_EQ(EraOf(t, NewestKnownVersion(t))->name, eras.back().name);
  }
  EXPECT_EQ(EraOf(Tool::kParted, *ParseToolVersion("3.5"))->name, "parted >= 3.3");
  EXPECT_EQ(EraOf(Tool::kParted, *ParseToolVersion("2.3"))->name, "parted 2.2-2.3");
  EXPECT_EQ(EraOf(Tool::kUtilLinux, *ParseToolVersion("2.36.2"))->name, "util-linux 2.36");
  EXPECT_EQ(EraOf(Tool::kSystemd, *ParseToolVersion("252"))->name, "systemd-repart 245-252");
  EXPECT_FALSE(EraOf(Tool::kParted, *ParseToolVersion("1.8.8")).has_value());
}

TEST(ToolVersionTest, OverridesAcceptCommandNames) {
  auto o = ParseToolVersionOverride("parted=2.3");
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->first, Tool::kParted);
  EXPECT_EQ(o->second.ToString(), "2.3");
  EXPECT_EQ(ParseToolVersionOverride("fdisk=2.36")->first, Tool::kUtilLinux);
  EXPECT_EQ(ParseToolVersionOverride("sgdisk=1.0.9")->first, Tool::kGptfdisk);
  EXPECT_EQ(ParseToolVersionOverride("repart=252")->first, Tool::kSystemd);
  EXPECT_FALSE(ParseToolVersionOverride("parted").has_value());
  EXPECT_FALSE(ParseToolVersionOverride("mkfs=1.0").has_value());
  EXPECT_FALSE(ParseToolVersionOverride("parted=x").has_value());
  EXPECT_FALSE(ParseToolVersionOverride("parted=1.8").has_value());
  EXPECT_FALSE(ParseToolVersionOverride("parted=3.5-rc1").has_value());
}

}  // namespace
}  // namespace partalign
