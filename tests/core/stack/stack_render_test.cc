// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/stack/stack_render.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "partalign/stack/stack_check.h"

namespace partalign {
namespace {

StackWalk Walk() {
  StackWalk walk;
  StackLayer pv;
  pv.kind = LayerKind::kLvmPv;
  pv.name = "LVM2 PV (VG vg0)";
  pv.data_offset_bytes = (1u << 20) + 1052160;
  pv.offset_in_parent_bytes = 1052160;
  pv.geometry.extent_size_bytes = 4u << 20;
  pv.properties = {{"vg", "vg0"}, {"pe_start_bytes", 1052160}};
  StackLayer fs;
  fs.kind = LayerKind::kFilesystem;
  fs.name = "ext4";
  fs.depth = 1;
  fs.data_offset_bytes = pv.data_offset_bytes;
  fs.geometry.block_size_bytes = 4096;
  fs.notes = {"a note"};
  walk.layers = {pv, fs};
  walk.errors = {"LVM2 metadata area at byte 1040384: no metadata area header (wrong magic)"};
  Topology t;
  t.physical_sector_size = 4096;
  t.minimum_io_size = 4096;
  CheckStack(&walk, t, 1u << 20);
  return walk;
}

TEST(StackRenderTest, JsonHasTheIssuesKeys) {
  nlohmann::json j = StackJson(Walk());
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 2u);
  const nlohmann::json& pv = j[0];
  EXPECT_EQ(pv["layer"], "lvm2_pv");
  EXPECT_EQ(pv["data_offset_bytes"], 2100736u);
  EXPECT_EQ(pv["offset_in_parent_bytes"], 1052160u);
  EXPECT_EQ(pv["aligned"], false);
  EXPECT_EQ(pv["checks"]["four_kib"], false);
  EXPECT_TRUE(pv["checks"]["optimal_io"].is_null());
  EXPECT_EQ(pv["geometry"]["extent_size_bytes"], 4194304u);
  EXPECT_TRUE(pv["geometry"]["stripe_unit_bytes"].is_null());
  EXPECT_EQ(pv["properties"]["vg"], "vg0");
  EXPECT_EQ(pv["properties"]["pe_start_bytes"], 1052160);
  EXPECT_FALSE(pv["reasons"].empty());
  EXPECT_EQ(pv["required_checks"], nlohmann::json({"four_kib", "physical_sector", "minimum_io",
                                                   "optimal_io", "layer_below"}));
  EXPECT_EQ(j[1]["depth"], 1);
  EXPECT_EQ(j[1]["notes"][0], "a note");
}

TEST(StackRenderTest, TheTreeIndentsByDepth) {
  std::vector<std::string> lines = StackTreeLines(Walk(), "  ");
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines[0], "  LVM2 PV (VG vg0): data at byte 2100736 (+1052160) NOT ALIGNED");
  EXPECT_EQ(lines[1].rfind("    - LVM2 PV (VG vg0) data starts at byte 2100736", 0), 0u);
  bool fs_line = false;
  for (const std::string& l : lines) fs_line |= l.rfind("    ext4: data at byte 2100736", 0) == 0;
  EXPECT_TRUE(fs_line);
  EXPECT_EQ(lines.back(),
            "  cannot read further: LVM2 metadata area at byte 1040384: no metadata area header "
            "(wrong magic)");
}

}  // namespace
}  // namespace partalign
