// SPDX-License-Identifier: GPL-3.0-or-later
// Every read-only command and apply on every image of the table corpus (tests/support/
// table_corpus.h, issue 11): nothing crashes or hangs, every refusal is one line naming the
// real problem, no command writes a byte of an image it refuses (or of any image, for the
// read-only commands), and apply never loses a partition (partx and sfdisk count them).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/device_test.h"
#include "support/partitioned_loop.h"
#include "support/run_command.h"
#include "support/table_corpus.h"
#include "support/table_images.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::CorpusCase;

const std::vector<CorpusCase>& Corpus() {
  static const std::vector<CorpusCase> corpus = test::TableCorpus();
  return corpus;
}

const CorpusCase& Case(const std::string& name) {
  for (const CorpusCase& c : Corpus()) {
    if (c.name == name) return c;
  }
  throw std::invalid_argument("no corpus case " + name);
}

// partalign with a time limit: a hang is exit 124, a crash 128 + the signal.
CommandResult RunTimed(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"timeout", "--kill-after=5", "60", PARTALIGN_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return test::RunCommand(argv);
}

std::string What(const std::vector<std::string>& args, const CommandResult& r) {
  std::string text = "partalign";
  for (const std::string& a : args) text += " " + a;
  return text + " -> exit " + std::to_string(r.exit_code) + "\n" + r.out + r.err;
}

// No crash, no hang; a failure is one line "partalign: ..." holding `expected` when given.
void ExpectSane(const std::vector<std::string>& args, const CommandResult& r) {
  EXPECT_NE(r.exit_code, 124) << "hung: " << What(args, r);
  EXPECT_LT(r.exit_code, 124) << "killed: " << What(args, r);
  if (r.exit_code == 1) {
    EXPECT_EQ(r.err.rfind("partalign: ", 0), 0u) << What(args, r);
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "not one line: " << What(args, r);
  }
}

void ExpectRefusal(const std::vector<std::string>& args, const CommandResult& r,
                   const std::string& expected) {
  EXPECT_EQ(r.exit_code, 1) << What(args, r);
  EXPECT_NE(r.err.find(expected), std::string::npos) << expected << "\n" << What(args, r);
}

// How many partitions partx (libblkid's reader, not libfdisk's) sees; -1 when it sees no table.
int PartxCount(const std::string& image) {
  CommandResult r = test::RunCommand({"partx", "--show", "--noheadings", "-o", "NR", image});
  if (r.exit_code != 0) return -1;
  int lines = 0;
  for (char c : r.out) lines += c == '\n';
  return lines;
}

class TableCorpusTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    test::WriteImageFile(Case(GetParam()).disk, image);
    test::RunOrThrow({"cp", "--sparse=always", image, before});
  }
  std::string Unchanged() const { return test::CmpFiles(image, before); }

  test::TempDir dir;
  std::string image = dir.File("disk.img");
  std::string before = dir.File("before.img");
};

TEST_P(TableCorpusTest, ReadOnlyCommandsRefuseInOneLineOrAnswer) {
  const CorpusCase& c = Case(GetParam());
  bool no_table = false;  // plan --json said so: no sfdisk script then
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"probe", image},
           {"probe", "--json", image},
           {"explain", image},
           {"explain", "--json", image},
           {"audit", image},
           {"audit", "--json", image},
           {"plan", image},
           {"plan", "--json", image},
           {"plan", "--format", "sfdisk", image},
       }) {
    SCOPED_TRACE(args[0]);
    const CommandResult r = RunTimed(args);
    ExpectSane(args, r);
    const bool json = args[1] == "--json";
    if (args[0] == "plan" && args[1] == "--json" && r.exit_code == 0) {
      no_table = nlohmann::json::parse(r.out)["label"] == "none";
    }
    if (args[0] == "audit") {
      if (c.audit_error.empty()) {
        EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 2) << What(args, r);
      } else {
        ExpectRefusal(args, r, c.audit_error);
      }
    } else if (args[0] == "plan") {
      if (c.plan_error.empty() && args[1] == "--format" && no_table) {
        ExpectRefusal(args, r, "no sfdisk script for a 'none' table");
      } else if (c.plan_error.empty()) {
        EXPECT_EQ(r.exit_code, 0) << What(args, r);
      } else {
        ExpectRefusal(args, r, c.plan_error);
      }
    } else if (c.audit_error.find("too small") != std::string::npos) {
      ExpectRefusal(args, r, c.audit_error);  // probe and explain read the disk's size too
    } else {
      EXPECT_EQ(r.exit_code, 0) << What(args, r);  // the topology is readable whatever the table
    }
    if (json && r.exit_code != 1) {
      EXPECT_EQ(r.out.substr(0, 1), "{") << What(args, r);
    }
    if (r.exit_code == 1) {
      EXPECT_EQ(r.out, "") << "a refusal prints nothing else: " << What(args, r);
    }
    EXPECT_EQ(Unchanged(), "") << What(args, r);
  }
}

TEST_P(TableCorpusTest, ApplyLosesNoPartitionAndWritesNothingWhenItRefuses) {
  PARTALIGN_REQUIRE_DEVICES();  // apply checks who uses the disk, as root
  const std::string plan_file = dir.File("plan.json");
  const int count = PartxCount(image);
  const std::vector<std::string> plan_args{"plan", "-o", plan_file, image};
  const CommandResult plan = RunTimed(plan_args);
  ExpectSane(plan_args, plan);
  if (plan.exit_code != 0) {
    // No plan: nothing to apply. Its error is checked above; no file was left behind.
    EXPECT_FALSE(std::filesystem::exists(plan_file)) << What(plan_args, plan);
    return;
  }
  const std::vector<std::string> apply_args{"apply", "--yes", "--backup-dir", dir.File("backups"),
                                            plan_file};
  const CommandResult apply = RunTimed(apply_args);
  ExpectSane(apply_args, apply);
  EXPECT_EQ(PartxCount(image), count) << "partitions lost or gained: " << What(apply_args, apply);
  if (apply.exit_code != 0) {
    EXPECT_EQ(Unchanged(), "") << "refused, yet wrote: " << What(apply_args, apply);
    return;
  }
  // Applied: the table is now one audit finds aligned, and every partition kept its number and
  // type (sfdisk's view before and after).
  const CommandResult audit = RunTimed({"audit", image});
  EXPECT_EQ(audit.exit_code, 0) << What({"audit", image}, audit);
  if (count > 0) {
    const nlohmann::json old_table = test::SfdiskJson(before)["partitions"];
    const nlohmann::json new_table = test::SfdiskJson(image)["partitions"];
    ASSERT_EQ(old_table.size(), new_table.size());
    for (size_t i = 0; i < old_table.size(); ++i) {
      EXPECT_EQ(old_table[i]["node"].get<std::string>().substr(before.size()),
                new_table[i]["node"].get<std::string>().substr(image.size()));
      EXPECT_EQ(old_table[i]["type"], new_table[i]["type"]) << i;
    }
  }
}

std::vector<std::string> CaseNames() {
  std::vector<std::string> names;
  for (const CorpusCase& c : Corpus()) names.push_back(c.name);
  return names;
}

// gtest names allow letters, digits and '_' only.
std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name;
  for (char ch : info.param) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, TableCorpusTest, ::testing::ValuesIn(CaseNames()), TestName);

}  // namespace
}  // namespace partalign
