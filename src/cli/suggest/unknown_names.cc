// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/suggest/unknown_names.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "partalign/suggest/closest_name.h"

namespace partalign {
namespace {

std::vector<const CLI::App*> Commands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

// Every spelling of every named option of `command`: "--output", "-o", ...
std::vector<std::string> OptionNames(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : command.get_options()) {
    for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

const CLI::Option* FindOption(const CLI::App& command, std::string_view name) {
  for (const CLI::Option* opt : command.get_options()) {
    if (name.size() > 2 && name.substr(0, 2) == "--") {
      for (const std::string& l : opt->get_lnames()) {
        if (name.substr(2) == l) return opt;
      }
    } else if (name.size() == 2 && name[0] == '-') {
      for (const std::string& s : opt->get_snames()) {
        if (name.substr(1) == s) return opt;
      }
    }
  }
  return nullptr;
}

// How many of the following arguments an option given without an attached value takes.
int ValuesTaken(const CLI::Option& opt) {
  if (opt.get_expected_max() == 0) return 0;  // a flag
  return std::max(1, opt.get_type_size_min()) * std::max(1, opt.get_expected_min());
}

std::string Suggestion(std::string_view typed, const std::vector<std::string>& names) {
  std::optional<std::string> closest = ClosestName(typed, names);
  return closest ? fmt::format("; did you mean '{}'?", *closest) : "";
}

UnknownName UnknownOption(const CLI::App& app, const CLI::App& command, std::string_view name) {
  const std::string help = fmt::format("partalign {} --help", command.get_name());
  std::string message = fmt::format("{}: unknown option '{}'", command.get_name(), name);
  // Another command's option: say whose it is rather than guess a near name of this one.
  for (const CLI::App* other : Commands(app)) {
    if (other != &command && FindOption(*other, name) != nullptr) {
      return {message + fmt::format(" (an option of 'partalign {}')", other->get_name()), help};
    }
  }
  return {message + Suggestion(name, OptionNames(command)), help};
}

}  // namespace

std::optional<UnknownName> FindUnknownName(const CLI::App& app, int argc, const char* const* argv) {
  if (argc < 2) return std::nullopt;
  const std::string_view first = argv[1];
  if (first.empty() || first[0] == '-') return std::nullopt;  // --help, --version: CLI11's
  const CLI::App* command = nullptr;
  std::vector<std::string> names;
  for (const CLI::App* c : Commands(app)) {
    names.push_back(c->get_name());
    if (c->get_name() == first) command = c;
  }
  if (command == nullptr) {
    return UnknownName{fmt::format("unknown command '{}'{}", first, Suggestion(first, names)),
                       "partalign --help"};
  }
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') continue;  // a positional, or "-" (standard input)
    if (arg[1] == '-') {
      const std::string_view name = arg.substr(0, arg.find('='));
      const CLI::Option* opt = FindOption(*command, name);
      if (opt == nullptr) return UnknownOption(app, *command, name);
      if (name.size() == arg.size()) i += ValuesTaken(*opt);
      continue;
    }
    // Short options, possibly several flags together ("-Jy") or one with its value ("-ofile").
    for (size_t k = 1; k < arg.size(); ++k) {
      const std::string name = fmt::format("-{}", arg[k]);
      const CLI::Option* opt = FindOption(*command, name);
      if (opt == nullptr) return UnknownOption(app, *command, name);
      const int values = ValuesTaken(*opt);
      if (values > 0) {
        if (k + 1 == arg.size()) i += values;
        break;
      }
    }
  }
  return std::nullopt;
}

}  // namespace partalign
