// SPDX-License-Identifier: GPL-3.0-or-later
#include "partalign/layout/plan.h"

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "partalign/util/units.h"

namespace partalign {
namespace {

Plan Example() {
  Plan plan;
  plan.disk = {"/dev/sdb", 8ull << 30, 512, "WD-123", ""};
  plan.topology.logical_sector_size = 512;
  plan.topology.physical_sector_size = 4096;
  plan.topology.minimum_io_size = 4096;
  plan.topology.optimal_io_size = 33553920;
  plan.topology.size_bytes = 8ull << 30;
  plan.topology.origin = TopologyOrigin::kKernel;
  plan.label = LabelType::kGpt;
  plan.table_fingerprint = "xxh64:0123456789abcdef";
  plan.alignment = {kMiB, 0};
  plan.actions = {
      {1, 63, 20062, 2048, 22047, ActionKind::kMoveData, 20000 * 512, "start 63 is not aligned"},
      {2, 65535, 106494, 106496, 147455, ActionKind::kTableOnly, 0, "no data"},
      {3, 147456, 167935, 147456, 167935, ActionKind::kNone, 0, "aligned"},
  };
  return plan;
}

TEST(PlanTest, JsonRoundTripsExactly) {
  Plan plan = Example();
  nlohmann::json j = PlanToJson(plan);
  EXPECT_EQ(j["format"], "partalign-plan");
  EXPECT_EQ(j["format_version"], 1);
  EXPECT_EQ(j["actions"][0]["kind"], "move-data");
  EXPECT_EQ(j["actions"][1]["kind"], "table-only");
  EXPECT_TRUE(j["disk"]["wwn"].is_null());
  EXPECT_FALSE(j["disk"].contains("table_id"));  // no identifier known: no key
  Result<Plan> back = PlanFromJson(j.dump());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, plan);
  // The table's disk GUID, what tells another disk from this one changed.
  plan.disk.table_id = "3A0B3E5C-7F37-4B43-8C2E-1D7A0F5E9B11";
  j = PlanToJson(plan);
  EXPECT_EQ(j["disk"]["table_id"], plan.disk.table_id);
  back = PlanFromJson(j.dump());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, plan);
}

TEST(PlanTest, RejectsBrokenFilesNamingTheKey) {
  const std::string good = PlanToJson(Example()).dump();
  struct Case {
    std::string text;
    std::string message_part;
  };
  auto edit = [&](auto change) {
    nlohmann::json j = nlohmann::json::parse(good);
    change(j);
    return j.dump();
  };
  std::vector<Case> cases = {
      {good.substr(0, good.size() / 2), "not valid JSON"},
      {"[]", "not a JSON object"},
      {edit([](nlohmann::json& j) { j["format"] = "sfdisk"; }), "format is 'sfdisk'"},
      {edit([](nlohmann::json& j) { j["format_version"] = 99; }), "format_version 99"},
      {edit([](nlohmann::json& j) { j.erase("table_fingerprint"); }), "table_fingerprint: missing"},
      {edit([](nlohmann::json& j) { j["disk"].erase("size_bytes"); }), "disk.size_bytes: missing"},
      {edit([](nlohmann::json& j) { j["actions"][1]["new_start_sector"] = "2048"; }),
       "actions[1].new_start_sector: not a non-negative integer"},
      {edit([](nlohmann::json& j) { j["actions"][0]["kind"] = "shuffle"; }),
       "actions[0].kind: unknown value 'shuffle'"},
      {edit([](nlohmann::json& j) { j["actions"][0]["new_end_sector"] = 5; }), "end before start"},
      {edit([](nlohmann::json& j) { j["actions"][2]["new_end_sector"] = 1ull << 40; }),
       "actions[2]: beyond the end of the disk"},
      {edit([](nlohmann::json& j) { j["grain_bytes"] = 0; }), "grain_bytes: is 0"},
      {edit([](nlohmann::json& j) { j["label"] = "bsd"; }), "label: unknown value 'bsd'"},
      {edit([](nlohmann::json& j) { j["topology"]["source"] = "magic"; }), "topology.source"},
      {edit([](nlohmann::json& j) { j["actions"][0]["partition"] = -1; }),
       "actions[0].partition: not a non-negative integer"},
      // Hand-edited plans (issue 11): every value is checked against what it may be.
      {edit([](nlohmann::json& j) { j["actions"][2]["partition"] = 1; }),
       "actions[2].partition: 1 appears twice in the actions"},
      {edit([](nlohmann::json& j) { j["grain_bytes"] = 3; }),
       "grain_bytes: 3 is not a multiple of the logical sector size 512"},
      {edit([](nlohmann::json& j) { j["offset_bytes"] = 18446744073709551104ull; }),
       "offset_bytes: 18446744073709551104 is not a multiple of the logical sector size 512 "
       "below grain_bytes 1048576"},
      {edit([](nlohmann::json& j) { j["actions"][2]["new_start_sector"] = 147457; }),
       "actions[2].kind: 'none' but the new sectors differ from the old ones"},
      {edit([](nlohmann::json& j) { j["actions"][1]["bytes_to_move"] = 512; }),
       "actions[1].bytes_to_move: 512 for a 'table-only' action, which moves no data"},
      {edit([](nlohmann::json& j) { j["actions"][0]["bytes_to_move"] = 0; }),
       "actions[0].bytes_to_move: 0 is not between 1 and the partition's 10240000 bytes"},
      {edit([](nlohmann::json& j) { j["actions"][0]["new_start_sector"] = 63; }),
       "actions[0].kind: 'move-data' but the start does not move"},
      {edit([](nlohmann::json& j) {
         j["actions"][1]["new_start_sector"] = 65535;
         j["actions"][1]["new_end_sector"] = 106494;
       }),
       "actions[1].kind: 'table-only' but nothing changes"},
  };
  for (const Case& c : cases) {
    Result<Plan> p = PlanFromJson(c.text);
    ASSERT_FALSE(p) << c.message_part;
    EXPECT_NE(p.error().message.find(c.message_part), std::string::npos)
        << "want '" << c.message_part << "', got '" << p.error().message << "'";
  }
}

