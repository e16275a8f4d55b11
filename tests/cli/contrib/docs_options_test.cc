// SPDX-License-Identifier: GPL-3.0-or-later
// The Markdown docs name only options that exist (issue #30 item 4: docs/interactive.md named
// `probe --profiles`; the option is `--list-profiles`). Every command in backticks in docs/*.md
// and README.md (`partalign plan --grain 4M DISK`, `probe --list-profiles`) is checked: each
// --option after the subcommand must be one its real --help lists.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <unistd.h>

#include "support/run_command.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kSubcommands{"probe",   "explain",   "audit", "plan",   "apply",
                                            "restore", "resume",    "bench", "report", "snapshot",
                                            "verify",  "translate", "demo"};

// The long options `partalign SUB --help` lists.
std::set<std::string> OptionsOf(const std::string& sub) {
  test::CommandResult help = test::RunPartalign({sub, "--help"});
  EXPECT_EQ(help.exit_code, 0) << sub << ": " << help.err;
  std::set<std::string> options;
  static const std::regex kOption("--[a-z0-9][a-z0-9-]*");
  for (std::sregex_iterator it(help.out.begin(), help.out.end(), kOption), end; it != end; ++it) {
    options.insert(it->str());
  }
  return options;
}

// "docs/x.md:12: `probe --profiles`: probe has no --profiles" for each option a span in
// backticks gives a subcommand that its --help does not list.
std::vector<std::string> UnknownOptions(const fs::path& file,
                                        std::map<std::string, std::set<std::string>>* options,
                                        size_t* checked) {
  std::string alternatives;
  for (const std::string& s : kSubcommands) alternatives += (alternatives.empty() ? "" : "|") + s;
  const std::regex span_re("`([^`]+)`");
  const std::regex command_re("^(?:partalign\\s+)?(" + alternatives + ")\\b(.*)$");
  // An option word: not part of a longer word ("sfdisk--x" is not one).
  const std::regex option_re("(^|[\\s\\[(])(--[a-z0-9][a-z0-9-]*)");
  std::vector<std::string> unknown;
  std::ifstream in(file);
  size_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    for (std::sregex_iterator s(line.begin(), line.end(), span_re), end; s != end; ++s) {
      const std::string span = (*s)[1];
      std::smatch command;
      if (!std::regex_match(span, command, command_re)) continue;
      const std::string sub = command[1];
      const std::string rest = command[2];
      if (!options->count(sub)) (*options)[sub] = OptionsOf(sub);
      for (std::sregex_iterator o(rest.begin(), rest.end(), option_re); o != end; ++o) {
        const std::string option = (*o)[2];
        ++*checked;
        if (!options->at(sub).count(option)) {
          unknown.push_back(
              fmt::format("{}:{}: `{}`: {} has no {}", file.string(), number, span, sub, option));
        }
      }
    }
  }
  return unknown;
}

TEST(DocsOptionsTest, EveryOptionTheDocsNameExists) {
  const fs::path root(PARTALIGN_SOURCE_DIR);
  std::vector<fs::path> files{root / "README.md"};
  for (const fs::directory_entry& e : fs::directory_iterator(root / "docs")) {
    if (e.path().extension() == ".md") files.push_back(e.path());
  }
  std::map<std::string, std::set<std::string>> options;
  size_t checked = 0;
  std::vector<std::string> unknown;
  for (const fs::path& f : files) {
    for (std::string& u : UnknownOptions(f, &options, &checked)) unknown.push_back(std::move(u));
  }
  // The docs do name options in backticks: a pattern that matched nothing would pass anything.
  EXPECT_GT(checked, 50u);
  EXPECT_TRUE(unknown.empty()) << [&] {
    std::string all;
    for (const std::string& u : unknown) all += u + "\n";
    return all;
  }();
}

// The check itself: the span the issue found is caught.
TEST(DocsOptionsTest, ANonexistentOptionIsCaught) {
  const fs::path file = fs::temp_directory_path() / fmt::format("docs-options-{}.md", ::getpid());
  {
    std::ofstream out(file);
    out << "the built-in profiles (`probe --profiles`), or `probe --list-profiles`\n";
  }
  std::map<std::string, std::set<std::string>> options;
  size_t checked = 0;
  std::vector<std::string> unknown = UnknownOptions(file, &options, &checked);
  fs::remove(file);
  EXPECT_EQ(checked, 2u);
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_NE(unknown[0].find("`probe --profiles`: probe has no --profiles"), std::string::npos)
      << unknown[0];
}

}  // namespace
}  // namespace partalign
