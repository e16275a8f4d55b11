// SPDX-License-Identifier: GPL-3.0-or-later
// Command and option typos (issue 40, item 2): the word at fault is named with the name it was
// most likely meant to be, and a valid argument is never blamed. Nothing runs: exit 1.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

using test::CommandResult;
using test::RunPartalign;

// Exit 1, the message on stderr, nothing on stdout, and the help to read.
void ExpectNamed(const std::vector<std::string>& args, const std::string& message,
                 const std::string& help) {
  CommandResult r = RunPartalign(args);
  EXPECT_EQ(r.exit_code, 1) << test::Describe(args, r);
  EXPECT_EQ(r.out, "") << test::Describe(args, r);
  EXPECT_NE(r.err.find("partalign: " + message + "\n"), std::string::npos)
      << "expected: " << message << "\n"
      << test::Describe(args, r);
  EXPECT_NE(r.err.find("Try '" + help + "' for more information."), std::string::npos)
      << test::Describe(args, r);
}

TEST(TypoTest, ACommandTypoNamesTheCommand) {
  ExpectNamed({"plna", "disk.img"}, "unknown command 'plna'; did you mean 'plan'?",
              "partalign --help");
  ExpectNamed({"aduit"}, "unknown command 'aduit'; did you mean 'audit'?", "partalign --help");
  ExpectNamed({"frobnicate"}, "unknown command 'frobnicate'", "partalign --help");
}

TEST(TypoTest, AnOptionTypoIsNamedNotTheTargetAfterIt) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, 64ull << 20);
  const std::string out = dir.File("x.json");
  ExpectNamed({"plan", "--outptu", out, image},
              "plan: unknown option '--outptu'; did you mean '--output'?", "partalign plan --help");
  ExpectNamed({"plan", "--gran", "4M", image},
              "plan: unknown option '--gran'; did you mean '--grain'?", "partalign plan --help");
  ExpectNamed({"audit", "--gran=4M", image},
              "audit: unknown option '--gran'; did you mean '--grain'?", "partalign audit --help");
  // A zero for the letter o.
  ExpectNamed({"plan", "-0", out, image}, "plan: unknown option '-0'; did you mean '-o'?",
              "partalign plan --help");
  // Another command's option: whose it is.
  ExpectNamed({"plan", "--journal-dir", dir.path(), image},
              "plan: unknown option '--journal-dir' (an option of 'partalign apply')",
              "partalign plan --help");
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(TypoTest, ValidArgumentsAreNotTakenForTypos) {
  test::TempDir dir;
  const std::string image = dir.File("disk.img");
  test::CreateSparseFile(image, 64ull << 20);
  // Option values that look like options, attached values, "--" and --help pass through.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"audit", "--grain=1M", "--format", "json", image},
        std::vector<std::string>{"audit", "-o", dir.File("a.txt"), "--", image},
        std::vector<std::string>{"plan", "-o" + dir.File("p.json"), image},
        std::vector<std::string>{"explain", "--help"}, std::vector<std::string>{"--version"}}) {
    CommandResult r = RunPartalign(args);
    EXPECT_EQ(r.err.find("unknown"), std::string::npos) << test::Describe(args, r);
    EXPECT_EQ(r.exit_code, 0) << test::Describe(args, r);
  }
}

}  // namespace
}  // namespace partalign