Plan LayoutExample() {
  Plan plan = Example();
  plan.label = LabelType::kNone;
  plan.actions.clear();
  PlanLayout layout;
  layout.label = LabelType::kGpt;
  layout.first_usable_lba = 2048;
  layout.last_usable_lba = (8ull << 30) / 512 - 34;
  layout.partitions = {
      {1, 2048, 1050623, "C12A7328-F81F-11D2-BA4B-00A0C93EC93B", "ESP", "", false},
      {2, 1050624, 16775167, "0FC63DAF-8483-4772-8E79-3D69D8477DE4", "", "RequiredPartition",
       false},
  };
  plan.layout = layout;
  return plan;
}

TEST(PlanTest, PlansWithoutALayoutHaveNoLayoutKey) {
  EXPECT_FALSE(PlanToJson(Example()).contains("layout"));
}

// A GPT copied from a 4 GiB disk onto this 8 GiB one: the backup moves to the end.
Plan RelocationExample() {
  Plan plan = Example();
  plan.relocate_backup_gpt =
      BackupGptRelocation{(4ull << 21) - 1, (8ull << 21) - 1, (4ull << 21) - 34, (8ull << 21) - 34};
  return plan;
}

TEST(PlanTest, BackupRelocationRoundTripsAndIsAbsentWhenNotNeeded) {
  EXPECT_FALSE(PlanToJson(Example()).contains("relocate_backup_gpt"));
  Plan plan = RelocationExample();
  nlohmann::json j = PlanToJson(plan);
  EXPECT_EQ(j["relocate_backup_gpt"]["to_lba"], (8ull << 21) - 1);
  Result<Plan> back = PlanFromJson(j.dump());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, plan);
}

