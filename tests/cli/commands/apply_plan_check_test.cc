// SPDX-License-Identifier: GPL-3.0-or-later
// Hand-edited plan files (issue 11, item 9): a partition twice, grain_bytes 3, an unaligned new
// start, offset_bytes near 2^64, a data partition "moved" as table-only, a table that overlaps.
// apply refuses each with one line before anything is written (the image is byte-identical, no
// backup is made), and the unedited plan applies afterwards: the check was the only obstacle.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>

#include "support/device_test.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::RunCommand;
using test::RunPartalign;

constexpr int kFailure = 1;

// Partition 1 misaligned and empty (table-only), partition 2 misaligned with an ext4
// filesystem (move-data), partition 3 aligned.
const char* kScript =
    "label: gpt\n"
    "start=2049, size=8191, type=linux\n"
    "start=12289, size=20000, type=linux\n"
    "start=40960, size=20480, type=linux\n";

TEST(ApplyPlanCheckTest, HandEditedPlansAreRefusedBeforeAnyWrite) {
  PARTALIGN_REQUIRE_DEVICES();
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, 64ull << 20);
  test::SfdiskImage(image, kScript, 512);
  test::RunOrThrow({"mkfs.ext4", "-q", "-F", "-b", "1024", "-E",
                    "offset=" + std::to_string(12289 * 512), image, "8000"});
  const std::string before = dir.File("before.img");
  test::RunOrThrow({"cp", "--sparse=always", image, before});
  const std::string good_file = dir.File("plan.json");
  CommandResult made = RunPartalign({"plan", "-o", good_file, image});
  ASSERT_EQ(made.exit_code, 0) << made.out << made.err;
  const nlohmann::json good = nlohmann::json::parse(test::ReadFile(good_file));
  ASSERT_EQ(good["actions"][0]["kind"], "table-only") << good.dump(1);
  ASSERT_EQ(good["actions"][1]["kind"], "move-data") << good.dump(1);

  const std::string backups = dir.File("backups");
  auto expect_refused = [&](const char* what, std::function<void(nlohmann::json&)> edit,
                            const std::string& message) {
    SCOPED_TRACE(what);
    nlohmann::json plan = good;
    edit(plan);
    const std::string file = dir.File("edited.json");
    test::WriteFile(file, plan.dump(1));
    CommandResult r = RunPartalign({"apply", "--yes", "--backup-dir", backups, file});
    EXPECT_EQ(r.exit_code, kFailure) << r.out << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << message << "\n" << r.err;
    EXPECT_NE(r.err.find("nothing was written"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    EXPECT_EQ(test::CmpFiles(image, before), "");
    EXPECT_TRUE(test::FilesIn(backups, ".partalign-backup").empty());
  };
  expect_refused(
      "the same partition twice",
      [](nlohmann::json& j) { j["actions"].push_back(j["actions"][0]); },
      "actions[3].partition: 1 appears twice in the actions");
  expect_refused(
      "grain_bytes 3", [](nlohmann::json& j) { j["grain_bytes"] = 3; },
      "grain_bytes: 3 is not a multiple of the logical sector size 512");
  expect_refused(
      "offset_bytes near 2^64",
      [](nlohmann::json& j) { j["offset_bytes"] = 18446744073709551000ull; },
      "offset_bytes: 18446744073709551000 is not a multiple of the logical sector size "
      "512 below grain_bytes 1048576");
  expect_refused(
      "an unaligned new start",
      [](nlohmann::json& j) {
        j["actions"][0]["new_start_sector"] = 2050;
        j["actions"][0]["new_end_sector"] = 10239;
      },
      "partition 1: new start sector 2050 is not on the plan's alignment (grain 1048576 bytes, "
      "offset 0 bytes)");
  expect_refused(
      "data moved as table-only",
      [](nlohmann::json& j) {
        j["actions"][1]["kind"] = "table-only";
        j["actions"][1]["bytes_to_move"] = 0;
      },
      "partition 2 holds data (ext4) but the plan moves its start as 'table-only'");
  expect_refused(
      "an overlapping table",
      [](nlohmann::json& j) {
        j["actions"][0]["new_end_sector"] = 14335;  // into partition 2's new place
      },
      "the table the plan asks for is not valid: partitions 1 (sectors 2048-14335) and 2");
  expect_refused(
      "kind none that moves",
      [](nlohmann::json& j) { j["actions"][2]["new_start_sector"] = 43008; },
      "actions[2].kind: 'none' but the new sectors differ from the old ones");
  expect_refused(
      "bytes to move beyond the partition",
      [](nlohmann::json& j) { j["actions"][1]["bytes_to_move"] = 1ull << 40; },
      "actions[1].bytes_to_move: 1099511627776 is not between 1 and the partition's");

  // The unedited plan applies: the checks were the only obstacle.
  CommandResult r = RunPartalign({"apply", "--yes", "--journal-dir", dir.File("journals"),
                                  "--backup-dir", backups, good_file});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

}  // namespace
}  // namespace partalign
