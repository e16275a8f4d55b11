// SPDX-License-Identifier: GPL-3.0-or-later
// Hand-edited plan files (issue 11, item 9): a partition twice, grain_bytes 3, an unaligned new
// start, offset_bytes near 2^64, a data partition "moved" as table-only, a table that overlaps.
// apply refuses each with one line before anything is written (the image is byte-identical, no
// backup is made), and the unedited plan applies afterwards: the check was the only obstacle.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>

#include <fmt/format.h>

#include "support/device_test.h"
#include "support/partitioned_loop.h"
#include "support/plan_mutations.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::RunCommand;
using test::RunPartalign;

constexpr int kFailure = 1;
constexpr int kRefused = 3;

// Partition 1 misaligned and empty (table-only), partition 2 misaligned with an ext4
// filesystem (move-data), partition 3 aligned.
const char* kScript =
    "label: gpt\n"
    "start=2049, size=8191, type=linux\n"
    "start=12289, size=20000, type=linux\n"
    "start=40960, size=20480, type=linux\n";

class ApplyPlanCheckTest : public ::testing::Test {
 protected:
  // The image, a copy of it, and the plan `partalign plan` makes for it.
  void SetUp() override {
    PARTALIGN_REQUIRE_DEVICES();
    test::CreateSparseFile(image_, 64ull << 20);
    test::SfdiskImage(image_, kScript, 512);
    test::RunOrThrow({"mkfs.ext4", "-q", "-F", "-b", "1024", "-E",
                      "offset=" + std::to_string(12289 * 512), image_, "8000"});
    test::RunOrThrow({"cp", "--sparse=always", image_, before_});
    CommandResult made = RunPartalign({"plan", "-o", good_file_, image_});
    ASSERT_EQ(made.exit_code, 0) << made.out << made.err;
    good_ = nlohmann::json::parse(test::ReadFile(good_file_));
    ASSERT_EQ(good_["actions"][0]["kind"], "table-only") << good_.dump(1);
    ASSERT_EQ(good_["actions"][1]["kind"], "move-data") << good_.dump(1);
  }

  // The good plan with `edit` made to it.
  std::string Edited(const std::function<void(nlohmann::json&)>& edit) const {
    nlohmann::json plan = good_;
    edit(plan);
    return plan.dump(1);
  }

  // apply of the plan file `text` exits `exit_code` with `message` on one line (unless
  // `one_line` is false), before anything is written.
  void ExpectRefused(const char* what, const std::string& text, int exit_code,
                     const std::string& message, bool one_line = true) const {
    SCOPED_TRACE(what);
    test::WriteFile(edited_file_, text);
    CommandResult r = RunPartalign({"apply", "--yes", "--backup-dir", backups_, edited_file_});
    EXPECT_EQ(r.exit_code, exit_code) << r.out << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << message << "\n" << r.err;
    EXPECT_NE(r.err.find("nothing was written"), std::string::npos) << r.err;
    if (one_line) {
      EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    }
    EXPECT_EQ(test::CmpFiles(image_, before_), "");
    EXPECT_TRUE(test::FilesIn(backups_, ".partalign-backup").empty());
  }

  // The unedited plan applies: the checks were the only obstacle.
  void ExpectTheGoodPlanApplies() const {
    CommandResult r = RunPartalign({"apply", "--yes", "--journal-dir", dir_.File("journals"),
                                    "--backup-dir", backups_, good_file_});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  }

  test::TempDir dir_;
  const std::string image_ = dir_.File("disk.img");
  const std::string before_ = dir_.File("before.img");
  const std::string good_file_ = dir_.File("plan.json");
  const std::string edited_file_ = dir_.File("edited.json");
  const std::string backups_ = dir_.File("backups");
  nlohmann::json good_;
};

TEST_F(ApplyPlanCheckTest, HandEditedPlansAreRefusedBeforeAnyWrite) {
  auto expect_refused = [&](const char* what, std::function<void(nlohmann::json&)> edit,
                            const std::string& message) {
    ExpectRefused(what, Edited(edit), kFailure, message);
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
  ExpectTheGoodPlanApplies();
}

// Issue 37: a plan file is a claim, never an instruction. What the issue did by hand - 4 KiB
// to move for an ext4, a higher start with the end kept, a key twice, "discarded" edited in -
// is refused before anything is written, naming the field and both values; the plan's own file
// still applies.
TEST_F(ApplyPlanCheckTest, ClaimsThatDifferFromTheDiskAreRefusedNamingTheField) {
  const uint64_t bytes = good_["actions"][1]["bytes_to_move"];
  const uint64_t end = good_["actions"][1]["new_end_sector"];
  ExpectRefused("4 KiB to move for the ext4",
                Edited([](nlohmann::json& j) { j["actions"][1]["bytes_to_move"] = 4096; }),
                kRefused,
                fmt::format("actions[1].bytes_to_move: the plan says 4096, partition 2 needs {} "
                            "(ext4 of ",
                            bytes));
  // A start higher than the filesystem allows, the end kept.
  const uint64_t start = (end - 12000) / 2048 * 2048;
  ExpectRefused("a higher start with the end kept", Edited([&](nlohmann::json& j) {
                  j["actions"][1]["new_start_sector"] = start;
                  j["actions"][1]["bytes_to_move"] = (end - start + 1) * 512;
                }),
                kRefused,
                fmt::format("partition 2: sectors {}-{} ({} sectors) are fewer than it keeps: "
                            "its ext4 filesystem needs 16000 sectors",
                            start, end, end - start + 1));
  ExpectRefused("bytes_to_move twice, the last one 4 KiB",
                test::DumpWithDuplicateKey(
                    good_, nlohmann::json::json_pointer("/actions/1/bytes_to_move"), 4096),
                kFailure, "actions[1].bytes_to_move: appears twice");
  ExpectRefused("\"discarded\" edited in", Edited([](nlohmann::json& j) {
                  j["actions"][1]["kind"] = "table-only";
                  j["actions"][1]["bytes_to_move"] = 0;
                  j["actions"][1]["empty"] = "discarded";
                }),
                kRefused,
                fmt::format("partition 2: the plan gives up its contents (\"empty\": "
                            "\"discarded\"), which only you can say, not a file: 'partalign "
                            "apply --discard 2 {}' gives them up",
                            edited_file_),
                /*one_line=*/false);
  ExpectRefused("a table-only move called move-data", Edited([](nlohmann::json& j) {
                  j["actions"][0]["kind"] = "move-data";
                  j["actions"][0]["bytes_to_move"] = 512;
                  j["actions"][0].erase("empty");
                }),
                kRefused, "actions[0].kind: the plan says move-data, partition 1 needs table-only",
                /*one_line=*/false);
  ExpectTheGoodPlanApplies();
}

}  // namespace
}  // namespace partalign