TEST(PlanTest, RejectsBrokenBackupRelocationsNamingTheKey) {
  const std::string good = PlanToJson(RelocationExample()).dump();
  auto edit = [&](auto change) {
    nlohmann::json j = nlohmann::json::parse(good);
    change(j["relocate_backup_gpt"]);
    return PlanFromJson(j.dump());
  };
  struct Case {
    std::function<void(nlohmann::json&)> change;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {[](nlohmann::json& r) { r.erase("from_lba"); }, "relocate_backup_gpt.from_lba"},
      {[](nlohmann::json& r) { r["to_lba"] = 12345; }, "not the last sector of the disk"},
      {[](nlohmann::json& r) { r["from_lba"] = (8ull << 21) - 1; }, "not in the order"},
      {[](nlohmann::json& r) { r["new_last_usable_lba"] = 100; }, "not in the order"},
  };
  for (const Case& c : cases) {
    Result<Plan> r = edit(c.change);
    ASSERT_FALSE(r) << c.expected;
    EXPECT_NE(r.error().message.find(c.expected), std::string::npos) << r.error().message;
  }
  nlohmann::json dos = nlohmann::json::parse(good);
  dos["label"] = "dos";
  Result<Plan> r = PlanFromJson(dos.dump());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("only for a plan on an existing GPT"), std::string::npos);
}

// Issue 39: a plan for the next boot says so in its file, and only a true value is accepted.
TEST(PlanTest, APlanForTheNextBootRoundTripsAndNothingElseSaysSo) {
  EXPECT_FALSE(PlanToJson(Example()).contains("at_next_boot"));
  Plan plan = Example();
  plan.at_next_boot = true;
  nlohmann::json j = PlanToJson(plan);
  EXPECT_EQ(j["at_next_boot"], true);
  Result<Plan> back = PlanFromJson(j.dump());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, plan);
  for (const nlohmann::json& bad : {nlohmann::json(false), nlohmann::json("yes")}) {
    j["at_next_boot"] = bad;
    Result<Plan> r = PlanFromJson(j.dump());
    ASSERT_FALSE(r) << bad.dump();
    EXPECT_NE(r.error().message.find("at_next_boot"), std::string::npos) << r.error().message;
  }
}

TEST(PlanTest, LayoutRoundTripsExactly) {
  Plan plan = LayoutExample();
  nlohmann::json j = PlanToJson(plan);
  EXPECT_EQ(j["layout"]["label"], "gpt");
  EXPECT_EQ(j["layout"]["partitions"][0]["name"], "ESP");
  EXPECT_TRUE(j["layout"]["partitions"][0]["attributes"].is_null());
  EXPECT_TRUE(j["layout"]["partitions"][1]["name"].is_null());
  EXPECT_TRUE(j["actions"].empty());
  Result<Plan> back = PlanFromJson(j.dump());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, plan);
}

TEST(PlanTest, RejectsBrokenLayoutsNamingTheKey) {
  const std::string good = PlanToJson(LayoutExample()).dump();
  auto edit = [&](auto change) {
    nlohmann::json j = nlohmann::json::parse(good);
    change(j);
    return j.dump();
  };
  std::vector<std::pair<std::string, std::string>> cases = {
      {edit([](nlohmann::json& j) { j["layout"] = 5; }), "layout: not an object"},
      {edit([](nlohmann::json& j) { j["layout"]["label"] = "bsd"; }), "layout.label: 'bsd'"},
      {edit([](nlohmann::json& j) { j["layout"].erase("partitions"); }),
       "layout.partitions: missing"},
      {edit([](nlohmann::json& j) { j["layout"]["partitions"][1].erase("type"); }),
       "layout.partitions[1].type: missing"},
      {edit([](nlohmann::json& j) { j["layout"]["partitions"][0]["bootable"] = "no"; }),
       "layout.partitions[0].bootable: not true or false"},
      {edit([](nlohmann::json& j) { j["layout"]["partitions"][1]["start_sector"] = 4096; }),
       "layout.partitions[1]: overlaps"},
      {edit([](nlohmann::json& j) { j["layout"]["partitions"][0]["start_sector"] = 34; }),
       "layout.partitions[0]: outside the usable area"},
      {edit([](nlohmann::json& j) { j["layout"]["last_usable_lba"] = 1ull << 40; }),
       "layout.first_usable_lba/last_usable_lba"},
      {edit([](nlohmann::json& j) { j["actions"] = PlanToJson(Example())["actions"]; }),
       "layout or actions, not both"},
  };
  for (const auto& [text, message_part] : cases) {
    Result<Plan> p = PlanFromJson(text);
    ASSERT_FALSE(p) << message_part;
    EXPECT_NE(p.error().message.find(message_part), std::string::npos)
        << "want '" << message_part << "', got '" << p.error().message << "'";
  }
}

}  // namespace
}  // namespace partalign
