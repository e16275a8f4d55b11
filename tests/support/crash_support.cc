// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/crash_support.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>

#include <nlohmann/json.hpp>

#include "io/table/fdisk_table.h"
#include "support/run_command.h"

extern char** environ;

namespace partalign::test {

std::optional<Places> SfdiskPlaces(const std::string& device) {
  CommandResult r = RunCommand({"sfdisk", "-J", device});
  if (r.exit_code != 0) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  Places places;
  for (const nlohmann::json& p : j["partitiontable"]["partitions"]) {
    std::string node = p["node"];
    uint64_t number = std::stoull(node.substr(device.size() + 1));
    uint64_t start = p["start"], size = p["size"];
    if (p["type"] == "5") continue;  // the extended container: its place never changes here
    places.emplace_back(number, start, start + size - 1);
  }
  std::sort(places.begin(), places.end());
  return places;
}

std::optional<Places> LibfdiskPlaces(const std::string& device, uint64_t sector_size) {
  Result<TableRead> read =
      ReadPartitionTable(device, {.sector_size = sector_size, .probe_contents = false});
  if (!read) return std::nullopt;
  Places places;
  for (const Partition& p : read->table.partitions) {
    if (p.kind == PartitionKind::kExtended) continue;
    places.emplace_back(p.number, p.start_sector, p.end_sector());
  }
  std::sort(places.begin(), places.end());
  return places;
}

// Runs partalign with `env` and SIGKILLs it after `delay` unless it finished before. Returns
// true when the kill landed (the process was still running).
bool RunAndKill(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                std::chrono::microseconds delay) {
  std::vector<std::string> strings{PARTALIGN_BINARY};
  strings.insert(strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return false;
  std::this_thread::sleep_for(delay);
  ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

}  // namespace partalign::test
