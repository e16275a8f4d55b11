// SPDX-License-Identifier: GPL-3.0-or-later
// contrib/completions: the hand-written bash and zsh completions offer every subcommand and
// every option its real --help lists (CLI11 cannot generate completions). A new subcommand or
// option fails this test until its completion line says it too (README, "Contributing").
// Both files load in their real shell, and cmake --install puts them, the binary and the man
// page where the shells and man look.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <sstream>

#include "support/run_command.h"
#include "support/temp_dir.h"

namespace partalign {
namespace {

namespace fs = std::filesystem;
using test::CommandResult;
using test::RunPartalign;

const fs::path kCompletions = fs::path(PARTALIGN_SOURCE_DIR) / "contrib/completions";

// The lines of `help` in the section `title` ("Options:", "Subcommands:"), up to a blank line.
std::vector<std::string> Section(const std::string& help, const std::string& title) {
  std::vector<std::string> lines;
  std::istringstream in(help);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line == title) {
      inside = true;
    } else if (inside && line.empty()) {
      break;
    } else if (inside) {
      lines.push_back(line);
    }
  }
  return lines;
}

std::vector<std::string> Subcommands(const std::string& help) {
  std::vector<std::string> names;
  std::regex name(R"(^  ([a-z][a-z0-9-]*)\s)");
  std::smatch m;
  for (const std::string& line : Section(help, "Subcommands:")) {
    if (std::regex_search(line, m, name)) names.push_back(m[1]);
  }
  return names;
}

// "-o,--output TEXT  ..." -> {"-o", "--output"}.
std::vector<std::string> Options(const std::string& help) {
  std::vector<std::string> options;
  for (const std::string& line : Section(help, "Options:")) {
    if (line.rfind("  -", 0) != 0) continue;
    std::string names = line.substr(2, line.find(' ', 2) - 2);
    std::istringstream parts(names);
    for (std::string option; std::getline(parts, option, ',');) options.push_back(option);
  }
  return options;
}

// The text of the case branch `    NAME)` up to its `;;` in a completion file.
std::string Branch(const std::string& file, const std::string& name) {
  std::regex branch("\\n\\s*" + name + "\\)([\\s\\S]*?);;");
  std::smatch m;
  if (!std::regex_search(file, m, branch)) return "";
  return m[1];
}

bool Mentions(const std::string& text, const std::string& word) {
  std::regex token("(^|[^-A-Za-z0-9_])" + word + "($|[^-A-Za-z0-9_])");
  return std::regex_search(text, token);
}

TEST(CompletionsTest, EverySubcommandAndOptionOfTheRealHelpIsCompleted) {
  const std::string bash = test::ReadFile(kCompletions / "partalign.bash");
  const std::string zsh = test::ReadFile(kCompletions / "_partalign");
  CommandResult top = RunPartalign({"--help"});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  const std::vector<std::string> subcommands = Subcommands(top.out);
  ASSERT_GE(subcommands.size(), 10u) << top.out;
  for (const std::string& option : Options(top.out)) {
    EXPECT_TRUE(Mentions(Branch(bash, "partalign"), option)) << "bash: partalign " << option;
    EXPECT_TRUE(Mentions(Branch(zsh, "partalign"), option)) << "zsh: partalign " << option;
  }
  for (const std::string& sub : subcommands) {
    EXPECT_TRUE(Mentions(Branch(bash, "partalign"), sub)) << "bash lists no subcommand " << sub;
    EXPECT_TRUE(Mentions(Branch(zsh, "partalign"), sub)) << "zsh lists no subcommand " << sub;
    CommandResult help = RunPartalign({sub, "--help"});
    ASSERT_EQ(help.exit_code, 0) << sub << ": " << help.err;
    ASSERT_TRUE(Subcommands(help.out).empty()) << sub << " has subcommands: complete them";
    const std::vector<std::string> options = Options(help.out);
    EXPECT_FALSE(options.empty()) << help.out;
    const std::string bash_branch = Branch(bash, sub);
    const std::string zsh_branch = Branch(zsh, sub);
    EXPECT_NE(bash_branch, "") << "bash has no branch '" << sub << ")'";
    EXPECT_NE(zsh_branch, "") << "zsh has no branch '" << sub << ")'";
    for (const std::string& option : options) {
      EXPECT_TRUE(Mentions(bash_branch, option)) << "bash: partalign " << sub << " " << option;
      EXPECT_TRUE(Mentions(zsh_branch, option)) << "zsh: partalign " << sub << " " << option;
    }
  }
}

// What bash offers after `partalign au<TAB>` and `partalign audit --fo<TAB>`.
std::string BashCompletes(const std::string& line) {
  const std::string script = "source /usr/share/bash-completion/bash_completion; source '" +
                             (kCompletions / "partalign.bash").string() + "'; COMP_LINE='" + line +
                             "'; read -ra COMP_WORDS <<< \"$COMP_LINE\"; "
                             "[[ $COMP_LINE == *' ' ]] && COMP_WORDS+=(''); "
                             "COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMP_POINT=${#COMP_LINE}; "
                             "_partalign; printf '%s\\n' \"${COMPREPLY[@]}\"";
  CommandResult r = test::RunCommand({"bash", "-c", script});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  return r.out;
}

TEST(CompletionsTest, BashCompletesSubcommandsOptionsAndValues) {
  EXPECT_EQ(BashCompletes("partalign au"), "audit\n");
  EXPECT_EQ(BashCompletes("partalign audit --fo"), "--format\n");
  EXPECT_EQ(BashCompletes("partalign audit --format p"), "prometheus\n");
}

TEST(CompletionsTest, ZshLoadsTheCompletionFunction) {
  const std::string script = "autoload -Uz compinit && compinit -u -D && fpath=('" +
                             kCompletions.string() +
                             "' $fpath) && autoload -Uz _partalign && "
                             "functions _partalign >/dev/null && echo loaded";
  CommandResult r = test::RunCommand({"zsh", "-f", "-c", script});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "loaded\n") << r.err;
  CommandResult syntax = test::RunCommand({"zsh", "-n", (kCompletions / "_partalign").string()});
  EXPECT_EQ(syntax.exit_code, 0) << syntax.err;
}

TEST(CompletionsTest, CmakeInstallPutsBinaryManPageAndCompletionsInPlace) {
  test::TempDir dir;
  const fs::path prefix = dir.File("prefix");
  const fs::path build = fs::path(PARTALIGN_BINARY).parent_path();
  std::vector<std::string> install{"cmake", "--install", build.string(), "--prefix",
                                   prefix.string()};
  CommandResult r = test::RunCommand(install);
  ASSERT_EQ(r.exit_code, 0) << test::Describe(install, r);
  for (const char* file :
       {"sbin/partalign", "sbin/partalign-ssd-sim", "share/man/man8/partalign.8",
        "share/bash-completion/completions/partalign", "share/zsh/site-functions/_partalign"}) {
    EXPECT_TRUE(fs::is_regular_file(prefix / file)) << file;
  }
  CommandResult version = test::RunCommand({(prefix / "sbin/partalign").string(), "--version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_NE(version.out.find("partalign"), std::string::npos) << version.out;
  CommandResult man =
      test::RunCommand({"man", "-M", (prefix / "share/man").string(), "-w", "partalign"});
  EXPECT_EQ(man.exit_code, 0) << man.err;
  EXPECT_EQ(man.out, (prefix / "share/man/man8/partalign.8").string() + "\n");
}

}  // namespace
}  // namespace partalign
