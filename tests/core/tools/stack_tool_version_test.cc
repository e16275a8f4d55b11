// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/tools/stack_tool_version.h"

#include <gtest/gtest.h>

namespace partalign {
namespace {

TEST(StackToolVersionTest, ParsesWhatTheToolsPrint) {
  std::optional<ToolVersion> lvm = ParseStackToolVersionOutput(
      StackTool::kLvm2, "  LVM version:     2.03.16(2) (2022-05-18)\n  Library version: 1.02.185");
  ASSERT_TRUE(lvm);
  EXPECT_EQ(VersionText(StackTool::kLvm2, *lvm), "2.03.16");
  std::optional<ToolVersion> cs = ParseStackToolVersionOutput(
      StackTool::kCryptsetup, "cryptsetup 2.6.1 flags: UDEV BLKID KEYRING KERNEL_CAPI \n");
  ASSERT_TRUE(cs);
  EXPECT_EQ(VersionText(StackTool::kCryptsetup, *cs), "2.6.1");
  EXPECT_FALSE(ParseStackToolVersionOutput(StackTool::kLvm2, "something else"));
}

TEST(StackToolVersionTest, NamesTheEras) {
  EXPECT_EQ(EraOf(StackTool::kLvm2, {2, 2, 166, 3})->name, "lvm2 2.02.73-2.03.02");
  EXPECT_EQ(EraOf(StackTool::kLvm2, {2, 3, 16, 3})->name, "lvm2 2.03.03-2.03.30");
  EXPECT_EQ(EraOf(StackTool::kLvm2, NewestKnownVersion(StackTool::kLvm2))->name, "lvm2 >= 2.03.31");
  EXPECT_EQ(EraOf(StackTool::kCryptsetup, {2, 6, 1, 3})->name, "cryptsetup >= 2.3.4");
  EXPECT_FALSE(EraOf(StackTool::kLvm2, {2, 2, 50, 3}));
}

TEST(StackToolVersionTest, ParsesOverrides) {
  EXPECT_TRUE(IsStackToolOverride("pvcreate=2.02.166"));
  EXPECT_TRUE(IsStackToolOverride("cryptsetup=2.3.3"));
  EXPECT_FALSE(IsStackToolOverride("parted=3.5"));
  auto o = ParseStackToolVersionOverride("lvm2=2.02.166");
  ASSERT_TRUE(o);
  EXPECT_EQ(o->first, StackTool::kLvm2);
  EXPECT_EQ(o->second, (ToolVersion{2, 2, 166, 3}));
  EXPECT_FALSE(ParseStackToolVersionOverride("lvm2=2.02.40"));  // older than modelled
  EXPECT_FALSE(ParseStackToolVersionOverride("lvm2=two"));
  EXPECT_FALSE(ParseStackToolVersionOverride("lvm2"));
}

}  // namespace
}  // namespace partalign
