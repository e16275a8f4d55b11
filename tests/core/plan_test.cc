#include "partalign/plan.h"

#include <gtest/gtest.h>

#include "partalign/units.h"

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
  Result<Plan> back = PlanFromJson(j.dump());
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
  };
  for (const Case& c : cases) {
    Result<Plan> p = PlanFromJson(c.text);
    ASSERT_FALSE(p) << c.message_part;
    EXPECT_NE(p.error().message.find(c.message_part), std::string::npos)
        << "want '" << c.message_part << "', got '" << p.error().message << "'";
  }
}

}  // namespace
}  // namespace partalign
